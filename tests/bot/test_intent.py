"""What a refutation means for the pull request: tested, untested, or a refactoring that
changes behaviour; and the exit code's default policy that follows.

Real git repositories; the pinning test veribot offers is run with pytest on both
revisions (it passes on the head, fails on the base).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from tests.bot.gitrepos import GitRepo
from veribot.bot.cli import main
from veribot.bot.intent import Intent, declared_refactoring, intents
from veribot.bot.review import FailOn, GitSource, Report, ReviewRequest, review
from veribot.checks.equivalence import Budget
from veribot.checks.verdict import Verdict

BASE = b"def suffix(n: int) -> str:\n    return 'th' if n > 3 else 'st'\n"
# The fix: 2 -> "nd" (and 11, 12 stay "th").
HEAD = (b"def suffix(n: int) -> str:\n    if n == 2:\n        return 'nd'\n"
        b"    return 'th' if n > 3 else 'st'\n")
TEST = (b"from pkg.words import suffix\n\n\ndef test_second() -> None:\n"
        b"    assert suffix(2) == 'nd'\n")


def _repo(tmp_path: Path, subject: str, with_test: bool) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/words.py": BASE,
                         "tests/test_words.py": b"def test_nothing() -> None:\n    pass\n"})
    head = {"pkg/words.py": HEAD}
    if with_test:
        head["tests/test_words.py"] = TEST
    repo.commit(subject, head)
    return repo


def _review(repo: GitRepo) -> Report:
    return review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                budget=Budget(timeout_s=10)))


def _refuted(report: Report) -> tuple[int, Report]:
    (index,) = [n for n, i in enumerate(report.items)
                if i.unit.qualname == "pkg/words.py::suffix"]
    assert report.items[index].result.verdict is Verdict.REFUTED, report.items[index].result
    return index, report


def test_a_difference_a_new_test_shows_is_tested_and_passes_the_default_policy(
        tmp_path: Path) -> None:
    index, report = _refuted(_review(_repo(tmp_path, "Fix the suffix of 2", with_test=True)))
    found = intents(report, report.declared)[index]
    assert found.intent is Intent.TESTED, found
    # The test itself ran on both revisions in the sandbox: it fails before, passes after.
    assert found.why.startswith("the test `tests/test_words.py::test_second`, which this "
                                "change adds, fails before (AssertionError"), found.why
    assert found.why.endswith("and passes after"), found.why
    (run,) = report.tests
    assert (run.before.kind, run.after.kind, run.observes) == ("failed", "passed", True)
    assert not report.failed(FailOn.UNTESTED)
    assert report.failed(FailOn.REFUTED)


def test_a_changed_test_making_the_call_but_passing_on_both_revisions_is_no_evidence(
        tmp_path: Path) -> None:
    """The changed test calls ``suffix(2)``, the very input that shows the difference, but
    asserts nothing that tells the versions apart: run on both revisions it passes both
    times, so the change is untested (the call alone once made it "tested")."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/words.py": BASE,
                         "tests/test_words.py": b"def test_nothing() -> None:\n    pass\n"})
    repo.commit("Fix the suffix of 2", {"pkg/words.py": HEAD, "tests/test_words.py": (
        b"from pkg.words import suffix\n\n\ndef test_second() -> None:\n"
        b"    assert suffix(2) in ('nd', 'st')\n")})
    index, report = _refuted(_review(repo))
    assert report.items[index].result.counterexample is not None
    assert "tests/test_words.py line 5" in report.items[index].result.counterexample.found_by
    found = intents(report, report.declared)[index]
    assert found.intent is Intent.UNTESTED and found.test, found
    assert "(`tests/test_words.py::test_second`) passes on both revisions" in found.why
    assert report.failed(FailOn.UNTESTED)


def test_an_untested_difference_fails_and_offers_a_test_that_pins_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "Fix the suffix of 2", with_test=False)
    index, report = _refuted(_review(repo))
    found = intents(report, report.declared)[index]
    assert found.intent is Intent.UNTESTED and found.test, found
    assert report.failed(FailOn.UNTESTED)
    # The offered test is real: pytest passes it on the head and fails it on the base.
    (repo.path / "tests" / "test_pinned.py").write_text(found.test, encoding="utf-8")

    def pytest_on(rev: str) -> int:
        repo.git("checkout", "-q", rev, "--", "pkg/words.py")
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/test_pinned.py"], cwd=repo.path, capture_output=True,
            env={"PYTHONPATH": str(repo.path), "PATH": "/usr/bin:/bin"}, check=False,
        ).returncode

    assert pytest_on("HEAD") == 0
    assert pytest_on("HEAD~1") == 1
    # The command line's default policy fails it (exit 1), and says why.
    out = io.StringIO()
    code = main(["review", "--repo", str(repo.path), "--base", "HEAD~1", "--timeout", "10"],
                environ={}, stdout=out, stderr=io.StringIO())
    assert code == 1 and "untested behaviour change" in out.getvalue()


def test_a_change_declared_a_refactoring_fails_on_any_difference(tmp_path: Path) -> None:
    index, report = _refuted(_review(_repo(tmp_path, "refactor(words): simplify suffix",
                                           with_test=True)))
    assert report.declared == "refactor(words): simplify suffix"
    found = intents(report, report.declared)[index]
    assert found.intent is Intent.REFACTORING, found
    assert report.failed(FailOn.UNTESTED)


def test_what_declares_a_refactoring() -> None:
    assert declared_refactoring(["fix: x", "perf: faster loop"]) == "perf: faster loop"
    assert declared_refactoring(["docs!: reword\n\nbody"]) == "docs!: reword"
    assert declared_refactoring(["[style] black"]) == "[style] black"
    assert declared_refactoring(["Refactoring the parser", "fix(refactor): z"]) == ""
    # Commit subjects declare it only all together: a feature with a tidying commit is no
    # refactoring.
    assert declared_refactoring([], ["refactor: a", "style: b"]) == "refactor: a"
    assert declared_refactoring([], ["refactor: a", "feat: b"]) == ""
    assert declared_refactoring(["feat: y"], labels=["Refactor"],
                                declaring_labels=["refactor"]) == "label `Refactor`"


HELPER_BASE = (b"def _fmt(x: int) -> int:\n    return x * 2\n\n\n"
               b"def show(x: int) -> int:\n    return _fmt(x) + 1\n")
# The helper gained a parameter; its one caller passes it, and behaves as before.
HELPER_HEAD = (b"def _fmt(x: int, k: int) -> int:\n    return x * k\n\n\n"
               b"def show(x: int) -> int:\n    return _fmt(x, 2) + 1\n")


def _helper_review(tmp_path: Path, head: bytes, extra: dict[str, bytes] | None = None
                   ) -> tuple[Report, dict[str, Verdict]]:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/fmt.py": HELPER_BASE})
    repo.commit("Signs", {"pkg/fmt.py": head, **(extra or {})})
    report = _review(repo)
    return report, {i.unit.entry: i.result.verdict for i in report.items
                    if i.unit.path == "pkg/fmt.py"}


def test_a_private_helper_changed_with_every_caller_is_judged_through_them(
        tmp_path: Path) -> None:
    report, verdicts = _helper_review(tmp_path, HELPER_HEAD)
    assert verdicts == {"_fmt": Verdict.REFUTED, "show": Verdict.VERIFIED}, report.items
    (found,) = intents(report, report.declared).values()
    assert found.intent is Intent.INTERNAL and "`show`" in found.why, found
    assert not report.failed(FailOn.UNTESTED)


def test_a_private_helper_named_by_another_file_is_judged_on_its_own(tmp_path: Path) -> None:
    other = {"pkg/use.py": b"from pkg.fmt import _fmt\n\n\ndef go() -> int:\n"
                           b"    return _fmt(1, 3)\n"}
    report, verdicts = _helper_review(tmp_path, HELPER_HEAD, other)
    assert verdicts["_fmt"] is Verdict.REFUTED
    (found,) = [f for n, f in intents(report, report.declared).items()
                if report.items[n].unit.entry == "_fmt"]
    assert found.intent is Intent.UNTESTED, found
    assert report.failed(FailOn.UNTESTED)


def test_a_private_helper_whose_unchanged_caller_sees_the_change_is_untested(
        tmp_path: Path) -> None:
    head = HELPER_BASE.replace(b"return x * 2\n", b"return x * 3\n")
    report, verdicts = _helper_review(tmp_path, head)
    assert verdicts == {"_fmt": Verdict.REFUTED}  # `show` is not a unit: its code is the same
    (found,) = intents(report, report.declared).values()
    assert found.intent is Intent.UNTESTED, found
