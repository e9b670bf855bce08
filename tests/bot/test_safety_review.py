"""Crash safety in the review: added functions and changed ones not proven to behave as
before get a safety verdict; a changed function's crash is told apart as added by the
change or there before; the text, JSON and Markdown reports show it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bot.gitrepos import GitRepo
from tests.bot.schema_check import validate_report_json
from veribot.bot.render import render
from veribot.bot.review import GitSource, Report, ReviewRequest, UnitResult, review
from veribot.checks.equivalence import Budget
from veribot.checks.typewarn import mypy_available

BASE = b'''def scale(x: int) -> int:
    return x * 2


def shift(x: int) -> int:
    return x + 1


def half(x: int) -> int:
    return x // 2


def inverse(x: int) -> float:
    return 1 / x
'''

HEAD = b'''def scale(x: int) -> int:
    return 2 * x


def shift(x: int) -> int:
    return 100 // (x - 4)


def half(x: int) -> int:
    if x == 3:
        return 0
    return x // 2


def inverse(x: int) -> float:
    if x == 7:
        return 0.5
    return 1 / x


def ratio(a: int, b: int) -> float:
    return a / b


def clamp(x: int, lo: int, hi: int) -> int:
    if x < lo:
        return lo
    return hi if x > hi else x
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    repo = GitRepo(tmp_path_factory.mktemp("safety") / "repo")
    repo.commit("base", {"calc.py": BASE})
    repo.commit("head", {"calc.py": HEAD})
    return review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                budget=Budget(timeout_s=8.0)))


def _items(report: Report) -> dict[str, UnitResult]:
    return {i.unit.entry: i for i in report.items}


def test_added_functions_get_a_safety_verdict(report: Report) -> None:
    found = _items(report)
    ratio = found["ratio"].safety
    assert ratio is not None and ratio.result.verdict == "unsafe", ratio
    assert ratio.result.exception == "ZeroDivisionError" and ratio.result.call.endswith("0")
    assert ratio.added_crash is None  # no base version to compare with
    clamp = found["clamp"].safety
    assert clamp is not None and clamp.result.verdict == "safe", clamp


def test_a_crash_the_change_adds_is_told_from_one_that_was_there(report: Report) -> None:
    found = _items(report)
    added = found["shift"].safety
    assert added is not None and added.result.verdict == "unsafe"
    assert added.result.call == "4" and added.added_crash is True
    assert added.before == "returns 5"
    old = found["inverse"].safety
    assert old is not None and old.result.verdict == "unsafe" and old.result.call == "0"
    assert old.added_crash is False  # `1 / 0` raised before the change too


def test_a_verified_change_is_not_asked_and_a_safe_change_says_so(report: Report) -> None:
    found = _items(report)
    assert found["scale"].result.verdict.value == "verified"
    assert found["scale"].safety is None
    half = found["half"].safety
    assert half is not None and half.result.verdict == "safe"


def test_the_reports_show_the_safety_verdicts(report: Report) -> None:
    text = render(report, "text")
    assert "safety: unsafe (crash): `shift(4)` raises ZeroDivisionError" in text
    assert "an added crash: before the change it returns 5" in text
    doc = json.loads(render(report, "json"))
    validate_report_json(doc)
    units = {u["entry"]: u for u in doc["units"]}
    assert units["shift"]["safety"]["added_crash"] is True
    assert units["shift"]["safety"]["input"] == "4"
    assert units["scale"]["safety"] is None
    markdown = render(report, "markdown")
    assert "**Crash safety**" in markdown
    assert "3 unsafe, 2 safe" in markdown
    assert "**unsafe** (an added crash)" in markdown
    # The added crash is the first row of the table.
    rows = [line for line in markdown.splitlines() if line.startswith("| 💥")]
    assert rows and "calc.py::shift" in rows[0]


def test_running_code_off_keeps_the_crash_unconfirmed(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"calc.py": BASE})
    repo.commit("head", {"calc.py": HEAD})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0, execute=False),
                                  select=lambda u: u.entry == "ratio"))
    (item,) = report.items
    assert item.safety is not None and item.safety.result.verdict == "inconclusive"
    assert item.safety.result.reason == "not-executed"
    assert "mypy was not run" in report.safety_note  # no process reads the code


WARNED = b'''def count3(xs: list[int] | None) -> int:
    return xs.count(3)


def pick(flag: bool) -> int:
    if flag:
        y = 1
    return y


def both(x: int | None, y: int) -> int:
    if y > 0 and x is None:
        return 0
    if y > 0:
        return x + 1
    return y
'''


@pytest.mark.skipif(not mypy_available(), reason="mypy is not installed")
def test_type_checker_warnings_become_questions_with_answers(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"calc.py": BASE})
    repo.commit("head", {"calc.py": BASE + b"\n\n" + WARNED})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0)))
    found = _items(report)
    answers = {}
    for entry in ("count3", "pick", "both"):
        finding = found[entry].safety
        assert finding is not None
        ((warning, answer),) = finding.warnings  # one warning in each
        answers[entry] = (warning.code, answer.verdict, answer.call)
    assert answers == {"count3": ("union-attr", "unsafe", "None"),
                       "pick": ("possibly-undefined", "unsafe", "False"),
                       "both": ("operator", "safe", "")}
    text = render(report, "text")
    assert "mypy line 31 [operator]" in text and "false alarm, proven safe" in text
    assert "real: `pick(False)` raises UnboundLocalError" in text
    doc = json.loads(render(report, "json"))
    validate_report_json(doc)
    units = {u["entry"]: u for u in doc["units"]}
    assert units["both"]["safety"]["warnings"][0]["answer"] == "safe"
    markdown = render(report, "markdown")
    assert "**Type-checker warnings** (mypy) in these functions: 3: 2 real, 1 false alarm" in (
        markdown)


def test_without_mypy_the_report_says_its_warnings_were_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A machine without mypy: `find_spec` is what tells (the library's own check).
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mypy" else real(name, *a))
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"calc.py": BASE})
    repo.commit("head", {"calc.py": BASE + b"\n\n" + WARNED})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0), select=lambda u: u.entry == "pick"))
    assert "mypy is not installed" in report.safety_note
    assert "mypy is not installed" in render(report, "markdown")
    (item,) = report.items
    assert item.safety is not None and item.safety.result.verdict == "unsafe"
    assert item.safety.warnings == ()


PRIVATE = b'''def _inverse(x: int) -> float:
    return 1 / x


def spread(n: int) -> float:
    return _inverse(abs(n) + 1)


def exposed(n: int) -> float:
    return _inverse(n)
'''


def test_a_private_helper_whose_callers_never_reach_its_crash_says_so(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/calc.py": BASE})
    safe_callers = PRIVATE.replace(b"\n\n\ndef exposed(n: int) -> float:\n"
                                   b"    return _inverse(n)\n", b"\n")
    repo.commit("head", {"pkg/calc.py": BASE + b"\n\n" + safe_callers})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0),
                                  select=lambda u: u.entry in ("_inverse", "spread")))
    found = _items(report)
    helper = found["_inverse"].safety
    assert helper is not None and helper.result.verdict == "unsafe"
    assert helper.callers_safe == ("spread",)
    assert "its callers never reach it" in render(report, "markdown")
    validate_report_json(json.loads(render(report, "json")))


def test_a_caller_that_reaches_the_crash_keeps_the_helper_plainly_unsafe(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/calc.py": BASE})
    repo.commit("head", {"pkg/calc.py": BASE + b"\n\n" + PRIVATE})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0),
                                  select=lambda u: u.entry == "_inverse"))
    (item,) = report.items
    assert item.safety is not None and item.safety.result.verdict == "unsafe"
    assert item.safety.callers_safe == ()  # `exposed(0)` reaches it
