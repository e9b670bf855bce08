"""Adversarial pairs: how an object of the class is built, and what its class body binds.

Each pair differs only on an object the class's own constructor builds, so a proof that
takes ``self``'s attributes to hold values of their declared types must see every value
that constructor stores: through a property getter it reads or a decorated method it calls,
through a helper method or ``super().__init__`` given a value of another type than its
parameter's annotation, through a dataclass field's default. A private name (``self.__x``)
is another attribute in each class (Python mangles it); a class-body name bound again by a
nested ``def`` or import is no class constant; a decorator called ``dataclass`` may be any
function. The rare condition (``(v * 7) % 1000003 == 5``) only keeps the differing input
away from the tripwire: the verdict must not be "verified".
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

# Every check here asks only that the pair is not verified: random testing, which runs
# only once no proof was found and can turn no verdict into "verified", is left out (it
# took all but a few milliseconds of each check's seconds).
BUDGET = Budget(timeout_s=8, search=False)
RARE = "(v * 7) % 1000003 == 5"


def _not_verified(before: str, after: str, entry: str = "C.m") -> None:
    assert check_pair(before, after, entry, budget=BUDGET).verdict is not Verdict.VERIFIED


GETTER_WRITES = {
    "property-read": (
        "class C:\n"
        "    def __init__(self, x: int) -> None:\n"
        "        self.x = x\n"
        "        self.fix\n"
        "    @property\n"
        "    def fix(self) -> int:\n"
        "        v = self.x\n"
        f"        if {RARE}:\n"
        "            self.x = str(v)\n"
        "        return 0\n"),
    "decorated-method": (
        "def keep(f):\n    return f\n"
        "class C:\n"
        "    def __init__(self, x: int) -> None:\n"
        "        self.x = x\n"
        "        self.fix()\n"
        "    @keep\n"
        "    def fix(self) -> None:\n"
        "        v = self.x\n"
        f"        if {RARE}:\n"
        "            self.x = str(v)\n"),
    "bound-method-as-value": (
        "class C:\n"
        "    def __init__(self, x: int) -> None:\n"
        "        self.x = x\n"
        "        f = self.fix\n"
        "        f()\n"
        "    def fix(self) -> None:\n"
        "        v = self.x\n"
        f"        if {RARE}:\n"
        "            self.x = str(v)\n"),
}


@pytest.mark.parametrize("head", list(GETTER_WRITES.values()), ids=list(GETTER_WRITES))
def test_constructor_writes_through_a_getter_or_decorated_method_are_examined(
        head: str) -> None:
    before = head + "    def m(self) -> int:\n        return self.x * 0\n"
    after = head + "    def m(self) -> int:\n        return 0\n"
    _not_verified(before, after)


def test_a_dataclass_field_default_is_checked_against_the_declared_type() -> None:
    for value in ("field(default=None)", "field(default_factory=list)"):
        head = ("from dataclasses import dataclass, field\n"
                f"@dataclass\nclass C:\n    x: int = {value}\n")
        before = head + (f"    def m(self, v: int) -> int:\n        if {RARE}:\n"
                         "            return self.x * 0\n        return 0\n")
        after = head + "    def m(self, v: int) -> int:\n        return 0\n"
        _not_verified(before, after)


MANGLED = {
    "base-and-subclass": (
        "class B:\n    def __init__(self, x: int) -> None:\n        self.__x = x\n"
        "class C(B):\n", "self.__x - self.__x"),
    "both-spellings": (
        "class C:\n    def __init__(self, x: int) -> None:\n        self.__x = x\n"
        "        self._C__x = str(x)\n", "self.__x * 0"),
}


@pytest.mark.parametrize(("head", "expr"), list(MANGLED.values()), ids=list(MANGLED))
def test_private_names_are_mangled_per_class(head: str, expr: str) -> None:
    before = head + (f"    def m(self, v: int) -> int:\n        if {RARE}:\n"
                     f"            return {expr}\n        return 0\n")
    after = head + "    def m(self, v: int) -> int:\n        return 0\n"
    _not_verified(before, after)


HELPER_ARGUMENTS = {
    "helper-method": (
        "class C:\n"
        "    def __init__(self, x: int) -> None:\n"
        "        self.x = x\n"
        "        v = x\n"
        f"        if {RARE}:\n"
        "            self._set(str(x))\n"
        "    def _set(self, v: int) -> None:\n"
        "        self.x = v\n"),
    "super-init": (
        "class B:\n    def __init__(self, x: int) -> None:\n        self.x = x\n"
        "class C(B):\n"
        "    def __init__(self, v: int) -> None:\n"
        f"        super().__init__(str(v) if {RARE} else v)\n"),
}


@pytest.mark.parametrize("head", list(HELPER_ARGUMENTS.values()), ids=list(HELPER_ARGUMENTS))
def test_a_helper_the_constructor_calls_gets_what_the_call_passes(head: str) -> None:
    before = head + "    def m(self) -> int:\n        return self.x * 0\n"
    after = head + "    def m(self) -> int:\n        return 0\n"
    _not_verified(before, after)


REBOUND = {
    "def-in-if": ("    if True:\n        def k(self) -> int:\n            return 5\n",
                  "self.k * 0", "0"),
    "import-in-try": ("    try:\n        from math import pi as k\n    except ImportError:\n"
                      "        pass\n", "(v + self.k) - self.k", "v"),
}


@pytest.mark.parametrize(("nested", "expr", "plain"), list(REBOUND.values()),
                         ids=list(REBOUND))
def test_a_class_constant_rebound_in_a_nested_block_is_no_constant(
        nested: str, expr: str, plain: str) -> None:
    head = "class C:\n    k = 1\n" + nested
    before = head + (f"    def m(self, v: int) -> int:\n        if {RARE}:\n"
                     f"            return {expr}\n        return {plain}\n")
    after = head + f"    def m(self, v: int) -> int:\n        return {plain}\n"
    _not_verified(before, after)


def test_a_decorator_named_dataclass_is_not_taken_for_dataclasses_dataclass() -> None:
    head = "def dataclass(cls):\n    return cls\n@dataclass\nclass C:\n    x: int\n"
    before = head + ("    def m(self, d: int) -> int:\n        if d > 0:\n"
                     "            return self.x\n        return 0\n")
    after = head + ("    def m(self, d: int) -> int:\n        v = self.x\n"
                    "        return v if d > 0 else 0\n")
    _not_verified(before, after)


IN_PLACE = (
    "class C:\n"
    "    def __init__(self, items: list[int]) -> None:\n"
    "        self.items = items\n"
    "        {change}\n"
    "    def m(self, k: int) -> int:\n"
    "        if k * 7 == 7777:\n"
    "            return {read}\n"
    "        return 0\n")


@pytest.mark.parametrize("change", ['items.append("s")', 'self.items.append("s")',
                                    'self.items[0:0] = ["s"]', 'grow(items)'])
def test_a_list_the_constructor_changes_in_place_holds_what_it_put(change: str) -> None:
    # `C([1]).m(1111)`: "s" * 1 is "s", int("s") raises.
    head = "def grow(xs):\n    xs.append('s')\n\n\n"
    before = head + IN_PLACE.format(change=change, read="self.items[-1] * 1")
    after = head + IN_PLACE.format(change=change, read="int(self.items[-1])")
    _not_verified(before, after)
