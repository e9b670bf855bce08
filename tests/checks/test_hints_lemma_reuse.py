"""A lemma the agent proposed about an unchanged helper, proven by Z3, completes one pull
request's proof and is reused, from the archive and with zero model calls, by a later pull
request that changes a different function calling the same helper.

The recorded conversation is replayed through the real ``anthropic`` client against the
fake Messages API; the pull requests are branches of a real git repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.gitrepos import GitRepo
from tests.fakes import FakeAnthropic, anthropic_llm, load_recording
from tests.fakes import fake_anthropic as fake_anthropic  # the fixture
from veribot.bot.agentreview import AgentConfig
from veribot.bot.hintreview import improve_units
from veribot.bot.llm import AnthropicLLM
from veribot.bot.review import GitSource, ReviewRequest, UnitResult, review
from veribot.checks.agent.llm import LLMBudget, UsageMeter
from veribot.checks.equivalence import Budget
from veribot.checks.hints.archive import Archive, unit_keys
from veribot.checks.hints.check import check_hints, engine_stopped
from veribot.checks.hints.format import parse_hints
from veribot.checks.hints.model import Status
from veribot.checks.verdict import Result, Verdict

# `sq` is the same in every version, so the engine models it as one arbitrary function
# shared by both versions: `max(sq(v + 1), 0) == sq(v + 1)` needs `sq` never negative.
MODULE = """\
def sq(x: int) -> int:
    return x * x


def energy(v: int) -> int:
    return {energy}


def spread(a: int, b: int) -> int:
    return {spread}
"""
BASE = MODULE.format(energy="max(sq(v + 1), 0)", spread="abs(sq(a - b))")
PR1 = MODULE.format(energy="sq(v + 1)", spread="abs(sq(a - b))")  # changes `energy`
PR2 = MODULE.format(energy="sq(v + 1)", spread="sq(a - b)")  # later: changes `spread`
PATH = "geo/metrics.py"
LEMMA = "lemma on `sq`: ensures `result >= 0`"
BUDGET = Budget(timeout_s=30, search=False)
_OPEN: list[AnthropicLLM] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def agent_for(fake: FakeAnthropic, meter: UsageMeter | None = None) -> AgentConfig:
    llm = anthropic_llm(fake, meter=meter)
    _OPEN.append(llm)
    return AgentConfig(llm=llm, meter=meter)


def reviewed(repo: GitRepo, base: str, head: str) -> UnitResult:
    """The engine's verdict on the one function ``head`` changes (no hints, no model)."""
    report = review(ReviewRequest(GitSource(repo.path, base, head), budget=BUDGET))
    (item,) = [i for i in report.items if i.unit.is_function]
    return item


def with_hints(item: UnitResult, agent: AgentConfig, archive: Path) -> Result:
    (result,) = improve_units([item.unit], [item.result], agent, BUDGET, archive, "o/r")
    return result


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("metrics", {PATH: BASE.encode()})
    repo.git("checkout", "-q", "-b", "pr1")
    repo.commit("energy: drop the guard", {PATH: PR1.encode()})
    repo.git("checkout", "-q", "main")
    return repo


def test_a_recorded_lemma_completes_one_pr_and_is_reused_by_another_without_asking(
    fake_anthropic: FakeAnthropic, repo: GitRepo, tmp_path: Path
) -> None:
    archive = tmp_path / "data" / "hints.sqlite3"
    # Pull request 1 changes `energy`. Alone the engine cannot decide it: with `sq` an
    # arbitrary function, the solver's inputs do not reproduce a difference for real.
    first = reviewed(repo, "main", "pr1")
    assert first.unit.entry == "energy"
    assert first.result.verdict is Verdict.INCONCLUSIVE and engine_stopped(first.result)
    # The agent proposes a lemma about `sq`; Z3 proves it on the body of `sq`, and the
    # proof of `energy` over every `sq` satisfying it goes through.
    fake_anthropic.script(load_recording("hints_sq_lemma"))
    done = with_hints(first, agent_for(fake_anthropic), archive)
    assert not fake_anthropic.problems  # a request the real API accepts
    assert len(fake_anthropic.requests) == 1
    assert done.verdict is Verdict.VERIFIED
    assert done.method.startswith("z3+hints")
    assert LEMMA in done.detail and "proven on the body of `sq`" in done.detail
    assert f"hint proven, used by the proof: {LEMMA}" in "\n".join(done.notes)
    prompt = fake_anthropic.bodies[0]["messages"][0]["content"][0]["text"]
    assert "max(sq(v + 1), 0)" in prompt

    # Pull request 1 is merged; pull request 2, later, changes `spread`, another function
    # calling the same, unchanged `sq`. Its unit is not the one the lemma was found for.
    repo.git("merge", "-q", "--ff-only", "pr1")
    repo.git("checkout", "-q", "-b", "pr2")
    repo.commit("spread: drop the abs", {PATH: PR2.encode()})
    second = reviewed(repo, "main", "pr2")
    assert second.unit.entry == "spread"
    assert second.result.verdict is Verdict.INCONCLUSIVE and engine_stopped(second.result)
    keys_1, keys_2 = unit_keys(BASE, PR1, "energy"), unit_keys(PR1, PR2, "spread")
    assert keys_1 is not None and keys_2 is not None
    assert keys_1.unit != keys_2.unit and keys_1.helpers == keys_2.helpers
    # The archive answers: the fake has nothing more scripted, so a model call would fail
    # the test; the meter counts none.
    meter = UsageMeter(LLMBudget())
    again = with_hints(second, agent_for(fake_anthropic, meter), archive)
    assert len(fake_anthropic.requests) == 1
    assert meter.report().calls == 0
    assert again.verdict is Verdict.VERIFIED
    assert again.method.startswith("z3+hints")
    # Proven again on `sq`'s body before use: the archive saves the model call, not a proof.
    assert LEMMA in again.detail and "proven on the body of `sq`" in again.detail
    assert f"hint proven, used by the proof: {LEMMA}" in "\n".join(again.notes)


def test_the_archived_lemma_is_not_used_once_the_helper_changed(
    fake_anthropic: FakeAnthropic, repo: GitRepo, tmp_path: Path
) -> None:
    archive = tmp_path / "data" / "hints.sqlite3"
    fake_anthropic.script(load_recording("hints_sq_lemma"))
    proven = with_hints(reviewed(repo, "main", "pr1"), agent_for(fake_anthropic), archive)
    assert proven.verdict is Verdict.VERIFIED
    stored = Archive(archive)
    keys = unit_keys(BASE, PR1, "energy")
    assert keys is not None and [h.text for h in stored.lookup("o/r", keys.all())] == [LEMMA]
    # Later `sq` itself is edited on main (it may now return -1) and a pull request drops
    # the abs in `spread`: the lemma is about code that no longer exists, and is false of
    # the new `sq`; the difference is real (a == b: 1 before, -1 after).
    repo.git("merge", "-q", "--ff-only", "pr1")
    edited = PR1.replace("x * x", "x * x - 1")
    repo.commit("sq: shifted", {PATH: edited.encode()})
    repo.git("checkout", "-q", "-b", "pr3")
    repo.commit("spread: drop the abs", {PATH: edited.replace("abs(sq(a - b))",
                                                              "sq(a - b)").encode()})
    item = reviewed(repo, "main", "pr3")
    assert item.unit.entry == "spread"
    assert item.result.verdict is Verdict.REFUTED
    keys_3 = unit_keys(edited, edited.replace("abs(sq(a - b))", "sq(a - b)"), "spread")
    assert keys_3 is not None and stored.lookup("o/r", keys_3.all()) == []
    # Even offered by hand, the old lemma is refuted on the new body and changes nothing.
    checked = check_hints(edited, edited.replace("abs(sq(a - b))", "sq(a - b)"), "spread",
                          parse_hints([{"kind": "lemma", "function": "sq",
                                        "ensures": "result >= 0"}]), budget=BUDGET)
    assert checked.result.verdict is not Verdict.VERIFIED
    assert checked.hints[0].status is Status.REFUTED
    done = with_hints(item, agent_for(fake_anthropic), archive)
    assert done.verdict is not Verdict.VERIFIED
    assert len(fake_anthropic.requests) == 1  # refuted by the engine: nothing to ask
