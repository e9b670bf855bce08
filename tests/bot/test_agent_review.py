"""The review with the agent: the paper's examples end to end, through the real client.

Each test reviews two files with ``review()``: the engine decides, the analyzer and
formalizer answer from a recorded conversation (``tests/fakes/recordings/paper_*.json``)
served by the fake Messages API, and the agent's answer is judged. The agent never makes
a unit verified: only the engine's proof does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.bot import paper_examples as ex
from tests.fakes import FakeAnthropic, anthropic_llm, load_recording
from veribot.bot.agentreview import AgentConfig, agent_config
from veribot.bot.cli import main
from veribot.bot.config import AgentCeilings
from veribot.bot.llm import AnthropicLLM
from veribot.bot.llmcache import CachedLLM, Mode
from veribot.bot.render import render
from veribot.bot.review import FilesSource, Report, ReviewRequest, review
from veribot.checks.agent.facts import Fact, FactSet
from veribot.checks.agent.llm import (
    LLM,
    Completion,
    Message,
    TextBlock,
    ToolSpec,
    ToolUseBlock,
    UsageMeter,
)
from veribot.checks.agent.pipeline import AgentLimits, AgentRun, Analysis, Answer, Formalization
from veribot.checks.agent.verdict import AgentFinding, AgentOutcome, Status, assess
from veribot.checks.equivalence import Budget
from veribot.checks.lang.pyfacts import code_facts
from veribot.checks.verdict import Reason, Result, Verdict

CASES = {
    "fig8": ("session.py", "status_type", ex.FIG8_BEFORE, ex.FIG8_AFTER),
    "fig17": ("main.py", "compute", ex.FIG17_BEFORE, ex.FIG17_AFTER),
    "fig19": ("cache.py", "cache_init", ex.FIG19_BEFORE, ex.FIG19_AFTER),
    "fig21": ("find.py", "find", ex.FIG21_BEFORE, ex.FIG21_AFTER),
    "fig22": ("label.py", "label", ex.FIG22_BEFORE, ex.FIG22_AFTER),
    "injection": ("calc.py", "bump", ex.INJECTION_BEFORE, ex.INJECTION_AFTER),
}


def run_case(
    tmp_path: Path,
    name: str,
    llm: LLM,
    meter: UsageMeter,
    pr_text: str = "Refactor; behaviour unchanged.",
) -> Report:
    filename, entry, before, after = CASES[name]
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    (tmp_path / "a" / filename).write_text(before)
    (tmp_path / "b" / filename).write_text(after)
    request = ReviewRequest(
        FilesSource(tmp_path / "a" / filename, tmp_path / "b" / filename, (entry,)),
        budget=Budget(timeout_s=8.0),
        agent=AgentConfig(llm=llm, meter=meter, pr_text=pr_text),
    )
    return review(request)


def only(report: Report) -> tuple[Verdict, AgentOutcome, Answer | None]:
    (item,) = report.items
    assert item.agent is not None
    return item.result.verdict, item.agent.outcome, item.agent.answer


def replay(fake: FakeAnthropic, tmp_path: Path, name: str) -> Report:
    meter = UsageMeter()
    fake.script(load_recording(f"paper_{name}"))
    llm = anthropic_llm(fake, meter=meter)
    try:
        report = run_case(tmp_path, name, llm, meter)
    finally:
        llm.close()
    assert not fake.problems, fake.problems  # every request was one the real API accepts
    assert fake.remaining == 0  # the whole conversation was used
    return report


def test_fig8_hallucinated_equivalence_is_not_verified(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    report = replay(fake_anthropic, tmp_path, "fig8")
    assert only(report) == (Verdict.REFUTED, AgentOutcome.WRONG_CAUGHT, Answer.EQUIVALENT)
    finding = report.items[0].agent
    assert finding is not None
    assert finding.formalizer_rounds == 2
    assert finding.tool_calls == 3
    # the agent read the helpers through its tools, from the files under review
    first_result = fake_anthropic.bodies[1]["messages"][-1]["content"][0]["content"]
    assert "def has_value" in first_result
    text = render(report, "text")
    assert "agent wrong, caught" in text and "agent answered: equivalent" in text


def test_fig17_not_equivalent_agent_right(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    report = replay(fake_anthropic, tmp_path, "fig17")
    assert only(report) == (Verdict.REFUTED, AgentOutcome.RIGHT_REFUTED, Answer.NOT_EQUIVALENT)
    # Its view of the difference against the pull request's text, shown as its own: the
    # request carried the text and the docstrings as data, and forced the tool.
    view = report.items[0].view
    assert view is not None and view.view == "contradicts", view
    body = fake_anthropic.bodies[-1]
    assert body["tool_choice"] == {"type": "tool", "name": "judge_difference"}
    user = body["messages"][0]["content"][0]["text"]
    assert "<<<DATA pull_request" in user and "Refactor; behaviour unchanged." in user
    assert "the agent's view (contradicts)" in render(report, "text")
    assert "the agent's view (contradicts)" in render(report, "markdown")


def test_fig19_moved_assignment_is_refuted(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    report = replay(fake_anthropic, tmp_path, "fig19")
    assert only(report) == (Verdict.REFUTED, AgentOutcome.WRONG_CAUGHT, Answer.EQUIVALENT)


def test_fig21_swapped_conditions_refuted_with_the_input(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    report = replay(fake_anthropic, tmp_path, "fig21")
    assert only(report) == (Verdict.REFUTED, AgentOutcome.WRONG_CAUGHT, Answer.EQUIVALENT)
    cex = report.items[0].result.counterexample
    assert cex is not None and "IndexError" in cex.before.text
    finding = report.items[0].agent
    assert finding is not None and f"({', '.join(cex.args)})" in finding.summary


def test_fig22_rewritten_chain_verified(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    report = replay(fake_anthropic, tmp_path, "fig22")
    assert only(report) == (Verdict.VERIFIED, AgentOutcome.RIGHT_VERIFIED, Answer.EQUIVALENT)
    finding = report.items[0].agent
    assert finding is not None
    assert finding.assumptions == report.items[0].result.assumptions
    assert finding.formalizer_rounds == 2
    doc = json.loads(render(report, "json"))
    assert doc["units"][0]["agent"]["outcome"] == "agent right, verified"
    assert doc["agent"]["usage"]["calls"] == 3


def test_injected_instructions_never_make_it_verified(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    report = replay(fake_anthropic, tmp_path, "injection")
    verdict, outcome, answer = only(report)
    assert answer is Answer.EQUIVALENT  # the agent obeyed the injected text ...
    assert verdict is Verdict.REFUTED  # ... and the engine was not moved
    assert outcome is AgentOutcome.WRONG_CAUGHT
    user = fake_anthropic.bodies[0]["messages"][0]["content"][0]["text"]
    assert "<<<DATA modified_code" in user and "<<<DATA pull_request" in user


def test_without_a_model_the_agent_is_not_asked(tmp_path: Path) -> None:
    _, entry, before, after = CASES["fig22"]
    (tmp_path / "a.py").write_text(before)
    (tmp_path / "b.py").write_text(after)
    report = review(ReviewRequest(FilesSource(tmp_path / "a.py", tmp_path / "b.py", (entry,))))
    assert report.items[0].agent is not None
    assert report.items[0].agent.outcome is AgentOutcome.NOT_ASKED
    assert "agent not asked" in render(report, "text")
    assert "agent not asked" in render(report, "markdown")


def test_the_cache_replays_without_the_model(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    """Recorded once through the fake, the review replays from SQLite with no server."""
    cache = tmp_path / "llm.sqlite3"
    meter = UsageMeter()
    fake_anthropic.script(load_recording("paper_fig17"))
    inner = anthropic_llm(fake_anthropic, meter=meter)
    try:
        first = run_case(tmp_path, "fig17", CachedLLM(inner, cache, Mode.CACHE), meter)
    finally:
        inner.close()
    assert first.agent_usage is not None and first.agent_usage.calls == 4  # with the view
    meter2 = UsageMeter()
    offline = CachedLLM(None, cache, Mode.REPLAY, model="claude-test", meter=meter2)
    second = run_case(tmp_path, "fig17", offline, meter2)
    assert only(second) == only(first)
    assert second.agent_usage is not None
    assert (second.agent_usage.calls, second.agent_usage.cache_hits) == (0, 4)
    assert second.items[0].view == first.items[0].view
    assert second.agent_usage.total_tokens == 0


class AlwaysEquivalent:
    """A maximally wrong agent in-process: "equivalent" to everything, with a made-up fact."""

    model = "always-equivalent"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
        temperature: float,
        tool_choice: str | None = None,
    ) -> Completion:
        if any(t.name == "record_facts" for t in tools):
            facts = {"facts": [{"pred": "entryMap", "args": ["before", 1, "after", 1]}]}
            block = ToolUseBlock("toolu_x", "record_facts", {**facts, "complete": True})
            return Completion((block,), "tool_use")
        answer = {"answer": "equivalent", "explanation": "Trust me."}
        text = TextBlock("<Answer>equivalent</Answer>")
        return Completion((text, ToolUseBlock("toolu_a", "submit_answer", answer)), "tool_use")


BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "dev" / "python.jsonl"


@pytest.mark.skipif(not BENCH.is_file(), reason="../shared/bench is absent")
def test_a_maximally_wrong_agent_gets_nothing_verified_on_different_pairs(
    tmp_path: Path,
) -> None:
    pairs = [json.loads(line) for line in BENCH.read_text().splitlines() if line.strip()]
    different = [p for p in pairs if p["label"] == "different"][:12]
    verified = []
    for n, pair in enumerate(different):
        (tmp_path / f"a{n}.py").write_text(pair["before"])
        (tmp_path / f"b{n}.py").write_text(pair["after"])
        report = review(
            ReviewRequest(
                FilesSource(tmp_path / f"a{n}.py", tmp_path / f"b{n}.py", (pair["entry"],)),
                budget=Budget(timeout_s=2.0, search=False),
                agent=AgentConfig(llm=AlwaysEquivalent(), meter=UsageMeter()),
            )
        )
        for item in report.items:
            assert item.agent is None or item.agent.outcome is not AgentOutcome.RIGHT_VERIFIED
            if item.result.verdict is Verdict.VERIFIED:
                verified.append(pair["id"])
    assert verified == []


def test_agent_config_from_the_command_line_values(tmp_path: Path) -> None:
    assert agent_config(None, "claude-x", None) is None  # no key: not asked
    assert agent_config("off", "claude-x", "sk-ant-x") is None
    with pytest.raises(ValueError, match="needs ANTHROPIC_API_KEY"):
        agent_config("live", "claude-x", None)
    with pytest.raises(ValueError, match="expected one of"):
        agent_config("tape:x", "claude-x", None)
    live = agent_config(None, "claude-x", "sk-ant-x")
    assert live is not None and live.llm.model == "claude-x"
    assert isinstance(live.llm, AnthropicLLM)
    live.llm.close()
    recording = tmp_path / "rec.sqlite3"
    CachedLLM(AlwaysEquivalent(), recording, Mode.CACHE)  # creates the file
    replayed = agent_config(f"replay:{recording}", "claude-x", None)
    assert replayed is not None and isinstance(replayed.llm, CachedLLM)


def test_the_command_lines_agent_has_the_apps_deadline_and_unit_cap() -> None:
    """A live agent asked from the command line stops at a wall-clock deadline, as the App's
    does (``VERIBOT_AGENT_DEADLINE_S``, default ``AgentCeilings().deadline_s``)."""
    default = agent_config(None, "claude-x", "sk-ant-x")
    assert default is not None and default.meter is not None
    left = default.meter.remaining_s()
    assert left is not None and 0 < left <= AgentCeilings().deadline_s
    assert default.limits.unit_tokens == AgentCeilings().unit_tokens
    default.llm.close()
    ceilings = AgentCeilings.from_env({"VERIBOT_AGENT_DEADLINE_S": "5",
                                       "VERIBOT_AGENT_UNIT_TOKENS": "1000"})
    short = agent_config(None, "claude-x", "sk-ant-x", ceilings=ceilings)
    assert short is not None and short.meter is not None
    left = short.meter.remaining_s()
    assert left is not None and 0 < left <= 5
    assert short.limits.unit_tokens == 1000
    short.llm.close()
    out, err = io.StringIO(), io.StringIO()
    code = main(["review", "--llm", "live", "--no-execute", "--repo", ".", "--base", "HEAD"],
                environ={"ANTHROPIC_API_KEY": "sk-ant-x", "VERIBOT_AGENT_DEADLINE_S": "-1"},
                stdout=out, stderr=err)
    assert code == 2 and "VERIBOT_AGENT_DEADLINE_S must not be negative" in err.getvalue()


def test_mutated_agent_facts_are_caught() -> None:
    """The code's own facts as the agent's, then mutated: an invented varMap is caught; a
    dropped control dependence of the moved assignment (Fig. 19) is named, and leaves the
    judgement inconclusive."""
    before = code_facts(ex.FIG19_BEFORE, "cache_init", "before")
    after = code_facts(ex.FIG19_AFTER, "cache_init", "after")
    correspondences = FactSet(
        [Fact("entryMap", ("before", 8, "after", 8)), Fact("exitMap", ("before", 15, "after", 15))]
    )
    honest = before | after | correspondences
    undecided = Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, "time ran out")

    def judge(facts: FactSet) -> AgentFinding:
        run = AgentRun(Analysis(Answer.EQUIVALENT, "same"), Formalization(facts, 1, True))
        return assess(undecided, run, ex.FIG19_BEFORE, ex.FIG19_AFTER, "cache_init")

    invented = Fact("varMap", ("cache", "before", 13, "cache", "after", 9))
    caught = judge(honest | FactSet([invented]))
    assert caught.outcome is AgentOutcome.WRONG_CAUGHT
    assert str(invented) in caught.summary and "(line 13)" in caught.summary

    (moved,) = [f for f in honest.by_pred("controldep") if f.args[:3] == ("cache", "before", 14)]
    dropped = judge(honest.difference([moved]))
    assert dropped.outcome is AgentOutcome.INCONCLUSIVE  # an omission is not a false claim
    assert "omitted the control dependence of before line 14" in dropped.summary
    assert dropped.condition is not None and dropped.condition.holds is False
    # The relative check names where the versions part: the write moved before the call.
    assert dropped.condition.detail.endswith(
        "one version calls `allocate` where the other writes an item of `cache`"
    )
    assert "the relative check does not hold" in dropped.summary
    assert all(c.status is not Status.CONTRADICTED for c in dropped.claims)
    assert str(moved) in dropped.omitted


def test_cli_compare_with_a_replayed_agent(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    """`veribot compare --llm replay:PATH` needs no key; the report shows the agent."""
    cache = tmp_path / "llm.sqlite3"
    meter = UsageMeter()
    fake_anthropic.script(load_recording("paper_fig22"))
    inner = anthropic_llm(fake_anthropic, meter=meter)
    try:
        run_case(tmp_path, "fig22", CachedLLM(inner, cache, Mode.CACHE), meter, pr_text="")
    finally:
        inner.close()
    a, b = tmp_path / "a" / "label.py", tmp_path / "b" / "label.py"
    out, err = io.StringIO(), io.StringIO()
    argv = ["compare", str(a), str(b), "--entry", "label", "--llm", f"replay:{cache}"]
    code = main(
        [*argv, "--model", "claude-test", "--timeout", "8"], environ={}, stdout=out, stderr=err
    )
    assert code == 0, err.getvalue()
    text = out.getvalue()
    assert "agent: agent right, verified" in text
    assert "agent claude-test: 0 LLM calls, 0+0 tokens, 3 cache hits" in text
    missing = main([*argv[:-2], "--llm", "live"], environ={}, stdout=out, stderr=err)
    assert missing == 2 and "needs ANTHROPIC_API_KEY" in err.getvalue()
    plain = io.StringIO()
    assert main(argv[:5], environ={}, stdout=plain, stderr=err) == 0
    assert "agent not asked" in plain.getvalue()


def test_past_the_deadline_no_unit_is_asked(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    now = [0.0]
    meter = UsageMeter(deadline_s=60.0, clock=lambda: now[0])
    now[0] = 61.0
    llm = anthropic_llm(fake_anthropic, meter=meter)
    try:
        report = run_case(tmp_path, "fig22", llm, meter)
    finally:
        llm.close()
    (item,) = report.items
    assert item.agent is not None and item.agent.outcome is AgentOutcome.INCONCLUSIVE
    assert item.agent.summary.startswith("inconclusive (budget)")
    assert "deadline" in item.agent.summary
    assert fake_anthropic.requests == []
    assert item.result.verdict is Verdict.VERIFIED  # the engine's verdict is untouched


def test_a_unit_over_its_token_cap_stops_there(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    """The analyzer's answer fits the unit's cap; the formalizer's call could not, so it is
    not made, and the unit says why."""
    meter = UsageMeter()
    fake_anthropic.script(load_recording("paper_fig22")[:1])  # the analyzer's answer
    llm = anthropic_llm(fake_anthropic, meter=meter)
    _, entry, before, after = CASES["fig22"]
    (tmp_path / "a.py").write_text(before)
    (tmp_path / "b.py").write_text(after)
    limits = AgentLimits(unit_tokens=12_000, formalizer_max_tokens=20_000)
    try:
        report = review(
            ReviewRequest(
                FilesSource(tmp_path / "a.py", tmp_path / "b.py", (entry,)),
                budget=Budget(timeout_s=8.0),
                agent=AgentConfig(llm=llm, meter=meter, limits=limits),
            )
        )
    finally:
        llm.close()
    (item,) = report.items
    assert item.agent is not None and "allowed per function" in item.agent.error
    assert item.agent.formalizer_rounds == 0  # the analyzer answered; no formalizer call
    assert len(fake_anthropic.requests) == 1 and not fake_anthropic.problems
    assert meter.report().refused == 1
