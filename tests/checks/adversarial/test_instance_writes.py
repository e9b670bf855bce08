"""Adversarial pairs: attribute writes elsewhere in the module, and a method's reads.

A write on an instance changes only that instance's state, which a method takes as
given; a write that rebinds a class's attribute, or an instance attribute named like a
method or property of the class (which hides it for that object), changes what the
method reads. The method ``get`` below calls ``self.helper()``; the versions differ once
``helper`` is replaced on the object or its class.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyinterfere
from veribot.checks.lang.pyinterfere import ANNOTATED_INSTANCE, HELD_INSTANCE
from veribot.checks.lang.pymodule import Module
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out (it took all but a
# few milliseconds of each of those checks' seconds).
NO_SEARCH = Budget(timeout_s=8, search=False)

HEAD = (
    "class C:\n"
    "    def __init__(self, x: int) -> None:\n"
    "        self.x = x\n"
    "    def helper(self) -> int:\n"
    "        return 1\n"
)


def _pair(extra: str, head: str = HEAD) -> tuple[str, str]:
    """``C.get`` returns ``self.helper()`` before, ``1`` after: the same while nothing
    replaces ``helper``."""
    before = head + "    def get(self) -> int:\n        return self.helper()\n" + extra
    after = head + "    def get(self) -> int:\n        return 1\n" + extra
    return before, after


# Code that replaces `helper` for some object (or for the class), each in its own way.
HIDING = {
    "on-self-in-another-method": "    def setup(self) -> None:\n        self.helper = lambda: 2\n",
    "on-an-annotated-parameter": "def setup(c: C) -> None:\n    c.helper = lambda: 2\n",
    "on-a-parameter": "def setup(c):\n    c.helper = lambda: 2\n",
    "through-type": "def setup(c: C) -> None:\n    type(c).helper = lambda self: 2\n",
    "through-dunder-class": "def setup(c: C) -> None:\n    c.__class__.helper = lambda s: 2\n",
    "class-swapped": "class D(C):\n    def helper(self) -> int:\n        return 2\n"
                     "def setup(c: C) -> None:\n    c.__class__ = D\n",
    "through-dunder-dict": "def setup(c: C) -> None:\n    c.__dict__['helper'] = lambda: 2\n",
    "setattr": "def setup(c: C) -> None:\n    setattr(c, 'helper', lambda: 2)\n",
    "object-setattr": "def setup(c: C) -> None:\n    object.__setattr__(c, 'helper', lambda: 2)\n",
    "in-a-classmethod": "    @classmethod\n    def setup(cls) -> None:\n"
                        "        cls.helper = lambda self: 2\n",
    "plain-value": "def setup(c) -> None:\n    c.helper = 2\n",
}


@pytest.mark.parametrize("extra", list(HIDING.values()), ids=list(HIDING))
def test_code_that_may_hide_a_method_the_method_calls_blocks_the_proof(extra: str) -> None:
    before, after = _pair(extra)
    assert check_pair(before, after, "C.get", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


def test_a_base_class_method_writing_self_hides_the_subclass_s_method() -> None:
    head = ("class B:\n    def setup(self) -> None:\n        self.helper = lambda: 2\n"
            + HEAD.replace("class C:", "class C(B):"))
    before, after = _pair("", head)
    assert check_pair(before, after, "C.get", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


def test_an_exception_class_of_the_closure_is_not_an_unrelated_instance() -> None:
    head = HEAD.replace("class C:", "class C(Exception):")
    before, after = _pair("def setup() -> None:\n    try:\n        pass\n"
                          "    except C as e:\n        e.helper = lambda: 2\n", head)
    assert check_pair(before, after, "C.get", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


KLASS = (
    "class C:\n"
    "    k = 1\n"
    "    def m(self, x: int) -> int:\n"
    "        return {body}\n"
    "    @classmethod\n"
    "    def bump(cls) -> None:\n"
    "        cls.k = {value}\n"
)


def test_a_classmethod_rebinding_a_class_constant_blocks_the_proof() -> None:
    before = KLASS.format(body="x + self.k", value=5)
    after = KLASS.format(body="self.k + x", value=6)
    assert check_pair(before, after, "C.m", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


# Writes that change only an instance's state, or hide nothing the method reads: the
# proof is kept (the method below is the same up to commuting an addition).
SAME_HEAD = (
    "class C:\n"
    "    def __init__(self, x: int) -> None:\n"
    "        self.x = x\n"
    "    def get(self) -> int:\n"
    "        return {body}\n"
)
HARMLESS = {
    "plain-value-on-any-object": ("def reset(c) -> None:\n    c.x = 0\n", False),
    "on-an-exception": ("def f() -> None:\n    try:\n        pass\n"
                        "    except ValueError as e:\n        e.x = f\n        e.get = f\n",
                        False),
    "a-method-name-on-an-unrelated-class": (
        "class Other:\n    def f(self) -> None:\n        self.get = 1\n", False),
    "on-an-annotated-parameter": ("def setup(c: C, v: int) -> None:\n    c.x = v\n", True),
    "on-a-module": ("import sys\ndef f() -> None:\n    sys.x = 3\n", False),
}


@pytest.mark.parametrize(("extra", "trusted"), list(HARMLESS.values()), ids=list(HARMLESS))
def test_a_write_on_an_instance_keeps_the_proof(extra: str, trusted: bool) -> None:
    before = SAME_HEAD.format(body="self.x + 1") + extra
    after = SAME_HEAD.format(body="1 + self.x") + extra
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert (ANNOTATED_INSTANCE in result.assumptions) is trusted


def test_a_lying_annotation_is_an_assumption_of_the_verdict() -> None:
    # `setup(C)` would write on the class: the verdict says it takes `c` as an instance.
    extra = "def setup(c: C) -> None:\n    c.x = property(lambda s: 7)\n"
    before = SAME_HEAD.format(body="self.x + 1") + extra
    after = SAME_HEAD.format(body="1 + self.x") + extra
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED
    assert ANNOTATED_INSTANCE in result.assumptions


def test_an_attribute_of_a_function_the_code_defines_hides_no_member() -> None:
    extra = ("def wrap(f):\n    def inner():\n        return f()\n"
             "    inner.helper = f\n    inner.x = f\n    return inner\n")
    before = SAME_HEAD.format(body="self.x + 1") + "    def helper(self) -> int:\n" \
        "        return 1\n" + extra
    after = before.replace("self.x + 1", "1 + self.x")
    assert check_pair(before, after, "C.get", budget=BUDGET).verdict is Verdict.VERIFIED


def test_a_decorated_inner_function_may_be_anything() -> None:
    extra = ("def deco(f):\n    return C\n"
             "def setup():\n    @deco\n    def inner():\n        pass\n"
             "    inner.helper = lambda self: 2\n")
    before, after = _pair(extra)
    assert check_pair(before, after, "C.get", budget=NO_SEARCH).verdict is not Verdict.VERIFIED


# An attribute of `self` that the module only ever sets to an instance of one of its own
# classes: a write through it is on that instance (black's parser `Recorder` writes
# `self.parser.stack`), an assumption the verdict lists.
HELD = {
    "made-by-the-class": "class Box:\n    def __init__(self) -> None:\n"
                         "        self.c = C(1)\n"
                         "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
    "an-annotated-parameter": "class Box:\n    def __init__(self, c: 'C') -> None:\n"
                              "        self.c = c\n        self.spare = None\n"
                              "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
}


@pytest.mark.parametrize("extra", list(HELD.values()), ids=list(HELD))
def test_a_write_through_an_attribute_holding_an_instance_keeps_the_proof(extra: str) -> None:
    before = SAME_HEAD.format(body="self.x + 1") + extra
    after = SAME_HEAD.format(body="1 + self.x") + extra
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert HELD_INSTANCE in result.assumptions


# The attribute may hold something else: the class itself, another object, whatever code
# puts in the object's namespace; or `self` is not the method's own object.
NOT_HELD = {
    "also-set-to-a-parameter": "class Box:\n    def __init__(self) -> None:\n"
                               "        self.c = C(1)\n"
                               "    def swap(self, k) -> None:\n        self.c = k\n"
                               "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
    "also-set-by-setattr": "class Box:\n    def __init__(self) -> None:\n"
                           "        self.c = C(1)\n        setattr(self, 'c', C)\n"
                           "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
    "a-class-attribute-of-that-name": "class Box:\n    c = C\n"
                                      "    def reset(self, v: int) -> None:\n"
                                      "        self.c.x = v\n"
                                      "class Other:\n    def __init__(self) -> None:\n"
                                      "        self.c = C(1)\n",
    "made-by-a-class-with-new": "class Maker:\n    def __new__(cls) -> type:\n"
                                "        return C\n"
                                "class Box:\n    def __init__(self) -> None:\n"
                                "        self.c = Maker()\n"
                                "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
    "self-rebound": "import types\nHOLDER = types.SimpleNamespace(c=C)\n"
                    "class Box:\n    def __init__(self) -> None:\n        self.c = C(1)\n"
                    "    def reset(self, v: int) -> None:\n        self = HOLDER\n"
                    "        self.c.x = v\n",
    "through-the-namespace": "class Box:\n    def __init__(self) -> None:\n"
                             "        self.c = C(1)\n"
                             "    def reset(self, v: int) -> None:\n        self.c.x = v\n"
                             "def inject(b: Box) -> None:\n    b.__dict__['c'] = C\n",
    "a-base-outside-the-module": "class Box(dict):\n    def __init__(self) -> None:\n"
                                 "        self.c = C(1)\n"
                                 "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
    "augmented": "class Box:\n    def __init__(self) -> None:\n        self.c = C(1)\n"
                 "    def grow(self, k) -> None:\n        self.c += k\n"
                 "    def reset(self, v: int) -> None:\n        self.c.x = v\n",
}


def _interference(extra: str) -> pyinterfere.Interference | None:
    """What the checks ask for a method: code that may change its class ``C``."""
    tree = ast.parse(SAME_HEAD.format(body="self.x + 1") + extra)
    return pyinterfere.interference(tree, Module.of(tree), "C")


@pytest.mark.parametrize("extra", list(NOT_HELD.values()), ids=list(NOT_HELD))
def test_a_write_through_an_attribute_that_may_hold_a_class_blocks_the_proof(
        extra: str) -> None:
    found = _interference(extra)
    assert found is not None and "attribute named `x`" in found.what, found


def test_an_attribute_that_may_hold_a_class_blocks_the_whole_check() -> None:
    # One of the above end to end: the check does not verify.
    extra = NOT_HELD["also-set-to-a-parameter"]
    before = SAME_HEAD.format(body="self.x + 1") + extra
    after = SAME_HEAD.format(body="1 + self.x") + extra
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail
