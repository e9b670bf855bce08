"""Unit tests: reading how a method's object is built, the receiver in the call format,
and how a method's counterexample reads."""

from __future__ import annotations

import ast

import pytest

from veribot.checks.lang import pyobject
from veribot.checks.lang.pytypes import IntT, StrT, Unknown
from veribot.checks.lang.pyvalues import Unsupported
from veribot.checks.sandbox import parse_receiver, run_calls
from veribot.checks.search import construct, difftest
from veribot.checks.verdict import NO_INSTANCE, Behaviour, BehaviourKind, Counterexample

CLASS = (
    "class P:\n"
    "    def __init__(self, x: int, name: str = 'a', *, f: 'Callable' = None) -> None:\n"
    "        self.x = x\n"
    "    def m(self, d: int) -> int:\n        return self.x + d\n"
    "    @property\n    def double(self) -> int:\n        return self.x * 2\n"
    "    @staticmethod\n    def s(v: int) -> int:\n        return v\n"
)


def test_member_reads_the_constructor_parameters() -> None:
    m = construct.member(CLASS, "P.m")
    assert m is not None and m.kind == construct.METHOD and not m.why_not
    # Every parameter is read; the search decides that `f` (a type it generates no value
    # for, with a default) is left out, so that its default is used.
    assert [(p.name, p.type, p.required, p.keyword) for p in m.params] == [
        ("x", IntT(), True, False), ("name", StrT(), False, True),
        ("f", Unknown("Callable"), False, True)]
    spec = difftest.receiver_spec(CLASS, "P.m")
    assert spec is not None and [p[0] for p in spec["params"]] == ["x", "name"]  # type: ignore[union-attr]


def test_member_kinds() -> None:
    assert construct.member(CLASS, "P.double").kind == construct.PROPERTY  # type: ignore[union-attr]
    assert construct.member(CLASS, "P.s").kind == construct.STATIC  # type: ignore[union-attr]
    assert construct.member(CLASS, "P.__init__").kind == construct.INIT  # type: ignore[union-attr]
    assert construct.member("def f(): pass\n", "f") is None


@pytest.mark.parametrize(("source", "why"), [
    ("class B:\n    pass\nclass C(B, int):\n    def m(self): pass\n", "several base classes"),
    ("class C(Base):\n    def m(self): pass\n", "outside this module"),
    ("class C:\n    def __new__(cls): pass\n    def m(self): pass\n", "__new__"),
    ("class C(metaclass=M):\n    def m(self): pass\n", "metaclass"),
])
def test_classes_whose_objects_are_not_built(source: str, why: str) -> None:
    m = construct.member(source, "C.m")
    assert m is not None and why in m.why_not


def test_a_dataclass_and_an_inherited_constructor() -> None:
    source = ("from dataclasses import dataclass, field\n@dataclass\nclass B:\n    x: int\n"
              "    ys: list[int] = field(default_factory=list)\n"
              "class C(B):\n    def m(self) -> int:\n        return self.x\n")
    m = construct.member(source, "C.m")
    assert m is not None and not m.why_not
    assert [(p.name, p.required) for p in m.params] == [("x", True), ("ys", False)]


def test_parse_receiver() -> None:
    assert parse_receiver("3") is None
    assert parse_receiver("@P(3, name='b')") == ([3], {"name": "b"}, False)
    assert parse_receiver("@P(3).double") == ([3], {}, True)
    with pytest.raises(ValueError):
        parse_receiver("@P")


def test_a_method_counterexample_reads_as_python() -> None:
    b = Behaviour(BehaviourKind.RETURNED, ("int", 1), "1")
    method = Counterexample(("2",), b, b, "x", receiver="P(3, 'a')")
    assert method.call("m") == "P(3, 'a').m(2)"
    assert method.literals() == ("@P(3, 'a')", "2")
    prop = Counterexample((), b, b, "x", receiver="P(3).double")
    assert prop.call("double") == "P(3).double"


def test_the_sandbox_builds_the_object_and_reports_a_failed_constructor() -> None:
    source = CLASS.replace("self.x = x", "if x < 0:\n            raise ValueError\n"
                           "        self.x = x")
    good, bad = run_calls(source, "P.m", [["@P(3)", "2"], ["@P(-1)", "2"]])
    (prop,) = run_calls(source, "P.double", [["@P(4).double"]])
    assert good.kind is BehaviourKind.RETURNED and good.value == ("int", 5)
    assert good.built is not None
    assert bad.value == NO_INSTANCE and "ValueError" in bad.text
    assert prop.value == ("int", 8)


def _lower(source: str, entry: str = "C.m") -> pyobject.Lowered:
    tree = ast.parse(source)
    return pyobject.lower(tree, tree, entry)


def test_lowering_makes_rebound_attributes_cells() -> None:
    source = ("class C:\n    def __init__(self, x: int, y: str) -> None:\n        self.x = x\n"
              "        self.y = y\n    def m(self, d: int) -> str:\n        self.x += d\n"
              "        return self.y\n")
    fn = _lower(source).tree_a.body[-1]
    assert isinstance(fn, ast.FunctionDef) and fn.name == pyobject.ENTRY
    assert [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in fn.args.args] \
        == [("_vb_self_x", "list[int]"), ("_vb_self_y", "str"), ("d", "int")]


@pytest.mark.parametrize(("body", "why"), [
    ("return self", "`self` used as a value"),
    ("return super().m()", "super()"),
    ("return self.z", "`self.z`, whose type is not declared"),
    ("del self.x", "deleting"),
    ("return self.__dict__", "special attribute"),
])
def test_lowering_refuses(body: str, why: str) -> None:
    source = (f"class C:\n    x: int\n    def m(self) -> int:\n        {body}\n")
    with pytest.raises(Unsupported) as err:
        _lower(source)
    assert why in err.value.construct
