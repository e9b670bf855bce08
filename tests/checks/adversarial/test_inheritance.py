"""Methods of classes with bases: members found on a base are read like the class's own.

A base is read when it is a class of the same module (or ``object``, ``abc.ABC``,
``typing.Generic[...]``), in Python's own method resolution order (C3): ``self.h()``
finds the first class of that order defining ``h``, and ``super().h()`` in a method of
``K`` the first after ``K`` in the order of the object's class, not of ``K``. Each pair
that must not verify is code a user could write; where the right order makes two
versions equal, the pair must verify, and where a naive order would, it must not.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyobject
from veribot.checks.lang.pyvalues import Unsupported
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out (it took all but a
# few milliseconds of each of those checks' seconds).
NO_SEARCH = Budget(timeout_s=8, search=False)

BASE = (
    "class Base:\n"
    "    def __init__(self, x: int) -> None:\n"
    "        self.x = x\n"
    "    def helper(self) -> int:\n"
    "        return self.x + 1\n"
)
SUB = (
    "class Sub(Base):\n"
    "    def __init__(self, x: int, y: int) -> None:\n"
    "        super().__init__(x)\n"
    "        self.y = y\n"
)


def _get(body: str) -> str:
    return f"    def get(self) -> int:\n        return {body}\n"


EQUIVALENT: list[tuple[str, str, str, str]] = [
    ("inherited-method-and-attribute", BASE + SUB + _get("self.helper() * 2"),
     BASE + SUB + _get("2 * self.helper()"), "Sub.get"),
    ("super-call", BASE + SUB + "    def helper(self) -> int:\n"
     "        return super().helper() + self.y\n" + _get("self.helper() * 2"),
     BASE + SUB + "    def helper(self) -> int:\n        return super().helper() + self.y\n"
     + _get("self.helper() + self.helper()"), "Sub.get"),
    ("generic-and-abc-bases",
     "import abc\nimport typing as t\nT = t.TypeVar('T')\n"
     "class P(t.Generic[T], abc.ABC):\n    def __init__(self, n: int) -> None:\n"
     "        self.n = n\nclass Q(P[int]):\n    def get(self, k: int) -> int:\n"
     "        return self.n + k\n",
     "import abc\nimport typing as t\nT = t.TypeVar('T')\n"
     "class P(t.Generic[T], abc.ABC):\n    def __init__(self, n: int) -> None:\n"
     "        self.n = n\nclass Q(P[int]):\n    def get(self, k: int) -> int:\n"
     "        return k + self.n\n", "Q.get"),
    ("two-levels",
     BASE + SUB + "class Leaf(Sub):\n" + _get("self.helper() - self.y"),
     BASE + SUB + "class Leaf(Sub):\n" + _get("-self.y + self.helper()"), "Leaf.get"),
]


@pytest.mark.parametrize(("before", "after", "entry"),
                         [(b, a, e) for _, b, a, e in EQUIVALENT],
                         ids=[n for n, _, _, _ in EQUIVALENT])
def test_a_method_reading_its_bases_is_proven(before: str, after: str, entry: str) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("method resolution order" in a for a in result.assumptions)


# C3 puts `C` before `A` for an object of `D`: `h` is `C.h`, and `super()` in `B.h` is
# `C.h` too. A depth-first reading would take `A.h` for both.
DIAMOND = (
    "class A:\n    def h(self) -> int:\n        return 1\n"
    "class B(A):\n    def g(self) -> int:\n        return super().h() + 10\n"
    "class C(A):\n    def h(self) -> int:\n        return 100\n"
    "class D(B, C):\n"
)


@pytest.mark.parametrize(("body", "equal", "naive"), [
    ("self.h()", "100", "1"), ("self.g()", "110", "11"),
], ids=["inherited", "super-in-a-base"])
def test_the_method_resolution_order_is_c3(body: str, equal: str, naive: str) -> None:
    same = check_pair(DIAMOND + _get(body), DIAMOND + _get(equal), "D.get", budget=BUDGET)
    assert same.verdict is Verdict.VERIFIED, same.detail
    wrong = check_pair(DIAMOND + _get(body), DIAMOND + _get(naive), "D.get",
                       budget=NO_SEARCH)
    assert wrong.verdict is not Verdict.VERIFIED, wrong.detail


def test_a_changed_base_method_is_a_difference() -> None:
    before = BASE + SUB + _get("self.helper()")
    after = BASE.replace("self.x + 1", "self.x + 2") + SUB + _get("self.helper()")
    result = check_pair(before, after, "Sub.get", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail


# (name, before, after): each differs for some object (or in how the class is built), or
# reads a base the model cannot; none may verify.
HELPER_1 = _get("self.helper()")
ONE = _get("1")
REFUSED: list[tuple[str, str, str]] = [
    ("base-from-another-module", "from collections import UserDict\nclass Q(UserDict):\n"
     "    def helper(self) -> int:\n        return 1\n" + HELPER_1,
     "from collections import UserDict\nclass Q(UserDict):\n"
     "    def helper(self) -> int:\n        return 1\n" + ONE),
    ("base-property-of-the-name",
     "class Base:\n    @property\n    def helper(self) -> int:\n        return 2\n"
     "class Q(Base):\n" + HELPER_1,
     "class Base:\n    @property\n    def helper(self) -> int:\n        return 2\n"
     "class Q(Base):\n" + ONE),
    ("base-constructor-hides-the-method",
     "class Base:\n    def __init__(self) -> None:\n        self.helper = lambda: 2\n"
     "class Q(Base):\n    def helper(self) -> int:\n        return 1\n" + HELPER_1,
     "class Base:\n    def __init__(self) -> None:\n        self.helper = lambda: 2\n"
     "class Q(Base):\n    def helper(self) -> int:\n        return 1\n" + ONE),
    ("base-with-a-metaclass",
     "class M(type):\n    pass\nclass Base(metaclass=M):\n    def helper(self) -> int:\n"
     "        return 1\nclass Q(Base):\n" + HELPER_1,
     "class M(type):\n    pass\nclass Base(metaclass=M):\n    def helper(self) -> int:\n"
     "        return 1\nclass Q(Base):\n" + ONE),
    ("base-with-init-subclass",
     "class Base:\n    def __init_subclass__(cls) -> None:\n        cls.helper = lambda s: 2\n"
     "    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + HELPER_1,
     "class Base:\n    def __init_subclass__(cls) -> None:\n        cls.helper = lambda s: 2\n"
     "    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + ONE),
    ("base-with-getattr",
     "class Base:\n    def __getattr__(self, name: str) -> object:\n        return 5\n"
     "    def __init__(self) -> None:\n        self.n = 1\nclass Q(Base):\n"
     "    def get(self) -> object:\n        return self.n\n",
     "class Base:\n    def __getattr__(self, name: str) -> object:\n        return 5\n"
     "    def __init__(self) -> None:\n        self.n = 1\nclass Q(Base):\n"
     "    def get(self) -> object:\n        return 1\n"),
    ("decorated-base",
     "import functools\ndef deco(c):\n    c.helper = lambda s: 2\n    return c\n@deco\n"
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + HELPER_1,
     "import functools\ndef deco(c):\n    c.helper = lambda s: 2\n    return c\n@deco\n"
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + ONE),
    ("base-patched-in-a-helper",
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + HELPER_1
     + "def patch() -> None:\n    Base.helper = lambda s: 2\n",
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + ONE
     + "def patch() -> None:\n    Base.helper = lambda s: 2\n"),
    ("base-bound-twice",
     "class Base:\n    def helper(self) -> int:\n        return 1\n"
     "if True:\n    class Base:\n        def helper(self) -> int:\n            return 2\n"
     "class Q(Base):\n" + HELPER_1,
     "class Base:\n    def helper(self) -> int:\n        return 1\n"
     "if True:\n    class Base:\n        def helper(self) -> int:\n            return 2\n"
     "class Q(Base):\n" + ONE),
    ("super-with-arguments",
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n"
     + _get("super(Base, self).helper()"),
     "class Base:\n    def helper(self) -> int:\n        return 1\nclass Q(Base):\n" + ONE),
    ("attribute-of-another-type-set-by-the-subclass",
     "class Base:\n    def __init__(self, x: int) -> None:\n        self.x = x\n"
     "class Q(Base):\n    def __init__(self) -> None:\n        self.x = 'a'\n"
     "    def get(self) -> object:\n        return self.x * 2\n",
     "class Base:\n    def __init__(self, x: int) -> None:\n        self.x = x\n"
     "class Q(Base):\n    def __init__(self) -> None:\n        self.x = 'a'\n"
     "    def get(self) -> object:\n        return self.x + self.x\n"),
    ("abc-internals", "import abc\nclass Base(abc.ABC):\n    pass\nclass Q(Base):\n"
     "    def get(self) -> object:\n        return self._abc_impl\n",
     "import abc\nclass Base(abc.ABC):\n    pass\nclass Q(Base):\n"
     "    def get(self) -> object:\n        return None\n"),
    ("base-init-not-called",
     "class Base:\n    def __init__(self, x: int) -> None:\n        self.x = x\n"
     "class Q(Base):\n    def __init__(self) -> None:\n        pass\n" + _get("self.x"),
     "class Base:\n    def __init__(self, x: int) -> None:\n        self.x = x\n"
     "class Q(Base):\n    def __init__(self) -> None:\n        pass\n" + _get("0")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in REFUSED],
                         ids=[n for n, _, _ in REFUSED])
def test_a_hierarchy_that_may_change_the_method_never_verifies(before: str,
                                                                after: str) -> None:
    result = check_pair(before, after, "Q.get", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    assert "tripwire" not in result.method, "the model proved a pair that differs"


OVERLOADED = (
    "import typing as t\n"
    "class Base:\n"
    "    def __init__(self, x: int) -> None:\n        self.x = x\n"
    "    @t.overload\n    def scale(self, k: int) -> int: ...\n"
    "    @t.overload\n    def scale(self, k: bool) -> int: ...\n"
    "    def scale(self, k: int) -> int:\n        return self.x * k\n"
    "class Q(Base):\n"
)


def test_an_overloaded_base_method_is_its_last_definition() -> None:
    before = OVERLOADED + "    def get(self, k: int) -> int:\n        return super().scale(k) + 1\n"
    after = OVERLOADED + "    def get(self, k: int) -> int:\n        return 1 + self.scale(k)\n"
    result = check_pair(before, after, "Q.get", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_an_overload_stub_after_the_definition_is_what_the_name_holds() -> None:
    stub_last = OVERLOADED.replace(
        "class Q(Base):\n",
        "    @t.overload\n    def scale(self, k: str) -> int: ...\nclass Q(Base):\n")
    before = stub_last + "    def get(self, k: int) -> int:\n        return self.scale(k)\n"
    after = stub_last + "    def get(self, k: int) -> int:\n        return self.x * k\n"
    result = check_pair(before, after, "Q.get", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail


def test_a_member_of_a_subclass_hides_the_type_a_base_declares() -> None:
    head = ("class Base:\n    sep: str | None = None\n"
            "    def __init__(self, x: int) -> None:\n        self.x = x\n"
            "class Q(Base):\n    @property\n    def sep(self) -> str:\n        return 'b'\n")
    reads = head + "    def get(self) -> object:\n        return self.sep\n"
    result = check_pair(reads, reads.replace("return self.sep", "return 'a'"), "Q.get",
                        budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    assert "tripwire" not in result.method, "the model proved a pair that differs"
    other = check_pair(head + _get("self.x * 2"), head + _get("2 * self.x"), "Q.get",
                       budget=BUDGET)
    assert other.verdict is Verdict.VERIFIED, other.detail


# Read-only properties (`@property` alone): reading one runs its getter, on the class or
# on a base; anything else named like one is refused.
BOX = (
    "class Shape:\n"
    "    def __init__(self, w: int, h: int) -> None:\n"
    "        self.w = w\n        self.h = h\n"
    "    @property\n    def area(self) -> int:\n        return self.w * self.h\n"
    "class Box(Shape):\n"
)


def test_a_property_of_a_base_is_read_through_its_getter() -> None:
    before = BOX + _get("self.area + 1")
    after = BOX + _get("1 + self.w * self.h")
    result = check_pair(before, after, "Box.get", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_a_changed_getter_is_a_difference() -> None:
    before = BOX + _get("self.area")
    after = BOX.replace("self.w * self.h", "self.w + self.h") + _get("self.area")
    result = check_pair(before, after, "Box.get", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail


def _body(*lines: str) -> str:
    return "    def get(self) -> int:\n" + "".join(f"        {line}\n" for line in lines)


# (name, before, after): each pair differs for some object; none may verify.
SETTER = BOX.replace("class Box(Shape):\n",
                     "    @area.setter\n    def area(self, v: int) -> None:\n"
                     "        self.w = v\nclass Box(Shape):\n")
CACHED = "import functools\n" + BOX.replace("@property", "@functools.cached_property")
NOT_BUILTIN = "def property(f):\n    return f\n" + BOX
PROPERTY_REFUSED: list[tuple[str, str, str]] = [
    ("written-through-a-setter", SETTER + _body("self.area = 7", "return self.h"),
     SETTER + _body("return self.h")),
    ("written-without-a-setter", BOX + _body("self.area = 3", "return 1"), BOX + _body("return 1")),
    ("property-not-the-builtin", NOT_BUILTIN + _body("return self.area"),
     NOT_BUILTIN + _body("return self.w * self.h")),
    ("cached-property", CACHED + _body("a = self.area", "self.w = self.w + 1", "return self.area"),
     CACHED + _body("a = self.w * self.h", "self.w = self.w + 1", "return self.w * self.h")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in PROPERTY_REFUSED],
                         ids=[n for n, _, _ in PROPERTY_REFUSED])
def test_what_is_not_a_plain_read_of_a_property_is_not_modelled_as_one(before: str,
                                                                       after: str) -> None:
    result = check_pair(before, after, "Box.get", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    assert "tripwire" not in result.method, "the model proved a pair that differs"


def test_the_lowering_refuses_a_write_to_a_property() -> None:
    tree = ast.parse(BOX + _body("self.area = 3", "return 1"))
    with pytest.raises(Unsupported, match="writing the property"):
        pyobject.lower(tree, tree, "Box.get")
