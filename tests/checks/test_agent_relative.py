"""The agent's equivalence condition is the relative check, never a check of its facts.

An agent that argues "equivalent" with nothing but the code's own facts (every claim
supported) used to pass the Datalog condition for code that is not equivalent. The
condition is now the engine's relational check relative to callees (its static half), so
the five shapes of issue 8 (``break`` to ``continue``, two effectful calls swapped, a
dropped ``self.reset()``, a second ``next(it)``, a mutation through an alias) are judged
with the events where the versions part, never right, and the unit is never verified.

The agent is the real ``anthropic`` client talking HTTP to the fake Messages API; the
engine's result is ``check_pair``'s on the same pair.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.bot.processes import started_processes
from tests.checks.test_relational_opaque import DIFFERING
from tests.fakes import FakeAnthropic, answer_call, anthropic_llm, reply, tool_use
from tests.fakes import fake_anthropic as fake_anthropic  # the fixture
from veribot.checks.agent.facts import FactSet
from veribot.checks.agent.llm import UsageMeter
from veribot.checks.agent.pipeline import (
    AFTER,
    BEFORE,
    FORMALIZER_PREDICATES,
    RECORD_FACTS,
    AgentRun,
    Analysis,
    Answer,
    Formalization,
    Question,
)
from veribot.checks.agent.verdict import (
    AgentFinding,
    AgentOutcome,
    Condition,
    Status,
    ask_and_assess,
    assess,
    relative_condition,
)
from veribot.checks.agent.view import MemoryRevision, SourceView
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang.pyfacts import code_facts, correspondences
from veribot.checks.verdict import Reason, Result, Verdict

BUDGET = Budget(timeout_s=6, search=False)
PAIRS = {name: (before, after, entry) for name, before, after, entry in DIFFERING}
PARTED = "the versions make different calls or operations: "

# (pair, where the relative check finds the versions part)
SHAPES = [
    ("break-to-continue", "one version leaves a loop where the other ends a loop iteration"),
    ("effectful-calls-swapped", "one version reads `a.save` where the other reads `b.save`"),
    ("dropped-reset", "one version reads `self.reset` where the other reads `self.run`"),
    ("second-next", "one version returns where the other calls `next`"),
    ("mutation-through-alias", "one version calls `g` with other operands than the other"),
]

# A local renamed (`total` is `x`) and inlined past the call `g()`.
REFACTOR_BEFORE = "def f(g, h, x):\n    total = x\n    g()\n    return h(total)\n"
REFACTOR_AFTER = "def f(g, h, x):\n    g()\n    return h(x)\n"


def the_code_as_its_argument(before: str, after: str, entry: str) -> list[list[Any]]:
    """What an agent that argues "equivalent" from the code alone hands in: both versions'
    own facts (those a claim may state) and the correspondences of their entries and exits
    (all supported)."""
    a, b = code_facts(before, entry, BEFORE), code_facts(after, entry, AFTER)
    return [[f.pred, *f.args] for f in a | b | correspondences(a, b)
            if f.pred in FORMALIZER_PREDICATES]


def replay_equivalent(fake: FakeAnthropic, before: str, after: str, entry: str,
                      result: Result) -> AgentFinding:
    """One agent run through the real client: the analyzer answers "equivalent", the
    formalizer records the code's own facts as its argument; judged against ``result``."""
    facts = [{"pred": f[0], "args": f[1:]} for f in the_code_as_its_argument(before, after,
                                                                              entry)]
    fake.script(
        reply(answer_call("equivalent", "Only a refactoring: the same steps in both.")),
        reply(tool_use(RECORD_FACTS, {"facts": facts, "complete": True})),
    )
    n = len(before.splitlines()), len(after.splitlines())
    question = Question("m.py", entry, before, after, before_lines=(1, n[0]),
                        after_lines=(1, n[1]))
    view = SourceView(MemoryRevision({"m.py": before}), MemoryRevision({"m.py": after}))
    meter = UsageMeter()
    llm = anthropic_llm(fake, meter=meter)
    try:
        finding = ask_and_assess(llm, question, view, result, before, after, entry,
                                 meter=meter)
    finally:
        llm.close()
    assert not fake.problems, fake.problems
    assert fake.remaining == 0  # no omission: no extra formalizer round
    return finding


@pytest.mark.parametrize(("name", "where"), SHAPES, ids=[s[0] for s in SHAPES])
def test_an_equivalent_argument_for_code_that_is_not_is_never_right(
    fake_anthropic: FakeAnthropic, name: str, where: str
) -> None:
    before, after, entry = PAIRS[name]
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    finding = replay_equivalent(fake_anthropic, before, after, entry, result)
    assert finding.answer is Answer.EQUIVALENT
    assert finding.claims and all(c.status is Status.SUPPORTED for c in finding.claims)
    assert finding.condition == Condition(False, PARTED + where)
    if result.verdict is Verdict.REFUTED:
        assert finding.outcome is AgentOutcome.WRONG_CAUGHT
    else:  # a mismatch is no counterexample: inconclusive, naming where they part
        assert finding.outcome is AgentOutcome.INCONCLUSIVE
        assert f"the relative check does not hold: {PARTED}{where}" in finding.summary


def test_a_refactor_relative_to_its_calls_holds_and_the_engine_verifies_it(
    fake_anthropic: FakeAnthropic,
) -> None:
    result = check_pair(REFACTOR_BEFORE, REFACTOR_AFTER, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    finding = replay_equivalent(fake_anthropic, REFACTOR_BEFORE, REFACTOR_AFTER, "f", result)
    assert finding.outcome is AgentOutcome.RIGHT_VERIFIED
    assert finding.condition is not None and finding.condition.holds is True
    assert "the same calls and operations" in finding.condition.detail


def test_the_condition_holding_alone_verifies_nothing() -> None:
    """A proof-only review: the engine may not load the modules, so it cannot verify; the
    judgement's relative check holds, says so, and starts no process (static only)."""
    result = check_pair(REFACTOR_BEFORE, REFACTOR_AFTER, "f",
                        budget=Budget(timeout_s=6, search=False, execute=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    facts = FactSet.from_json({"facts": [{"pred": f[0], "args": f[1:]} for f in
                                         the_code_as_its_argument(REFACTOR_BEFORE,
                                                                  REFACTOR_AFTER, "f")]})
    run = AgentRun(Analysis(Answer.EQUIVALENT, "same"), Formalization(facts, 1, True))
    relative_condition.cache_clear()
    with started_processes() as started:
        finding = assess(result, run, REFACTOR_BEFORE, REFACTOR_AFTER, "f", execute=False)
    assert started == []
    assert finding.outcome is AgentOutcome.INCONCLUSIVE
    assert "the relative check holds statically" in finding.summary
    assert "only the engine's full check, which also loads both modules, can verify" in (
        finding.summary
    )


def test_an_answer_without_facts_is_judged_by_the_condition_too() -> None:
    before, after, entry = PAIRS["dropped-reset"]
    undecided = Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, "time ran out")
    run = AgentRun(Analysis(Answer.EQUIVALENT, "same"), Formalization(FactSet(), 1, True))
    finding = assess(undecided, run, before, after, entry)
    assert finding.outcome is AgentOutcome.INCONCLUSIVE and finding.claims == ()
    assert "one version reads `self.reset` where the other reads `self.run`" in finding.summary


# The paper's examples (once decided by the Datalog rules over code facts), now by the
# relative check: (before, after, holds).
EXAMPLES = [
    pytest.param(  # Fig. 22: an elif chain rewritten as ifs
        "def f(x):\n    if x == 1:\n        return 'A'\n    elif x == 2:\n        return 'B'\n"
        "    return 'C'\n",
        "def f(x):\n    if x == 1:\n        return 'A'\n    if x == 2:\n        return 'B'\n"
        "    return 'C'\n", True, id="elif-to-if"),
    pytest.param(  # Fig. 19: an assignment moved across an early return
        "def f(c, s):\n    if c:\n        return 0\n    s.size = 2\n    return 1\n",
        "def f(c, s):\n    s.size = 2\n    if c:\n        return 0\n    return 1\n", False,
        id="write-moved-across-return"),
    pytest.param("def f(a, b):\n    t = a + b\n    return t\n",
                 "def f(a, b):\n    s = a + b\n    return s\n", True, id="renamed-local"),
    pytest.param("def f(a, b):\n    t = a + b\n    return t\n",
                 "def f(a, b):\n    s = b + a\n    return s\n", False, id="operands-swapped"),
    pytest.param("from heapq import heappush\ndef f(h):\n    heappush(h, {})\n    return h\n",
                 "from heapq import heappush\ndef f(h):\n    heappush(h, [])\n    return h\n",
                 False, id="other-argument"),
]


@pytest.mark.parametrize(("before", "after", "holds"), EXAMPLES)
def test_the_paper_examples(before: str, after: str, holds: bool) -> None:
    assert relative_condition(before, after, "f", 5.0).holds is holds


@pytest.mark.parametrize(
    ("before", "after", "why"),
    [
        ("def f(xs):\n    return locals()\n", "def f(ys):\n    return locals()\n",
         "`locals` can observe names"),
        ("def f(x):\n    return x\n", "def f(x:\n", "the code does not parse"),
        ("def f(x):\n    return x\n", "def g(x):\n    return x\n", "the entry is not found"),
    ],
)
def test_where_the_relative_check_does_not_apply_it_is_undecided(
    before: str, after: str, why: str
) -> None:
    condition = relative_condition(before, after, "f", 5.0)
    assert condition.holds is None and why in condition.detail
    run = AgentRun(Analysis(Answer.EQUIVALENT, "same"), Formalization(FactSet(), 1, True))
    undecided = Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, "time ran out")
    finding = assess(undecided, run, before, after, "f")
    assert finding.outcome is AgentOutcome.INCONCLUSIVE
    assert f"the relative check was not decided ({condition.detail})" in finding.summary


# Issue 24 class 7: a helper's body changed and its caller is only renamed. The caller's
# text matches up to renaming, which says nothing about the helper.
CALLEE_BEFORE = ("def helper(x: int) -> int:\n    return x + 1\n\n\n"
                 "def f(a: int) -> int:\n    r = helper(a)\n    return r\n")
CALLEE_AFTER = ("def helper(x: int) -> int:\n    return x + 2\n\n\n"
                "def f(a: int) -> int:\n    s = helper(a)\n    return s\n")
MAPPING = {"pred": "varMap", "args": ["r", "before", 6, "s", "after", 6]}


@pytest.mark.parametrize("execute", [True, False], ids=["full", "proof-only"])
def test_a_judgement_relative_to_a_changed_callee_is_no_agreement(execute: bool) -> None:
    result = check_pair(CALLEE_BEFORE, CALLEE_AFTER, "f",
                        budget=Budget(timeout_s=6, execute=execute))
    assert result.verdict is not Verdict.VERIFIED, result.detail
    relative_condition.cache_clear()
    condition = relative_condition(CALLEE_BEFORE, CALLEE_AFTER, "f", 5.0)
    assert condition.holds is True and condition.relative_to == ("helper",)
    assert "relative to `helper`, whose code changed" in condition.detail
    facts = FactSet.from_json({"facts": [MAPPING]})
    run = AgentRun(Analysis(Answer.EQUIVALENT, "only a renamed local"),
                   Formalization(facts, 1, True))
    finding = assess(result, run, CALLEE_BEFORE, CALLEE_AFTER, "f", execute=execute)
    # The same text `helper(a)` on both sides is not the same value: never "supported".
    (claim,) = finding.claims
    assert claim.status is not Status.SUPPORTED, claim
    if execute:
        assert result.verdict is Verdict.REFUTED, result.detail
        assert finding.outcome is AgentOutcome.WRONG_CAUGHT
        assert claim.status is Status.CONTRADICTED, claim
    else:
        assert finding.outcome is AgentOutcome.INCONCLUSIVE
        assert "holds only relative to `helper`, whose code changed" in finding.summary
        assert "holds statically" not in finding.summary


def test_a_renamed_local_over_an_unchanged_helper_is_still_supported() -> None:
    after = CALLEE_AFTER.replace("x + 2", "x + 1")
    facts = FactSet.from_json({"facts": [MAPPING]})
    run = AgentRun(Analysis(Answer.EQUIVALENT, "only a renamed local"),
                   Formalization(facts, 1, True))
    result = Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, "time ran out")
    relative_condition.cache_clear()
    finding = assess(result, run, CALLEE_BEFORE, after, "f", execute=False)
    (claim,) = finding.claims
    assert claim.status is Status.SUPPORTED, claim
    assert finding.condition is not None and finding.condition.relative_to == ()


# More pairs of the class: a changed method reached through `self`, and two changed helpers.
METHOD_BEFORE = ("class C:\n    def _norm(self, x: int) -> int:\n        return x + 1\n\n"
                 "    def f(self, a: int) -> int:\n        r = self._norm(a)\n        return r\n")
METHOD_AFTER = ("class C:\n    def _norm(self, x: int) -> int:\n        return x - 1\n\n"
                "    def f(self, a: int) -> int:\n        s = self._norm(a)\n        return s\n")
TWO_BEFORE = ("def g(x: int) -> int:\n    return x * 2\n\n\ndef h(x: int) -> int:\n"
              "    return x + 3\n\n\ndef f(a: int) -> int:\n    r = g(h(a))\n    return r\n")
TWO_AFTER = ("def g(x: int) -> int:\n    return x * 3\n\n\ndef h(x: int) -> int:\n"
             "    return x + 2\n\n\ndef f(a: int) -> int:\n    s = g(h(a))\n    return s\n")


@pytest.mark.parametrize(("before", "after", "entry", "mapping", "changed"), [
    pytest.param(METHOD_BEFORE, METHOD_AFTER, "C.f",
                 {"pred": "varMap", "args": ["r", "before", 6, "s", "after", 6]},
                 ("C._norm",), id="a-changed-method"),
    pytest.param(TWO_BEFORE, TWO_AFTER, "f",
                 {"pred": "varMap", "args": ["r", "before", 10, "s", "after", 10]},
                 ("g", "h"), id="two-changed-helpers"),
])
def test_the_same_text_over_changed_callees_is_no_agreement(
    before: str, after: str, entry: str, mapping: dict[str, Any], changed: tuple[str, ...],
) -> None:
    relative_condition.cache_clear()
    condition = relative_condition(before, after, entry, 5.0)
    assert condition.holds is not True or set(condition.relative_to) == set(changed), condition
    run = AgentRun(Analysis(Answer.EQUIVALENT, "only a renamed local"),
                   Formalization(FactSet.from_json({"facts": [mapping]}), 1, True))
    undecided = Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, "time ran out")
    finding = assess(undecided, run, before, after, entry, execute=False)
    (claim,) = finding.claims
    assert claim.status is not Status.SUPPORTED, claim
    assert finding.outcome is AgentOutcome.INCONCLUSIVE
    assert "holds statically" not in finding.summary
