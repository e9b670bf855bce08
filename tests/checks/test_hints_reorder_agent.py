"""A statement correspondence proposed by the agent (a recorded conversation replayed
through the real ``anthropic`` client against the fake Messages API) completes the
relational check where the versions differ only in the order of two independent
statements; the same recorded correspondence on a pair that differs changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import FakeAnthropic, anthropic_llm, load_recording
from tests.fakes import fake_anthropic as fake_anthropic  # the fixture
from veribot.bot.llm import AnthropicLLM
from veribot.checks.agent.llm import LLMBudget, UsageMeter
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.hints.archive import Archive, unit_keys
from veribot.checks.hints.ask import HintLimits, Unit, improve
from veribot.checks.hints.check import engine_stopped, hint_may_help
from veribot.checks.hints.model import Status
from veribot.checks.lang import pysource
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Reason, Result, Verdict

# The model does not cover `set()`, the relational check cannot match the statements, and
# its comparison relative to callees does not model `**` in a dict display.
BEFORE = """\
import json


def keys(text: str) -> list[str]:
    seen = set()
    out = []
    for key in json.loads(text):
        if key not in seen:
            seen.add(key)
            out.append(key)
    return list({**dict.fromkeys(out)})
"""
AFTER = BEFORE.replace("    seen = set()\n    out = []\n", "    out = []\n    seen = set()\n")
# The same swap, and `out` now starts with an element: differs on every input.
AFTER_CHANGED = AFTER.replace("out = []", "out = ['']")
BUDGET = Budget(timeout_s=30, search=False)
HINT = "correspondence line 5 ~ line 6', line 6 ~ line 5'"
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


def test_a_recorded_statement_correspondence_completes_the_relational_check(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    stopped = check_pair(BEFORE, AFTER, "keys", budget=BUDGET)
    assert stopped.verdict is Verdict.INCONCLUSIVE and not engine_stopped(stopped)
    assert hint_may_help(stopped, BEFORE, AFTER, "keys")  # the relational check is unmatched
    fake_anthropic.script(load_recording("hints_reorder_statements"))
    archive = Archive.in_data_dir(tmp_path)
    done = improve(Unit(BEFORE, AFTER, "keys"), stopped, llm=llm_for(fake_anthropic),
                   archive=archive, repo="o/r", budget=BUDGET)
    assert not fake_anthropic.problems  # a request the real API accepts
    assert done.model_calls == 1 and done.checked is not None
    result = done.checked.result
    assert result.verdict is Verdict.VERIFIED
    assert result.method == relational.METHOD_REORDERED and done.checked.proven_with_hints
    assert HINT in result.detail
    (hint,) = done.checked.hints
    assert hint.status is Status.PROVEN and hint.used
    (request,) = fake_anthropic.bodies
    schema = request["tools"][0]["input_schema"]["properties"]["hints"]["items"]
    assert "statements" in schema["properties"]
    # Kept under the unit's code; the same code later is verified without asking.
    keys = unit_keys(BEFORE, AFTER, "keys")
    assert keys is not None
    assert [h.text for h in archive.lookup("o/r", keys.all())] == [HINT]
    meter = UsageMeter(LLMBudget())
    again = improve(Unit(BEFORE, AFTER, "keys"), stopped, llm=llm_for(fake_anthropic, meter),
                    archive=archive, repo="o/r", budget=BUDGET)
    assert len(fake_anthropic.requests) == 1 and meter.report().calls == 0
    assert again.checked is not None and again.checked.source == "archive"
    assert again.checked.result.verdict is Verdict.VERIFIED


def test_the_recorded_correspondence_on_a_pair_that_differs_changes_nothing(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    stopped = check_pair(BEFORE, AFTER_CHANGED, "keys", budget=BUDGET)
    assert stopped.verdict is Verdict.INCONCLUSIVE  # `set()`: the model stops here too
    fake_anthropic.script(load_recording("hints_reorder_statements"))
    archive = Archive.in_data_dir(tmp_path)
    done = improve(Unit(BEFORE, AFTER_CHANGED, "keys"), stopped, llm=llm_for(fake_anthropic),
                   archive=archive, repo="o/r", budget=BUDGET, limits=HintLimits(rounds=1))
    assert done.checked is not None
    assert done.checked.result.verdict is not Verdict.VERIFIED
    (hint,) = done.checked.hints
    assert hint.status is Status.UNPROVEN and not hint.used
    assert "the code differs beyond renaming" in hint.reason
    keys = unit_keys(BEFORE, AFTER_CHANGED, "keys")
    assert keys is not None and archive.lookup("o/r", keys.all()) == []


def test_nothing_is_asked_without_code_execution(fake_anthropic: FakeAnthropic) -> None:
    proof_only = Budget(timeout_s=30, execute=False, search=False)
    stopped = check_pair(BEFORE, AFTER, "keys", budget=proof_only)
    assert not hint_may_help(stopped, BEFORE, AFTER, "keys", execute=False)
    done = improve(Unit(BEFORE, AFTER, "keys"), stopped, llm=llm_for(fake_anthropic),
                   budget=proof_only)
    assert done.checked is None and not fake_anthropic.requests


def test_verify_claims_checks_a_statement_correspondence_from_a_file(tmp_path: Path) -> None:
    import io
    import json

    from veribot.bot.cli import main

    (tmp_path / "before.py").write_text(BEFORE, encoding="utf-8")
    hint = {"kind": "correspondence", "statements": {"5": 6, "6": 5}}
    for after, code_wanted, line in (
        (AFTER, 0, f"hint proven, used by the proof: {HINT}"),
        (AFTER_CHANGED, 1, f"hint unproven: {HINT}"),
    ):
        (tmp_path / "after.py").write_text(after, encoding="utf-8")
        path = tmp_path / "claims.json"
        path.write_text(json.dumps({"version": 1, "units": [{"entry": "keys",
                                                             "hints": [hint]}]}))
        out, err = io.StringIO(), io.StringIO()
        code = main(["verify-claims", str(path), "--files", str(tmp_path / "before.py"),
                     str(tmp_path / "after.py"), "--timeout", "8"], environ={}, stdout=out,
                    stderr=err)
        assert code == code_wanted, out.getvalue() + err.getvalue()
        assert line in out.getvalue()
        verified = out.getvalue().startswith("verified")
        assert verified is (after == AFTER)


def test_nothing_is_asked_for_a_unit_the_reviews_budget_left_unchecked(
    fake_anthropic: FakeAnthropic,
) -> None:
    """A unit cut by the review's budget was never checked: no hints for it, from the
    archive or the agent (the same pair, stopped by the engine, is one a hint may help)."""
    cut = Result(Verdict.INCONCLUSIVE, Reason.BUDGET, "not checked: the budget was spent")
    assert relational.unmatched(pysource.parse(BEFORE), pysource.parse(AFTER), "keys", None)
    assert not hint_may_help(cut, BEFORE, AFTER, "keys")
    done = improve(Unit(BEFORE, AFTER, "keys"), cut, llm=llm_for(fake_anthropic),
                   budget=BUDGET)
    assert done.checked is None and done.model_calls == 0 and not fake_anthropic.requests
