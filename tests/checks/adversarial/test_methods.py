"""Adversarial pairs: methods, with ``self`` built by calling its class.

A method is refuted on an object its class really builds (``Point(3).move(2)``), never on
a value of the wrong type; the object's state after the call (its attributes and slots,
read without its ``__eq__``, ``__repr__`` or properties) and data its class holds are part
of the behaviour; a constructor that differs is a difference of the class, not of the
method.
"""

from __future__ import annotations

import pytest

from veribot.bot.render import describe_call
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_a_differing_method_is_refuted_on_a_built_object": {
        "staticmethod-on-the-class",
        "property-read",
        "class-list-shared-by-all-instances",
        "state-through-user-eq",
        "slots",
        "stored-argument-mutated-through-the-alias",
        "dataclass-fields",
    },
    "test_a_simple_method_is_proven": {
        "write-order-without-reads",
        "class-level-default-read",
        "augmented-write",
        "inline-a-plain-method",
    },
}

BUDGET = Budget(timeout_s=8)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out (it took all but a
# few milliseconds of each of those checks' seconds).
NO_SEARCH = Budget(timeout_s=8, search=False)


def _cls(*lines: str, head: str = "class C:") -> str:
    return head + "\n" + "".join(f"    {line}\n" for line in lines)


INIT = ("def __init__(self, x: int) -> None:", "    self.x = x")

# (name, before, after, entry, what the counterexample's call must start with)
DIFFERING: list[tuple[str, str, str, str, str]] = [
    ("state-through-user-eq",
     _cls(*INIT, "def __eq__(self, other): return True", "def __repr__(self): return 'C'",
          "def bump(self, d: int) -> None:", "    self.x += d"),
     _cls(*INIT, "def __eq__(self, other): return True", "def __repr__(self): return 'C'",
          "def bump(self, d: int) -> None:", "    self.x += d + 1"),
     "C.bump", "C("),
    ("slots",
     _cls("__slots__ = ('x', 'y')", *INIT, "def put(self, v: int) -> int:",
          "    self.y = v", "    return 0"),
     _cls("__slots__ = ('x', 'y')", *INIT, "def put(self, v: int) -> int:",
          "    self.y = v + 1", "    return 0"),
     "C.put", "C("),
    ("class-list-shared-by-all-instances",
     _cls("items = []", *INIT, "def add(self, v: int) -> None:", "    self.items.append(v)"),
     _cls("items = []", *INIT, "def add(self, v: int) -> None:", "    pass"),
     "C.add", "C("),
    ("class-attribute-vs-instance-attribute",
     _cls("count = 0", "def hit(self) -> int:", "    self.count += 1", "    return 0"),
     _cls("count = 0", "def hit(self) -> int:", "    type(self).count += 1", "    return 0"),
     "C.hit", "C()"),
    ("stored-argument-mutated-through-the-alias",
     _cls("def keep(self, xs: list[int]) -> None:", "    self.xs = xs", "    self.xs.append(1)"),
     _cls("def keep(self, xs: list[int]) -> None:", "    self.xs = list(xs)",
          "    self.xs.append(1)"),
     "C.keep", "C()"),
    ("property-read",
     _cls(*INIT, "@property", "def double(self) -> int:", "    return self.x * 2"),
     _cls(*INIT, "@property", "def double(self) -> int:", "    return self.x + self.x + 1"),
     "C.double", "C("),
    ("constructor-is-the-unit",
     _cls("def __init__(self, x: int) -> None:", "    self.x = abs(x)"),
     _cls("def __init__(self, x: int) -> None:", "    self.x = x"),
     "C.__init__", "C(-"),
    ("dataclass-fields",
     "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: str = 'a'\n"
     "    def key(self) -> str:\n        return self.y * self.x\n",
     "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: str = 'a'\n"
     "    def key(self) -> str:\n        return self.y * abs(self.x)\n",
     "P.key", "P("),
    ("init-calls-an-overridable-method",
     _cls("def __init__(self, x: int) -> None:", "    self.x = self.norm(x)",
          "def norm(self, v: int) -> int:", "    return v % 7",
          "def get(self) -> int:", "    return self.x"),
     _cls("def __init__(self, x: int) -> None:", "    self.x = self.norm(x)",
          "def norm(self, v: int) -> int:", "    return v % 7",
          "def get(self) -> int:", "    return self.x + 0 * self.x - (self.x > 5)"),
     "C.get", "C("),
    ("staticmethod-on-the-class",
     _cls("@staticmethod", "def f(v: int) -> int:", "    return v"),
     _cls("@staticmethod", "def f(v: int) -> int:", "    return v if v < 9 else 0"),
     "C.f", "f("),
]


@pytest.mark.parametrize(("before", "after", "entry", "call"),
                         [d[1:] for d in DIFFERING], ids=[d[0] for d in DIFFERING])
def test_a_differing_method_is_refuted_on_a_built_object(
        before: str, after: str, entry: str, call: str) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert describe_call(entry, result.counterexample).startswith(call)


def test_a_constructor_that_differs_is_not_a_difference_of_the_method() -> None:
    before = _cls("def __init__(self, x: int) -> None:", "    if x < 0:",
                  "        raise ValueError", "    self.x = x",
                  "def get(self) -> int:", "    return self.x")
    after = _cls("def __init__(self, x: int) -> None:", "    self.x = x",
                 "def get(self) -> int:", "    return self.x")
    assert check_pair(before, after, "C.get", budget=BUDGET).verdict is not Verdict.REFUTED
    assert check_pair(before, after, "C.__init__", budget=BUDGET).verdict is Verdict.REFUTED


def test_an_object_of_an_unbuildable_class_is_not_searched() -> None:
    # The constructor needs a value of a type the search cannot generate (a generator;
    # a `Callable` it can: a constant lambda).
    init = "def __init__(self, cb: 'Generator[int, None, None]') -> None:"
    before = _cls(init, "    self.cb = cb", "def get(self, v: int) -> int:", "    return v")
    after = _cls(init, "    self.cb = cb", "def get(self, v: int) -> int:", "    return v + 1")
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert any("objects are not built" in n for n in result.notes), result.notes


EQUIVALENT: list[tuple[str, str, str, str]] = [
    ("extract-a-variable",
     _cls(*INIT, "def move(self, d: int) -> int:", "    self.x = self.x + d", "    return self.x"),
     _cls(*INIT, "def move(self, d: int) -> int:", "    new = self.x + d", "    self.x = new",
          "    return new"),
     "C.move"),
    ("augmented-assignment",
     _cls(*INIT, "def move(self, d: int) -> None:", "    self.x = self.x + d"),
     _cls(*INIT, "def move(self, d: int) -> None:", "    self.x += d"),
     "C.move"),
    # Read through the class, the attribute is the same; only `vars()` tells them apart.
    ("attribute-becomes-a-property",
     _cls(*INIT, "    self.positive = x > 0"),
     _cls(*INIT, "@property", "def positive(self) -> bool:", "    return self.x > 0"),
     "C.__init__"),
]


@pytest.mark.parametrize(("before", "after", "entry"), [e[1:] for e in EQUIVALENT],
                         ids=[e[0] for e in EQUIVALENT])
def test_an_equivalent_method_is_not_refuted(before: str, after: str, entry: str) -> None:
    assert check_pair(before, after, entry, budget=BUDGET).verdict is not Verdict.REFUTED


# The model: self's attributes of declared types, the state after the call compared.
TYPED = ("class C:", "    limit: int = 10", "    kind = 'plain'",
         "    def __init__(self, x: int, items: list[int]) -> None:", "        self.x = x",
         "        self.items = items",
         "    def shift(self, d: int) -> int:", "        return self.x + d")


def _typed(*method: str, tail: str = "") -> str:
    return "\n".join(TYPED) + "\n" + "".join(f"    {line}\n" for line in method) + tail


PROVEN: list[tuple[str, str, str]] = [
    ("extract-a-local",
     _typed("def m(self, d: int) -> int:", "    return self.x + d"),
     _typed("def m(self, d: int) -> int:", "    y = self.x", "    return y + d")),
    ("augmented-write",
     _typed("def m(self, d: int) -> None:", "    self.x = self.x + d"),
     _typed("def m(self, d: int) -> None:", "    self.x += d")),
    ("inline-a-plain-method",
     _typed("def m(self, d: int) -> int:", "    return self.shift(d) * 2"),
     _typed("def m(self, d: int) -> int:", "    return (self.x + d) * 2")),
    ("class-level-default-read",
     _typed("def m(self) -> bool:", "    return self.x > self.limit"),
     _typed("def m(self) -> bool:", "    return not self.x <= self.limit")),
    ("class-constant-read",
     _typed("def m(self) -> str:", "    return self.kind + '!'"),
     _typed("def m(self) -> str:", "    k = self.kind", "    return k + '!'")),
    ("write-order-without-reads",
     _typed("def m(self, d: int) -> None:", "    self.x = d", "    self.limit = d + 1"),
     _typed("def m(self, d: int) -> None:", "    self.limit = d + 1", "    self.x = d")),
]


@pytest.mark.parametrize(("before", "after"), [p[1:] for p in PROVEN],
                         ids=[p[0] for p in PROVEN])
def test_a_simple_method_is_proven(before: str, after: str) -> None:
    result = check_pair(before, after, "C.m", budget=Budget(timeout_s=20))
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("exactly `C`" in a for a in result.assumptions), result.assumptions


NOT_PROVEN: list[tuple[str, str, str]] = [
    # The state after the call differs, also when both raise.
    ("write-before-a-raise",
     _typed("def m(self, d: int) -> None:", "    self.x = d", "    if d > 3:",
            "        raise ValueError"),
     _typed("def m(self, d: int) -> None:", "    if d > 3:", "        raise ValueError",
            "    self.x = d")),
    ("list-attribute-mutated",
     _typed("def m(self, d: int) -> None:", "    self.items.append(d)"),
     _typed("def m(self, d: int) -> None:", "    self.items.insert(0, d)")),
    ("a-helper-a-subclass-overrides",
     _typed("def m(self, d: int) -> int:", "    return self.shift(d)",
            tail="class D(C):\n    def shift(self, d: int) -> int:\n        return 0\n"),
     _typed("def m(self, d: int) -> int:", "    return self.x + d",
            tail="class D(C):\n    def shift(self, d: int) -> int:\n        return 0\n")),
    ("method-replaced-at-import",
     _typed("def m(self, d: int) -> int:", "    return self.x + d",
            tail="C.m = lambda self, d: self.x + d + (d == 12345)\n"),
     _typed("def m(self, d: int) -> int:", "    y = self.x", "    return y + d")),
    ("default-of-another-type",
     "class C:\n    def __init__(self, x: int = None) -> None:\n        self.x = x\n"
     "    def m(self) -> bool:\n        return self.x == 0 or self.x != 0\n",
     "class C:\n    def __init__(self, x: int = None) -> None:\n        self.x = x\n"
     "    def m(self) -> bool:\n        return True\n"),
    ("getattr-hook",
     "class C:\n    x: int\n    def __getattr__(self, n): return 0\n"
     "    def m(self) -> int:\n        return self.x\n",
     "class C:\n    x: int\n    def __getattr__(self, n): return 0\n"
     "    def m(self) -> int:\n        return self.x + 0\n"),
    ("property-shadows-the-attribute",
     "class C:\n    def __init__(self, x: int) -> None:\n        self._x = x\n"
     "    @property\n    def x(self) -> int:\n        return self._x + 1\n"
     "    def m(self) -> int:\n        return self.x\n",
     "class C:\n    def __init__(self, x: int) -> None:\n        self._x = x\n"
     "    @property\n    def x(self) -> int:\n        return self._x + 1\n"
     "    def m(self) -> int:\n        return self._x\n"),
    # Equal on objects the class builds, but an instance may shadow the constant.
    ("class-constant-taken-for-its-value",
     _typed("def m(self) -> str:", "    return self.kind + '!'"),
     _typed("def m(self) -> str:", "    return 'plain!'")),
    ("self-as-a-value",
     _typed("def m(self) -> int:", "    return len([self])"),
     _typed("def m(self) -> int:", "    return 1")),
    # Another method rewrites the class constant the method reads: `C().bump()` first.
    ("class-constant-written-through-type-of-self",
     "class C:\n    k = 1\n    def m(self, x: int) -> int:\n        return x + self.k\n"
     "    def bump(self) -> None:\n        type(self).k = 5\n",
     "class C:\n    k = 1\n    def m(self, x: int) -> int:\n        return self.k + x\n"
     "    def bump(self) -> None:\n        type(self).k = 6\n"),
    ("class-constant-written-by-a-helper",
     "class C:\n    k = 1\n    def m(self, x: int) -> int:\n        return x + self.k\n"
     "def g(c: type) -> None:\n    c.k = 5\n",
     "class C:\n    k = 1\n    def m(self, x: int) -> int:\n        return self.k + x\n"
     "def g(c: type) -> None:\n    c.k = 6\n"),
]


@pytest.mark.parametrize(("before", "after"), [p[1:] for p in NOT_PROVEN],
                         ids=[p[0] for p in NOT_PROVEN])
def test_a_method_the_model_must_not_prove(before: str, after: str) -> None:
    assert check_pair(before, after, "C.m", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


def test_the_aliasing_of_list_attributes_is_an_assumption() -> None:
    before = _typed("def m(self, xs: list[int]) -> None:", "    self.items.append(1)",
                    "    xs.append(2)")
    after = _typed("def m(self, xs: list[int]) -> None:", "    xs.append(2)",
                   "    self.items.append(1)")
    result = check_pair(before, after, "C.m", budget=Budget(timeout_s=20))
    # Verified only because the verdict assumes `self.items is not xs`.
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("distinct" in a and "attributes" in a for a in result.assumptions)


def test_an_added_attribute_is_neither_a_difference_nor_the_same() -> None:
    # The after version keeps a cache the before version lacked; nothing else changed.
    before = _cls(*INIT, "def get(self, d: int) -> int:", "    return self.x + d")
    after = _cls(*INIT, "def get(self, d: int) -> int:", "    self.cache = d",
                 "    return self.x + d")
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE, result
    init_after = _cls("def __init__(self, x: int) -> None:", "    self.x = x",
                      "    self.cache = None")
    result = check_pair(_cls(*INIT), init_after, "C.__init__", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE, result


def test_a_removed_or_changed_attribute_is_a_difference() -> None:
    before = _cls(*INIT, "def get(self, d: int) -> int:", "    self.cache = d",
                  "    return self.x + d")
    after = _cls(*INIT, "def get(self, d: int) -> int:", "    return self.x + d")
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result
    after = _cls(*INIT, "def get(self, d: int) -> int:", "    self.cache = d + 1",
                 "    self.extra = 0", "    return self.x + d")
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result


# Each was verified by the model alone: it took every attribute it reads as present, of
# the type its first assignment in `__init__` gave, and list attributes as distinct.
def _hoist(*head: str) -> tuple[str, str]:
    """`self.x` read only where d > 0, against read at once: they differ where the object
    has no `x` (AttributeError)."""
    return (_cls(*head, "def get(self, d: int) -> int:", "    if d > 0:",
                 "        return self.x", "    return 0"),
            _cls(*head, "def get(self, d: int) -> int:", "    v = self.x",
                 "    return v if d > 0 else 0"))


PROOF_ONLY = Budget(timeout_s=8, search=False, execute=False)
MODEL_WRONG: list[tuple[str, str, str, str]] = [
    ("set-only-on-some-paths",
     *_hoist("x: int", "def __init__(self, a: int) -> None:", "    if a > 0:",
             "        self.x = a"), "C(0).get(0)"),
    ("annotated-in-the-class-never-set", *_hoist("x: int"), "C().get(0)"),
    ("set-then-deleted",
     *_hoist("def __init__(self, x: int) -> None:", "    self.x = x", "    del self.x"),
     "C(1).get(0)"),
    ("set-after-an-early-return",
     *_hoist("def __init__(self, x: int) -> None:", "    if x < 0:", "        return",
             "    self.x = x"), "C(-1).get(0)"),
    ("assigned-again-with-another-type",
     _cls("def __init__(self, x: int) -> None:", "    self.x = x", "    self.x = str(x)",
          "def get(self) -> int:", "    return self.x * 0"),
     _cls("def __init__(self, x: int) -> None:", "    self.x = x", "    self.x = str(x)",
          "def get(self) -> int:", "    return 0"), "C(1).get()"),
    ("annotation-not-of-the-value",
     _cls("def __init__(self, x: int) -> None:", "    self.y: int = str(x)",
          "def get(self) -> int:", "    return self.y * 0"),
     _cls("def __init__(self, x: int) -> None:", "    self.y: int = str(x)",
          "def get(self) -> int:", "    return 0"), "C(1).get()"),
    ("two-list-attributes-one-list",
     _cls("def __init__(self, xs: list[int]) -> None:", "    self.a = xs", "    self.b = xs",
          "def get(self) -> int:", "    self.a.append(1)", "    return len(self.b)"),
     _cls("def __init__(self, xs: list[int]) -> None:", "    self.a = xs", "    self.b = xs",
          "def get(self) -> int:", "    n = len(self.b)", "    self.a.append(1)",
          "    return n"), "C([]).get()"),
    ("a-default-not-of-the-declared-type",
     _cls("x: int", "def __init__(self, x: int = None) -> None:", "    self.x = x",
          "def get(self) -> int:", "    try:", "        return self.x + 1",
          "    except TypeError:", "        return 0"),
     _cls("x: int", "def __init__(self, x: int = None) -> None:", "    self.x = x",
          "def get(self) -> int:", "    return self.x + 1"), "C().get()"),
    ("an-instance-attribute-hides-a-helper-method",
     "def other() -> int:\n    return 99\n\n\n"
     + _cls("def __init__(self, x: int) -> None:", "    self.x = x", "    self.helper = other",
            "def helper(self) -> int:", "    return self.x",
            "def get(self) -> int:", "    return self.helper()"),
     "def other() -> int:\n    return 99\n\n\n"
     + _cls("def __init__(self, x: int) -> None:", "    self.x = x", "    self.helper = other",
            "def helper(self) -> int:", "    return self.x",
            "def get(self) -> int:", "    return self.x"), "C(1).get()"),
    ("class-attribute-copied-onto-the-instance",
     _cls("count = 0", "def get(self) -> int:", "    self.count = self.count", "    return 0"),
     _cls("count = 0", "def get(self) -> int:", "    return 0"),
     "(lambda c: (c.get(), vars(c)))(C())"),
]


def _cpython(src: str, call: str) -> object:
    namespace: dict[str, object] = {}
    exec(compile(src, "<pair>", "exec"), namespace)
    try:
        return eval(call, namespace)
    except (AttributeError, TypeError) as exc:
        return type(exc)


@pytest.mark.parametrize(("before", "after", "call"), [m[1:] for m in MODEL_WRONG],
                         ids=[m[0] for m in MODEL_WRONG])
def test_what_building_the_object_leaves_is_not_assumed(
        before: str, after: str, call: str) -> None:
    assert _cpython(before, call) != _cpython(after, call)
    result = check_pair(before, after, "C.get", budget=PROOF_ONLY)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    assert result.reason.startswith("unsupported"), result.reason
