"""What a class body runs when the class is made, compared between two versions.

The relative check lets a class differ in the names its body binds (a changed method,
a changed constant the function cannot reach). A statement the same in both versions
binds the same value only if everything before it ran the same way: `a = next(it)` and
`b = next(it)` swapped bind other values with the same text, and a changed statement
with an effect changes what the next one sees. Each pair below was verified before the
running order was compared, and must not be; annotating a class constant
(`x = 1` -> `x: ClassVar[int] = 1`, click 9207bdc) stays verified.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)
FUTURE = "from __future__ import annotations\n\n"

# `f` does not name the class: any object it is given may be an instance of it.
UNREAD = ("import itertools\n\n_it = itertools.count()\n\n\nclass C:\n{body}\n\n"
          "def f(o):\n{f}")
F_A = "    x = o.a\n    return x\n"
F_B = "    return o.a\n"
# The class of the method under review.
OWN = ("import itertools\n\n_it = itertools.count()\n\n\nclass C:\n{body}\n"
       "    def m(self):\n{m}")
M_A = "        x = self.a\n        return x\n"
M_B = "        return self.a\n"


def _relational(before: str, after: str, entry: str) -> bool:
    r = check_pair(before, after, entry, budget=BUDGET)
    return r.verdict is Verdict.VERIFIED and r.method.startswith("relational")


SWAPPED = ("    a = next(_it)\n    b = next(_it)\n", "    b = next(_it)\n    a = next(_it)\n")
WIDENED = ("    b = next(_it)\n    a = next(_it)\n",
           "    b = (next(_it), next(_it))\n    a = next(_it)\n")
DECORATED = ("def run(g):\n    g()\n    return g\n\n\n" + "{}",
             "    @run\n    def h():\n        next(_it)\n    a = next(_it)\n",
             "    @run\n    def h():\n        next(_it)\n        next(_it)\n    a = next(_it)\n")
MOVED = ("    a = 1\n    def g(self, d=a):\n        return d\n    a = 2\n",
         "    a = 1\n    a = 2\n    def g(self, d=a):\n        return d\n")

NOT_VERIFIED = [
    ("unread-class-statements-swapped", UNREAD, SWAPPED, "f"),
    ("unread-class-statement-widened", UNREAD, WIDENED, "f"),
    ("own-class-statements-swapped", OWN, SWAPPED, "C.m"),
    ("own-class-statement-widened", OWN, WIDENED, "C.m"),
]


@pytest.mark.parametrize(("shape", "bodies", "entry"), [p[1:] for p in NOT_VERIFIED],
                         ids=[p[0] for p in NOT_VERIFIED])
def test_a_body_that_runs_otherwise_is_not_verified(shape: str, bodies: tuple[str, str],
                                                    entry: str) -> None:
    code = (F_A, F_B) if entry == "f" else (M_A, M_B)
    key = "f" if entry == "f" else "m"
    before = shape.format(body=bodies[0], **{key: code[0]})
    after = shape.format(body=bodies[1], **{key: code[1]})
    assert not _relational(before, after, entry)


def test_a_decorator_that_calls_a_changed_method_is_not_verified() -> None:
    head, body_a, body_b = DECORATED
    before = head.format(UNREAD.format(body=body_a, f=F_A))
    after = head.format(UNREAD.format(body=body_b, f=F_B))
    assert not _relational(before, after, "f")


def test_a_method_moved_past_a_name_its_default_reads_is_not_verified() -> None:
    before = UNREAD.format(body=MOVED[0], f=F_A).replace("o.a", "o.g()")
    after = UNREAD.format(body=MOVED[1], f=F_B).replace("o.a", "o.g()")
    assert not _relational(before, after, "f")


def test_the_swap_is_a_real_difference() -> None:
    # What the first pair computes, run: `f(C())` is 0 before and 1 after.
    for body, want in ((SWAPPED[0], 0), (SWAPPED[1], 1)):
        space: dict[str, object] = {}
        exec(UNREAD.format(body=body, f=F_A), space)  # our own test text
        f, cls = space["f"], space["C"]
        assert f(cls()) == want  # type: ignore[operator]


# Where a base sees the namespace as the body fills it, the order of plain constants is
# behaviour too: `list(E)` iterates an `Enum`'s members in definition order. In any class,
# `vars(C)` lists the names in the order the body bound them.
ENUM = ("import enum\n\n\nclass E(enum.Enum):\n{body}\n\ndef f(o):\n{f}")
PLAIN = ("class C:\n{body}\n\ndef f(o):\n{f}")
LISTED = ("    x = list({})\n    return x\n", "    return list({})\n")
ORDERED = ("    A = 1\n    B = 2\n", "    B = 2\n    A = 1\n")


@pytest.mark.parametrize(("shape", "listed"), [(ENUM, "o"), (PLAIN, "vars(o)")],
                         ids=["enum-members-swapped", "class-constants-swapped"])
def test_constants_swapped_where_their_order_shows_are_not_verified(shape: str,
                                                                    listed: str) -> None:
    before = shape.format(body=ORDERED[0], f=LISTED[0].format(listed))
    after = shape.format(body=ORDERED[1], f=LISTED[1].format(listed))
    assert not _relational(before, after, "f")
    # (run: the two versions list the class in another order)
    seen = []
    for text in (before, after):
        space: dict[str, object] = {}
        exec(text, space)  # our own test text
        seen.append([str(x) for x in space["f"](space["E" if "enum" in text else "C"])])  # type: ignore[operator]
    assert seen[0] != seen[1]


ANNOTATED = ("    exit_code = 1\n    other = 2\n",
             "    exit_code: t.ClassVar[int] = 1\n    message: str\n    other = 2\n")


def test_annotating_class_constants_is_verified() -> None:
    head = FUTURE + "import typing as t\n"
    for shape, code, entry in ((UNREAD, (F_A, F_B), "f"), (OWN, (M_A, M_B), "C.m")):
        key = "f" if entry == "f" else "m"
        before = head + shape.format(body=ANNOTATED[0], **{key: code[0]})
        after = head + shape.format(body=ANNOTATED[1], **{key: code[1]})
        assert _relational(before, after, entry), entry


# An exception class whose base writes `self.message`: a builtin base's members are known
# (`dir(Exception)`), so the write hides none of them (click's `exceptions.py`).
EXC = ("class Base(Exception):\n    def __init__(self, message):\n"
       "        super().__init__(message)\n        self.message = message\n\n\n"
       "class Sub(Base):\n    def show(self):\n{body}")


def test_a_builtin_base_does_not_hide_every_attribute() -> None:
    before = EXC.format(body="        text = self.message\n        return [text]\n")
    after = EXC.format(body="        return [self.message]\n")
    assert _relational(before, after, "Sub.show")
    # Writing a member `Exception` has (`args`) is a write that may change what it reads.
    shadow = "\n\ndef poke(e):\n    e.args = ()\n"
    assert not _relational(before.replace("self.message", "self.args") + shadow,
                           after.replace("self.message", "self.args") + shadow, "Sub.show")


# A class the function does not name whose bare annotations changed: its objects (the class
# itself, handed to `f`) show them to code that reads annotations or a whole namespace.
NOTES = (FUTURE + "import typing\n\n\nclass C:\n    x: {note}\n\n\ndef f(o):\n{f}")
NOTE_READERS = [
    ("an-attribute", "o.__annotations__"),
    ("a-string", "getattr(o, '__annotations__')"),
    ("type-hints", "typing.get_type_hints(o)"),
    ("a-namespace", "dict(vars(o))"),
]


@pytest.mark.parametrize("read", [r for _, r in NOTE_READERS], ids=[n for n, _ in NOTE_READERS])
def test_annotations_the_function_can_read_are_not_unread(read: str) -> None:
    before = NOTES.format(note="int", f=f"    y = {read}\n    return y\n")
    after = NOTES.format(note="str", f=f"    return {read}\n")
    assert not _relational(before, after, "f")
    space: dict[str, object] = {}
    shown = []
    for text in (before, after):
        exec(text, space)  # our own test text
        shown.append(str(space["f"](space["C"])))  # type: ignore[operator]
    assert shown[0] != shown[1]


# `abc`'s `ABC` sees the namespace only once it is full, and keeps of it which names are
# abstract: a plain helper added to such a class does not change how it is made (click
# 8f30085 added `Parameter._hide_unset`, a static method, to `class Parameter(ABC)`).
ABSTRACT = (FUTURE + "from abc import ABC, abstractmethod\n\n\nclass P(ABC):\n{body}\n"
            "    def m(self):\n{m}\n\nclass Q(P):\n    def g(self):\n        return 1\n")
HELPER = ("    a = 1\n",
          "    a = 1\n\n    @staticmethod\n    def _hide(v):\n        return None if v is None "
          "else v\n\n    @property\n    def shown(self) -> int:\n        return 2\n")


def test_a_helper_added_to_an_abstract_base_keeps_the_proof() -> None:
    # (`print` is no model's: the relational check decides)
    before = ABSTRACT.format(body=HELPER[0], m=M_A.replace("return x", "print(x)"))
    after = ABSTRACT.format(body=HELPER[1], m=M_B.replace("return self.a", "print(self.a)"))
    assert _relational(before, after, "P.m")


# An abstract `g` in the base: the subclass that gains `g` can be made after and not
# before, though `f` names neither the class nor `g`. A plain mixin `M` (no `ABC` among its
# bases) that gains `g` does the same to `Q(M, P)`, which finds `g` in `M` first.
ABSTRACT_BASE = (FUTURE + "from abc import ABC, abstractmethod\n\n\nclass P(ABC):\n"
                 "    @abstractmethod\n    def g(self):\n        ...\n\n\n")
IMPLEMENTED = {
    "a-subclass": ABSTRACT_BASE + "class Q(P):\n{body}\n\ndef f(o):\n{f}",
    "a-mixin": ABSTRACT_BASE + "class M:\n{body}\n\nclass Q(M, P):\n    pass\n\n\n"
               "def f(o):\n{f}",
}
MADE = ("    x = type(o())\n    return x.__name__\n", "    return type(o()).__name__\n")


@pytest.mark.parametrize("where", sorted(IMPLEMENTED))
def test_a_method_that_makes_a_class_concrete_is_not_unreached(where: str) -> None:
    bodies = ("    k = 1\n", "    k = 1\n\n    def g(self):\n        return 1\n")
    before = IMPLEMENTED[where].format(body=bodies[0], f=MADE[0])
    after = IMPLEMENTED[where].format(body=bodies[1], f=MADE[1])
    assert not _relational(before, after, "f")
    # (run: `f(Q)` raises TypeError before, and returns 'Q' after)
    space: dict[str, object] = {}
    exec(before, space)  # our own test text
    with pytest.raises(TypeError):
        space["f"](space["Q"])  # type: ignore[operator]
    exec(after, space)  # our own test text
    assert space["f"](space["Q"]) == "Q"  # type: ignore[operator]


# `dir` lists names only: annotations that changed are seen by it only where one version
# has some and the other none; "env vars" and "user dir" in prose read nothing.
LISTED_NAMES = (FUTURE + "{head}class C:\n{body}\n\ndef listing(o):\n    return dir(o)\n\n\n"
                "def f(o):\n    \"Look in the user dir and env vars.\"\n{f}")


def _notes(first: str, second: str, head: str = "") -> list[str]:
    return [LISTED_NAMES.format(head=head, body=b, f=f) for b, f in
            zip((first, second), (F_A, F_B), strict=True)]


def test_dir_sees_annotations_only_where_they_appear_or_go() -> None:
    assert _relational(*_notes("    x: int\n", "    x: str\n"), "f")
    gained = _notes("    k = 1\n", "    k = 1\n    x: int\n")
    assert not _relational(*gained, "f")
    shown = []
    for text in gained:
        space: dict[str, object] = {}
        exec(text, space)  # our own test text
        shown.append("__annotations__" in space["listing"](space["C"]))  # type: ignore[operator]
    assert shown == [False, True]


def test_vars_fetched_by_name_reads_the_namespace() -> None:
    prose = _notes("    x: int\n", "    x: str\n")
    assert _relational(*[t.replace("dir(o)", "0") for t in prose], "f")
    fetched = _notes("    x: int\n", "    x: str\n", head="import builtins\n\n\n")
    fetched = [t.replace("dir(o)", "getattr(builtins, 'vars')(o)") for t in fetched]
    assert not _relational(*fetched, "f")


def test_a_class_registered_with_an_abstract_base_is_not_the_same_environment() -> None:
    # `P.register(int)` binds no name; `isinstance(3, P)` is False before and True after.
    shape = (FUTURE + "from abc import ABC\n\n\nclass P(ABC):\n    pass\n\n\n{register}"
             "def f(x):\n{f}")
    before = shape.format(register="", f="    y = isinstance(x, P)\n    print(y)\n")
    after = shape.format(register="P.register(int)\n\n\n",
                         f="    print(isinstance(x, P))\n")
    assert not _relational(before, after, "f")
