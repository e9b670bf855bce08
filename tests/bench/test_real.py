"""The real-commits harness: a repository built here, and two commits of the shared corpus."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from veribot.bench import real
from veribot.bot.cli import main

# ../shared of the repository (a worktree under wt/ has it one level further up).
_ROOT = Path(__file__).resolve().parents[2]
SHARED_REAL = next(
    (p / "shared" / "bench" / "real" for p in (_ROOT.parent, _ROOT.parent.parent)
     if (p / "shared" / "bench" / "real").is_dir()),
    _ROOT.parent / "shared" / "bench" / "real",
)

BEFORE = (
    "def inc(x: int) -> int:\n    return x + 1\n\n\n"
    "def dec(x: int) -> int:\n    return x - 1\n"
)
AFTER = (
    "def inc(x: int) -> int:\n    return 1 + x\n\n\n"
    "def dec(x: int) -> int:\n    return x - 2\n"
)
TEST_BEFORE = "def test_inc() -> None:\n    assert 1 == 1\n"
TEST_AFTER = "def test_inc() -> None:\n    assert 2 == 2\n"


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _bundle(tmp_path: Path) -> tuple[Path, str]:
    """A repository with two commits, bundled as ``repos/demo.bundle``; the head commit."""
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    _git(work, "init", "--quiet")
    (work / "mod.py").write_text(BEFORE)
    (work / "tests" / "test_mod.py").write_text(TEST_BEFORE)
    _git(work, "add", ".")
    _git(work, "commit", "--quiet", "-m", "first")
    (work / "mod.py").write_text(AFTER)
    (work / "tests" / "test_mod.py").write_text(TEST_AFTER)
    _git(work, "commit", "--quiet", "-am", "second")
    head = _git(work, "rev-parse", "HEAD")
    repos = tmp_path / "repos"
    repos.mkdir()
    _git(work, "bundle", "create", str(repos / "demo.bundle"), "--all")
    return repos, head


def test_reviews_a_commit_of_a_bundle_against_its_parent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repos, head = _bundle(tmp_path)
    commits = tmp_path / "commits.jsonl"
    record = {"repo": "demo", "commit": head, "intent": "refactor", "subject": "second"}
    commits.write_text(json.dumps(record) + "\n")
    out = tmp_path / "units.jsonl"
    code = main(
        ["bench-real", str(commits), "--repos", str(repos), "--out", str(out), "--timeout", "10",
         "--jobs", "2"]
    )
    assert code == 0
    units = {r["unit"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert units["mod.py::inc"]["verdict"] == "verified"
    assert units["mod.py::inc"]["method"]  # how it was proven
    assert units["mod.py::dec"]["verdict"] == "refuted"
    assert units["mod.py::inc"]["counted"] and units["mod.py::dec"]["counted"]
    # The test file's function is reviewed and written, but not counted as a non-test unit.
    assert not units["tests/test_mod.py::test_inc"]["counted"]
    assert real.summarise_file(out.read_text().splitlines()) == {
        "refactor": {"verified": 1, "refuted": 1}
    }
    assert units["mod.py::dec"]["counterexample"]  # the input that shows it, as literals
    # What the refutation means for the commit ("second" declares nothing; no test calls
    # `dec`): an untested behaviour change. A verdict that is not a refutation has none.
    assert units["mod.py::dec"]["meaning"] == "untested behaviour change"
    assert units["mod.py::inc"]["meaning"] is None
    assert isinstance(units["mod.py::inc"]["assumptions"], list)
    summary = capsys.readouterr().out
    assert "refactor" in summary and "all" in summary
    # One commit, flagged: a changed non-test function was refuted.
    row = next(line for line in summary.splitlines() if line.startswith("refactor"))
    assert row.split()[1:3] == ["1", "1"]


def test_an_unlabelled_commit_of_a_repository_folder_counts_by_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records drawn by sample_commits.py carry no intent; repositories may be clones."""
    repos, head = _bundle(tmp_path)
    (repos / "demo.bundle").rename(tmp_path / "elsewhere.bundle")
    _git(tmp_path, "clone", "--quiet", str(tmp_path / "work"), str(repos / "demo"))
    commits = tmp_path / "commits.jsonl"
    commits.write_text(json.dumps({"repo": "demo", "commit": head, "subject": "second",
                                   "py_files": ["mod.py"], "py_lines": 4}) + "\n")
    out = tmp_path / "units.jsonl"
    code = main(["bench-real", str(commits), "--repos", str(repos), "--out", str(out),
                 "--timeout", "10"])
    assert code == 0
    assert real.summarise_file(out.read_text().splitlines()) == {
        "unlabelled": {"verified": 1, "refuted": 1}
    }
    summary = capsys.readouterr().out
    project = next(line for line in summary.splitlines() if line.startswith("demo"))
    # commits, flagged, units, verified, refuted, inconclusive, decided
    assert project.split()[1:8] == ["1", "1", "2", "1", "1", "0", "100%"]
    assert "most frequent inconclusive reasons (0 units)" in summary


def test_a_missing_bundle_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commits = tmp_path / "commits.jsonl"
    commits.write_text(json.dumps({"repo": "nope", "commit": "0" * 40, "intent": "docs",
                                   "subject": "s"}) + "\n")
    code = main(["bench-real", str(commits), "--repos", str(tmp_path)])
    assert code == 2
    assert "no bundle" in capsys.readouterr().err


def test_a_bad_record_is_a_usage_error(tmp_path: Path) -> None:
    commits = tmp_path / "commits.jsonl"
    commits.write_text('{"repo": "x"}\n')
    with pytest.raises(real.RealFormatError, match="needs string fields"):
        real.read_records(commits)


# Real commits of the corpus are a benchmark-sized run (`pytest -m heavy`); the default run
# keeps the harness on the repository built above.
@pytest.mark.heavy
@pytest.mark.skipif(not (SHARED_REAL / "commits.jsonl").is_file(), reason="no ../shared corpus")
def test_two_corpus_commits(tmp_path: Path) -> None:
    out = tmp_path / "units.jsonl"
    code = main(
        [
            "bench-real",
            str(SHARED_REAL / "commits.jsonl"),
            "--repos",
            str(SHARED_REAL / "repos"),
            "--out",
            str(out),
            "--limit",
            "2",
            "--timeout",
            "5",
        ]
    )
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["commit"][:10] for r in records} == {"237388cc32", "63243787b0"}
    assert all(r["verdict"] in ("verified", "refuted", "inconclusive", "skipped") for r in records)
    assert any(r["counted"] for r in records)
