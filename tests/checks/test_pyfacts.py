"""Code facts for Python: normalised expressions, reaching definitions, control dependences."""

from __future__ import annotations

import pytest

from veribot.checks.agent.facts import Fact, FactSet
from veribot.checks.lang.pyfacts import FunctionNotFound, code_facts, correspondences

V = "before"


def F(pred: str, *args: str | int) -> Fact:
    return Fact(pred, args)


BRANCHES = """\
def f(a, b, c):
    x = a + b + c
    if x > 0:
        y = x
    else:
        y = -x
    return y
"""


def test_a_plus_b_plus_c_becomes_two_binary_functions() -> None:
    facts = code_facts(BRANCHES, "f", V)
    assert F("binaryFunDef", "$t1", "+", "a", "b", V, 2) in facts
    assert F("binaryFunDef", "x", "+", "$t1", "c", V, 2) in facts
    assert F("binaryFun", "+", "a", "b", V, 2) in facts  # the paper's form too
    assert F("defWithExpr", "x", V, 2) in facts
    assert F("flow", "$t1", V, 2, "$t1", V, 2) in facts


def test_flows_across_branches_and_control_dependences() -> None:
    facts = code_facts(BRANCHES, "f", V)
    assert F("entry", "f", V, 1) in facts
    assert {F("def", p, V, 1) for p in "abc"} <= set(facts)
    assert F("condWithExpr", V, 3) in facts
    assert F("controldep", "y", V, 4, "$t2", "true", V, 3) in facts
    assert F("controldep", "y", V, 6, "$t2", "false", V, 3) in facts
    assert F("flow", "x", V, 4, "y", V, 4) in facts  # the copy y = x
    # Both definitions of y reach the return.
    assert F("flow", "y", V, 4, "y", V, 7) in facts
    assert F("flow", "y", V, 6, "y", V, 7) in facts
    assert F("watchVar", "$ret", V, 7) in facts and F("exit", V, 7) in facts
    assert F("isConstantValue", "0") in facts and F("flow", "0", V, 0, "0", V, 3) in facts


def test_an_early_return_makes_what_follows_control_dependent() -> None:
    src = """\
def init(cache, size, ok):
    cache.arr = size
    if not ok:
        return 0
    cache.size = size
    return 1
"""
    facts = code_facts(src, "init", V)
    assert F("controldep", "cache", V, 5, "$t1", "false", V, 3) in facts
    assert F("controldep", "cache", V, 2, "Entry:init", "true", V, 1) in facts
    # cache is mutated in place: watched at the exit with both definitions reaching it.
    assert F("watchVar", "cache", V, 6) in facts
    assert F("flow", "cache", V, 2, "cache", V, 6) in facts
    assert F("flow", "cache", V, 5, "cache", V, 6) in facts
    assert F("flow", "$ret", V, 4, "$ret", V, 6) in facts


def test_loops_reach_back_and_mutating_calls_define_the_receiver() -> None:
    src = """\
def total(xs, out):
    n = 0
    for x in xs:
        n = n + x
        out.append(n)
    return n
"""
    facts = code_facts(src, "total", V)
    assert F("flow", "n", V, 4, "n", V, 4) in facts  # around the loop
    assert F("flow", "n", V, 2, "n", V, 4) in facts
    assert F("flow", "n", V, 4, "n", V, 6) in facts and F("flow", "n", V, 2, "n", V, 6) in facts
    assert F("def", "out", V, 5) in facts and F("watchVar", "out", V, 6) in facts
    deps = [f for f in facts.by_pred("controldep") if f.args[0] == "n" and f.args[2] == 4]
    assert [d.args[4] for d in deps] == ["true"]


def test_opaque_constructs_are_marked_not_described() -> None:
    src = "def g(xs):\n    ys = [x for x in xs]\n    return len(ys)\n"
    facts = code_facts(src, "g", V)
    assert F("opaque", V, 2, "ListComp") in facts
    assert F("stmt", V, 2) not in facts and F("stmt", V, 3) in facts
    with pytest.raises(FunctionNotFound):
        code_facts(src, "h", V)


def test_correspondences_map_entries_and_final_exits() -> None:
    a, b = code_facts(BRANCHES, "f", "before"), code_facts(BRANCHES, "f", "after")
    assert correspondences(a, b) == FactSet(
        [F("entryMap", "before", 1, "after", 1), F("exitMap", "before", 7, "after", 7)]
    )
