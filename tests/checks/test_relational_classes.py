"""The relational check on methods of real classes: overload stubs, `with` items, classes
that changed elsewhere.

Each pair that must verify goes through ``relational.check`` (the sandbox loads both
modules); each pair an attacker writes to look the same must not verify.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict


def verified(before: str, after: str, entry: str) -> bool:
    result = relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                              relational.Limits(), relative=True)
    assert result is None or result.verdict is Verdict.VERIFIED
    return result is not None


def refusal(before: str, after: str, entry: str) -> str:
    why: list[str] = []
    assert relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                            relational.Limits(), refusal=why, relative=True) is None
    return " ".join(why)


# ----------------------------------------------------------------------------- overload stubs

STUBS = """\
{imports}
class C:
    {deco}
    def m(self, x: int) -> int: ...
    {deco}
    def m(self, x: str) -> str:
        '''A stub may carry a docstring.'''
    def m(self, x):
{body}
"""
EXTRACTED = "        y = self.g(x)\n        return y.strip()"
INLINED = "        return self.g(x).strip()"


@pytest.mark.parametrize(("imports", "deco"), [
    ("import typing as t", "@t.overload"),
    ("import typing", "@typing.overload"),
    ("from typing import overload", "@overload"),
    ("from typing import overload as ov", "@ov"),
])
def test_overload_stubs_before_the_method_are_replaced_by_it(imports: str, deco: str) -> None:
    before = STUBS.format(imports=imports, deco=deco, body=EXTRACTED)
    after = STUBS.format(imports=imports, deco=deco, body=INLINED)
    assert verified(before, after, "C.m")


def test_overload_stubs_of_a_module_function_are_replaced_by_it() -> None:
    src = ("from typing import overload\n@overload\ndef f(x: int) -> int: ...\n"
           "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n{body}\n")
    body_a, body_b = "    y = x.strip()\n    return y.upper()", "    return x.strip().upper()"
    assert verified(src.format(body=body_a), src.format(body=body_b), "f")


def test_a_stub_decorated_by_a_local_function_named_overload_is_a_binding() -> None:
    imports = "def overload(f):\n    return f"
    before = STUBS.format(imports=imports, deco="@overload", body=EXTRACTED)
    after = STUBS.format(imports=imports, deco="@overload", body=INLINED)
    assert "bound more than once" in refusal(before, after, "C.m")


def test_typing_overload_rebound_in_the_class_is_not_typing_s() -> None:
    src = ("from typing import overload\nclass C:\n    overload = staticmethod(lambda f: f)\n"
           "    @overload\n    def m(self, x: int) -> int: ...\n    def m(self, x):\n{body}\n")
    assert "bound more than once" in refusal(src.format(body=EXTRACTED),
                                             src.format(body=INLINED), "C.m")


def test_a_stub_after_the_method_is_what_the_name_holds() -> None:
    src = ("import typing as t\nclass C:\n    def m(self, x):\n{body}\n"
           "    @t.overload\n    def m(self, x: int) -> int: ...\n")
    before, after = src.format(body=EXTRACTED), src.format(body="        return x")
    assert "bound more than once" in refusal(before, after, "C.m")
    mod = ("import typing as t\ndef f(x):\n{body}\n@t.overload\ndef f(x: int) -> int: ...\n")
    assert not verified(mod.format(body="    return x"), mod.format(body="    return 1"), "f")


def test_changed_stubs_are_a_changed_class() -> None:
    before = STUBS.format(imports="import typing as t", deco="@t.overload", body=EXTRACTED)
    after = before.replace("x: int) -> int", "x: float) -> float").replace(
        EXTRACTED, INLINED)
    assert not verified(before, after, "C.m")


# ----------------------------------------------------------------------------- with items


def test_with_several_items_is_nested_with_in_a_method() -> None:
    src = ("class C:\n    def m(self, a, b, g):\n{body}\n")
    nested = ("        with a(self):\n            with b as y:\n                return g(y)")
    combined = "        with a(self), b as y:\n            return g(y)"
    assert verified(src.format(body=nested), src.format(body=combined), "C.m")


def test_three_items_are_three_nested_withs() -> None:
    nested = ("def f(a, b, c):\n    with a:\n        with b:\n            with c as z:\n"
              "                return z\n")
    combined = "def f(a, b, c):\n    with a, b, c as z:\n        return z\n"
    assert verified(nested, combined, "f")
    half = "def f(a, b, c):\n    with a:\n        with b, c as z:\n            return z\n"
    assert verified(half, combined, "f")


@pytest.mark.parametrize(("before", "after"), [
    # The items' order is the order of entry.
    ("def f(a, b, g):\n    with a, b:\n        return g()\n",
     "def f(a, b, g):\n    with b, a:\n        return g()\n"),
    # The second manager is made inside the first.
    ("def f(a, b, g):\n    with a(), b():\n        return g()\n",
     "def f(a, b, g):\n    m = b()\n    with a(), m:\n        return g()\n"),
    # One with after the other is not one inside the other.
    ("def f(a, b, g):\n    with a, b:\n        return g()\n",
     "def f(a, b, g):\n    with a:\n        pass\n    with b:\n        return g()\n"),
    # The body stays inside both.
    ("def f(a, b, g):\n    with a, b:\n        r = g()\n    return r\n",
     "def f(a, b, g):\n    with a:\n        with b:\n            pass\n        r = g()\n"
     "    return r\n"),
])
def test_with_items_reordered_or_split_are_not_verified(before: str, after: str) -> None:
    assert not verified(before, after, "f")


def test_a_renamed_local_read_in_a_second_with_item_is_guarded() -> None:
    """`b(x)` in `with a, b(x):` runs inside `a`, whose `__exit__` sees the NameError."""
    before = "def f(a, b):\n    with a, b(x) as y:\n        return y\n    x = 1\n"
    after = "def f(a, b):\n    with a, b(z) as y:\n        return y\n    z = 1\n"
    assert not verified(before, after, "f")
