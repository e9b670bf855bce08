"""`veribot review/compare --no-execute`: proof-only, nothing of the code under review runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.bot.gitrepos import GitRepo
from tests.bot.processes import Started, could_run_code, started_processes
from tests.fakes import FakeAnthropic, analyzer_answer, anthropic_llm, formalizer_facts
from veribot.bot.agentreview import AgentConfig
from veribot.bot.cli import EXIT_FAILED, EXIT_OK, main
from veribot.bot.review import GitSource, Report, ReviewRequest, review
from veribot.checks.agent.pipeline import AgentLimits
from veribot.checks.agent.verdict import Status
from veribot.checks.equivalence import Budget
from veribot.checks.verdict import Verdict

ADD = "def add(a: int, b: int) -> int:\n    return {}\n"
BEFORE = "def neg(x: int) -> int:\n    return -x\n\n\n" + ADD.format("a + b")
AFTER = "def neg(x: int) -> int:\n    return x\n\n\n" + ADD.format("b + a")


def verdicts(*argv: str) -> tuple[int, dict[str, tuple[str, str]]]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--format", "json"], environ={"CI": "1"}, stdout=out, stderr=err)
    assert code in (EXIT_OK, EXIT_FAILED), err.getvalue()
    units = json.loads(out.getvalue())["units"]
    return code, {u["entry"]: (u["verdict"], u["reason"]) for u in units}


def test_compare_no_execute_never_refutes(tmp_path: Path) -> None:
    (tmp_path / "before.py").write_text(BEFORE)
    (tmp_path / "after.py").write_text(AFTER)
    files = (str(tmp_path / "before.py"), str(tmp_path / "after.py"))
    code, found = verdicts("compare", *files)
    assert code == EXIT_FAILED and found["neg"][0] == "refuted"
    code, found = verdicts("compare", *files, "--no-execute")
    assert code == EXIT_OK
    assert found == {"neg": ("inconclusive", "not-executed"), "add": ("verified", "proof")}


def test_review_no_execute(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit("base", {"m.py": BEFORE.encode()})
    repo.commit("change", {"m.py": AFTER.encode()})
    code, found = verdicts("review", "--repo", str(repo.path), "--base", base, "--no-execute")
    assert code == EXIT_OK
    assert found["neg"] == ("inconclusive", "not-executed")


# -- no process that could run the pull request's code is started -----------------------------
# (observed at the operating-system boundary: see tests/bot/processes.py)


# y is computed differently, so a varMap claim on it is an obligation for the prover,
# which loads the whole module when it may execute: its import alone runs the PR's code.
SQ_BEFORE = b"def sq(x: int) -> int:\n    y = x * x\n    return y\n"
SQ_AFTER = b"def sq(x: int) -> int:\n    y = x * 2\n    return y\n"
Y_CLAIM = {"pred": "varMap", "args": ["y", "before", 2, "y", "after", 2]}


def _agent_review(
    tmp_path: Path, fake_anthropic: FakeAnthropic, *, execute: bool
) -> tuple[Report, list[Started]]:
    repo = GitRepo(tmp_path / f"repo-{execute}")
    base = repo.commit("base", {"m.py": SQ_BEFORE})
    repo.commit("change", {"m.py": SQ_AFTER})
    fake_anthropic.script(
        analyzer_answer("equivalent", "Same value."), formalizer_facts("sq", 1, "x", Y_CLAIM)
    )
    llm = anthropic_llm(fake_anthropic)
    request = ReviewRequest(
        GitSource(repo.path, base),
        budget=Budget(timeout_s=8.0, execute=execute),
        # one formalizer round: the facts leave code out, and a second round is not scripted
        agent=AgentConfig(llm=llm, limits=AgentLimits(omission_rounds=0)),
    )
    try:
        with started_processes() as started:
            report = review(request)
    finally:
        llm.close()
    assert not fake_anthropic.problems and fake_anthropic.remaining == 0
    return report, started


def test_checking_the_agents_claims_runs_no_code_in_proof_only_mode(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    report, started = _agent_review(tmp_path, fake_anthropic, execute=True)
    assert [p for p in started if could_run_code(p)]  # the detector sees sandbox children
    report, started = _agent_review(tmp_path, fake_anthropic, execute=False)
    assert [p for p in started if could_run_code(p)] == []
    (item,) = report.items
    assert item.result.verdict is Verdict.INCONCLUSIVE
    assert item.agent is not None
    (claim,) = [c for c in item.agent.claims if c.fact.startswith('varMap("y"')]
    assert claim.status is Status.UNCHECKED  # neither refuted by running it nor proven
