"""Asking the agent for hints: recorded conversations replayed through the real
``anthropic`` client against the fake Messages API, the solver's check, and the archive
that answers later reviews without asking again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.checks.test_hints import AFTER, AFTER_OFF_BY_ONE, BEFORE, INVARIANT, PROOF_ONLY
from tests.fakes import FakeAnthropic, anthropic_llm, load_recording, reply, text, tool_use
from tests.fakes import fake_anthropic as fake_anthropic  # the fixture
from veribot.bot.llm import AnthropicLLM
from veribot.checks.agent.llm import LLMBudget, UsageMeter
from veribot.checks.equivalence import check_pair
from veribot.checks.hints.archive import Archive, unit_keys
from veribot.checks.hints.ask import PROPOSE_HINTS, HintLimits, Unit, ask_hints, improve
from veribot.checks.hints.model import Status
from veribot.checks.verdict import Reason, Verdict

UNIT = Unit(BEFORE, AFTER, "total", path="pkg/sums.py")
_OPEN: list[AnthropicLLM] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def llm_for(fake: FakeAnthropic, meter: UsageMeter | None = None) -> AnthropicLLM:
    client = anthropic_llm(fake, meter=meter)
    _OPEN.append(client)
    return client


@pytest.fixture(scope="module")
def stopped() -> object:
    result = check_pair(BEFORE, AFTER, "total", budget=PROOF_ONLY)
    assert result.reason == Reason.LOOP_BOUND
    return result


def test_a_recorded_invariant_makes_the_loop_bound_case_verified(
    fake_anthropic: FakeAnthropic, stopped: object, tmp_path: Path
) -> None:
    fake_anthropic.script(load_recording("hints_total_invariant"))
    archive = Archive.in_data_dir(tmp_path)
    done = improve(UNIT, stopped, llm=llm_for(fake_anthropic), archive=archive, repo="o/r",
                   budget=PROOF_ONLY)
    assert not fake_anthropic.problems  # a request the real API accepts
    assert done.model_calls == 1 and not done.problems
    assert done.checked is not None
    result = done.checked.result
    assert result.verdict is Verdict.VERIFIED
    assert result.method.startswith("z3+hints")
    assert INVARIANT in result.detail
    assert done.checked.source == "agent"
    (request,) = fake_anthropic.bodies
    assert [t["name"] for t in request["tools"]] == ["propose_hints"]
    prompt = request["messages"][0]["content"][0]["text"]
    assert "loop-bound" in prompt and "<<<DATA before" in prompt and "s += n - 1 - j" in prompt
    # Kept for later reviews, under the code it is about.
    keys = unit_keys(BEFORE, AFTER, "total")
    assert keys is not None
    assert [h.text for h in archive.lookup("o/r", keys.all())] == [f"invariant `{INVARIANT}`"]


def test_a_later_review_is_verified_from_the_archive_with_zero_model_calls(
    fake_anthropic: FakeAnthropic, stopped: object, tmp_path: Path
) -> None:
    fake_anthropic.script(load_recording("hints_total_invariant"))
    archive = Archive.in_data_dir(tmp_path)
    first = improve(UNIT, stopped, llm=llm_for(fake_anthropic), archive=archive, repo="o/r",
                    budget=PROOF_ONLY)
    assert first.checked is not None and first.checked.proven_with_hints
    assert len(fake_anthropic.requests) == 1
    # Same code on a later pull request (other formatting): the archive answers. The fake
    # has nothing more scripted, so any call would fail the test.
    meter = UsageMeter(LLMBudget())
    later = Unit(BEFORE.replace("s = 0", "s = 0  # the sum"), AFTER, "total")
    second = improve(later, stopped, llm=llm_for(fake_anthropic, meter), archive=archive,
                     repo="o/r", budget=PROOF_ONLY)
    assert len(fake_anthropic.requests) == 1
    assert second.model_calls == 0
    assert meter.report().calls == 0
    assert second.checked is not None
    assert second.checked.result.verdict is Verdict.VERIFIED
    assert second.checked.source == "archive"
    assert second.checked.hints[0].status is Status.PROVEN  # proven again, not trusted


def test_a_recorded_wrong_invariant_stays_inconclusive_and_is_not_archived(
    fake_anthropic: FakeAnthropic, stopped: object, tmp_path: Path
) -> None:
    fake_anthropic.script(load_recording("hints_total_wrong_invariant"))
    archive = Archive.in_data_dir(tmp_path)
    done = improve(UNIT, stopped, llm=llm_for(fake_anthropic), archive=archive, repo="o/r",
                   budget=PROOF_ONLY, limits=HintLimits(rounds=1))
    assert done.checked is not None
    assert done.checked.result.verdict is Verdict.INCONCLUSIVE
    assert done.checked.result.reason == Reason.LOOP_BOUND
    (hint,) = done.checked.hints
    assert hint.status is Status.REFUTED and "entering the loops" in hint.reason
    keys = unit_keys(BEFORE, AFTER, "total")
    assert keys is not None and archive.lookup("o/r", keys.all()) == []


def test_a_second_round_gets_the_solver_s_feedback(
    fake_anthropic: FakeAnthropic, stopped: object
) -> None:
    fake_anthropic.script(load_recording("hints_total_wrong_invariant"),
                          load_recording("hints_total_invariant"))
    done = improve(UNIT, stopped, llm=llm_for(fake_anthropic), budget=PROOF_ONLY)
    assert done.model_calls == 2
    assert done.checked is not None and done.checked.result.verdict is Verdict.VERIFIED
    second = fake_anthropic.bodies[1]["messages"][0]["content"][0]["text"]
    assert "refuted: invariant `before.s == after.s and before.i == after.j`" in second


def test_a_wrong_invariant_for_a_differing_pair_is_refused(
    fake_anthropic: FakeAnthropic,
) -> None:
    stopped = check_pair(BEFORE, AFTER_OFF_BY_ONE, "total", budget=PROOF_ONLY)
    assert stopped.verdict is not Verdict.VERIFIED
    fake_anthropic.script(load_recording("hints_total_invariant"))
    done = improve(Unit(BEFORE, AFTER_OFF_BY_ONE, "total"), stopped,
                   llm=llm_for(fake_anthropic), budget=PROOF_ONLY, limits=HintLimits(rounds=1))
    assert done.checked is not None
    assert done.checked.result.verdict is not Verdict.VERIFIED
    assert done.checked.hints[0].status is Status.REFUTED


def test_answers_without_the_tool_or_cut_off_give_nothing_and_say_why(
    fake_anthropic: FakeAnthropic, stopped: object
) -> None:
    fake_anthropic.script(
        reply(text("I think `before.s == after.s` holds.")),
        reply(tool_use("propose_hints", {"hints": [{"kind": "invariant", "expr": INVARIANT}]}),
              stop_reason="max_tokens"),
    )
    llm = llm_for(fake_anthropic)
    first = ask_hints(llm, UNIT, stopped)
    assert not first.parsed.hints and "did not call propose_hints" in first.problem
    second = ask_hints(llm, UNIT, stopped)
    assert not second.parsed.hints and "cut off" in second.problem


def test_unsafe_hints_from_the_model_are_rejected_not_run(
    fake_anthropic: FakeAnthropic, stopped: object, tmp_path: Path
) -> None:
    target = tmp_path / "pwned"
    fake_anthropic.script(reply(tool_use("propose_hints", {"hints": [
        {"kind": "invariant", "expr": f"__import__('os').system('touch {target}') == 0"},
        {"kind": "invariant", "expr": "before.__class__.__init__ == 0"},
    ]})))
    done = improve(UNIT, stopped, llm=llm_for(fake_anthropic), budget=PROOF_ONLY,
                   limits=HintLimits(rounds=1))
    assert done.checked is not None
    assert len(done.checked.rejected) == 2
    assert done.checked.result.verdict is Verdict.INCONCLUSIVE
    assert not target.exists()


def test_nothing_is_asked_where_a_hint_cannot_help(fake_anthropic: FakeAnthropic) -> None:
    verified = check_pair(BEFORE, BEFORE.replace("s += i", "s = s + i"), "total",
                          budget=PROOF_ONLY)
    done = improve(UNIT, verified, llm=llm_for(fake_anthropic))
    assert done.checked is None and done.model_calls == 0
    assert not fake_anthropic.requests


def test_an_unavailable_model_is_reported(fake_anthropic: FakeAnthropic, stopped: object) -> None:
    from tests.fakes import error

    fake_anthropic.script(error(401, "bad key"))
    done = improve(UNIT, stopped, llm=llm_for(fake_anthropic), budget=PROOF_ONLY)
    assert done.checked is None
    assert done.problems and "could not be asked" in done.problems[0]


def test_the_tool_schema_is_the_hint_format() -> None:
    schema = PROPOSE_HINTS.input_schema
    assert schema["required"] == ["hints"]
    items = schema["properties"]["hints"]["items"]
    assert items["properties"]["kind"]["enum"] == [
        "invariant", "correspondence", "lemma", "precondition"]


# -- the review's hint step (veribot.bot.hintreview, wired in review.review) -------------


def test_a_review_completes_a_stopped_unit_from_the_archive(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    from veribot.bot.hintreview import improve_units
    from veribot.bot.review import FilesSource, ReviewRequest, review

    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(BEFORE, encoding="utf-8")
    after.write_text(AFTER, encoding="utf-8")
    archive = tmp_path / "hints.sqlite3"
    request = ReviewRequest(FilesSource(before, after, ("total",)), budget=PROOF_ONLY,
                            hints=True, hints_archive=archive, repo_name="o/r")
    (item,) = review(request).items
    assert item.result.reason == Reason.LOOP_BOUND  # nothing archived, no model: as before
    # The agent proposes the invariant once (through the review's hint step) ...
    from veribot.bot.agentreview import AgentConfig

    fake_anthropic.script(load_recording("hints_total_invariant"))
    agent = AgentConfig(llm=llm_for(fake_anthropic))
    (asked,) = improve_units([item.unit], [item.result], agent, PROOF_ONLY, archive, "o/r")
    assert asked.verdict is Verdict.VERIFIED and asked.method.startswith("z3+hints")
    assert any(n.startswith("hint proven, used by the proof") for n in asked.notes)
    # ... and the next review of the same code is verified from the archive, unasked.
    (again,) = review(request).items
    assert again.result.verdict is Verdict.VERIFIED
    assert again.result.method.startswith("z3+hints")
    assert len(fake_anthropic.requests) == 1
