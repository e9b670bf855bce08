"""The Datalog verifier: Z3 Fixedpoint in a child process, and the equivalence condition."""

from __future__ import annotations

from veribot.checks.agent.datalog import equivalence_condition, parse_rules, run_rules
from veribot.checks.agent.facts import Fact, FactSet


def F(pred: str, *args: str | int) -> Fact:
    return Fact(pred, args)


def fig17(f: str, fun: str) -> list[Fact]:
    """Seed 000 Fig. 17, in Python: d = 0; if c: d = fun(a); return d."""
    return [
        F("entry", "main", f, 1), F("def", "a", f, 1), F("def", "c", f, 1),
        F("def", "0", f, 0), F("isConstantValue", "0"),
        F("def", "d", f, 2), F("flow", "0", f, 0, "0", f, 2), F("flow", "0", f, 2, "d", f, 2),
        F("use", "c", f, 3), F("flow", "c", f, 1, "c", f, 3),
        F("def", "d", f, 4), F("use", "a", f, 4), F("flow", "a", f, 1, "a", f, 4),
        F("defWithExpr", "d", f, 4), F("unaryFun", fun, "a", f, 4),
        F("controldep", "d", f, 4, "c", "true", f, 3),
        F("controldep", "d", f, 2, "Entry:main", "true", f, 1),
        F("exit", f, 6), F("watchVar", "d", f, 6),
        F("flow", "d", f, 2, "d", f, 6), F("flow", "d", f, 4, "d", f, 6),
    ]


MAPS = [F("entryMap", "before", 1, "after", 1), F("exitMap", "before", 6, "after", 6)]


def test_condition_holds_on_matching_facts() -> None:
    facts = FactSet(fig17("before", "foo") + fig17("after", "foo") + MAPS)
    result = equivalence_condition(facts, timeout_s=20)
    assert result.holds is True, result.detail


def test_condition_fails_on_a_different_function_unless_mapped() -> None:
    facts = FactSet(fig17("before", "foo") + fig17("after", "bar") + MAPS)
    result = equivalence_condition(facts, timeout_s=20)
    assert result.holds is False
    assert "d at before:6" in result.detail
    mapped = facts | FactSet([F("varMap", "d", "before", 4, "d", "after", 4)])
    assert equivalence_condition(mapped, timeout_s=20).holds is True
    # Mutation: the invented mapping removed again is caught.
    assert equivalence_condition(facts, timeout_s=20).holds is False


def test_a_dropped_control_dependence_is_caught() -> None:
    facts = FactSet(fig17("before", "foo") + fig17("after", "foo") + MAPS)
    dropped = facts.difference([F("controldep", "d", "after", 4, "c", "true", "after", 3)])
    result = equivalence_condition(dropped, timeout_s=20)
    assert result.holds is False
    flipped = dropped | FactSet([F("controldep", "d", "after", 4, "c", "false", "after", 3)])
    assert equivalence_condition(flipped, timeout_s=20).holds is False


def test_missing_correspondences_are_named() -> None:
    result = equivalence_condition(FactSet(fig17("before", "foo")), timeout_s=20)
    assert result.holds is False
    assert "entryMap" in result.detail and "exitMap" in result.detail


def test_run_rules_with_negation_and_answers() -> None:
    rules = """
        reach(x, y) :- edge(x, y).
        reach(x, z) :- reach(x, y), edge(y, z).
        stuck(x) :- node(x), !reach(x, _), x != "end".
        some() :- stuck(_).
    """
    graph = [F("edge", "a", "b"), F("edge", "b", "end"), F("node", "end"), F("node", "a")]
    unrelated = [F("def", "a", "f", 1)]  # no relation of these rules: ignored
    assert run_rules(rules, FactSet(graph + unrelated), "some", timeout_s=20).holds is False
    graph.append(F("node", "lonely"))
    result = run_rules(rules, FactSet(graph), "some", timeout_s=20, explain=("stuck",))
    assert result.holds is True
    assert result.answers["stuck"] == (("lonely",),)
    assert len(parse_rules(rules)) == 5  # and one projection for the negated reach(x, _)


def test_a_crash_in_the_child_is_contained() -> None:
    result = run_rules("p(x) :- q(x).", FactSet(), "p", timeout_s=20, memory_mb=16)
    assert result.holds is None
    assert "failed" in result.detail


def test_a_hang_in_the_child_times_out() -> None:
    result = run_rules("p(x) :- q(x).", FactSet(), "p", timeout_s=0.01)
    assert result.holds is None
    assert "timed out" in result.detail


def test_rules_outside_the_dialect_are_reported_not_raised() -> None:
    result = run_rules("p(x) :- q(x", FactSet(), "p", timeout_s=20)
    assert result.holds is None
    assert "unexpected end" in result.detail
