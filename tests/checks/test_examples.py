"""Docstring examples (`>>>`) run beside each revision's code, in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bot.gitrepos import GitRepo
from tests.bot.schema_check import validate_report_json
from veribot.bot.render import render
from veribot.bot.review import GitSource, ReviewRequest, review
from veribot.checks.equivalence import Budget
from veribot.checks.search.examples import docstring_of, has_examples, run_examples

HEAD = '''def ordinal(n: int) -> str:
    """The ordinal of ``n``.

    >>> ordinal(1)
    '1st'
    >>> ordinal(11)
    '11th'
    >>> ordinal(2)  # doctest: +ELLIPSIS
    '2...'
    """
    if n % 10 == 1:
        return f"{n}st"
    return f"{n}th"
'''
BASE = HEAD.replace("if n % 10 == 1:", "if n == 1:")


def test_each_example_runs_beside_each_revision() -> None:
    doc = docstring_of(HEAD, "ordinal")
    assert doc is not None and has_examples(doc)
    runs = run_examples("ordinal", doc, HEAD, None, BASE, None)
    assert [(r.after[0], r.before[0] if r.before else None) for r in runs] == [
        ("passed", "passed"), ("failed", "passed"), ("passed", "passed")]
    broken = runs[1]
    assert broken.fails and broken.after[1].strip() == "'11st'"
    assert "fails on the head revision: expected `'11th'`, got `'11st'`" in broken.text()
    assert "(on the base revision: passed)" in broken.text()


def test_an_exception_where_none_is_expected_is_an_error_and_an_expected_one_passes() -> None:
    source = ('def f(x: int) -> float:\n    """\n    >>> f(0)\n    Traceback (most recent '
              'call last):\n    ...\n    ZeroDivisionError: division by zero\n    >>> f(2)\n'
              '    0.5\n    >>> f(-0)\n    0.0\n    """\n    return 1 / x\n')
    runs = run_examples("f", docstring_of(source, "f") or "", source, None)
    assert [r.after[0] for r in runs] == ["passed", "passed", "error"]
    assert runs[2].after[1].startswith("ZeroDivisionError") and runs[2].before is None


def test_a_module_that_does_not_import_runs_no_example() -> None:
    source = ('import no_such_module_here\n\n\ndef f() -> int:\n    """\n    >>> f()\n'
              '    1\n    """\n    return 1\n')
    (run,) = run_examples("f", docstring_of(source, "f") or "", source, None)
    assert run.after[0] == "not-run" and "did not import" in run.after[1]
    assert not run.fails


def test_no_examples_and_a_malformed_docstring() -> None:
    assert not has_examples(None) and not has_examples("Just text.")
    assert not has_examples(">>>bad")  # no space after the prompt: doctest refuses it
    assert docstring_of("def f():\n    return 1\n", "f") is None
    assert docstring_of("class C:\n    def m(self):\n        '''>>> 1'''\n", "C.m") == ">>> 1"


def test_the_review_reports_a_failing_example_of_a_changed_function(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/words.py": BASE.encode()})
    repo.commit("head", {"pkg/words.py": HEAD.encode()})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0)))
    (item,) = report.items
    assert [e.after[0] for e in item.examples] == ["passed", "failed", "passed"]
    text = render(report, "text")
    assert "docstring examples: 3 run, 1 fails on the head revision; `>>> ordinal(11)`" in text
    markdown = render(report, "markdown")
    assert "**Docstring examples** that fail on the head revision: 1 of 3 run" in markdown
    doc = json.loads(render(report, "json"))
    validate_report_json(doc)
    assert doc["units"][0]["examples"][1]["after"] == {"kind": "failed", "got": "'11st'\n"}
    assert doc["units"][0]["examples"][1]["before"]["kind"] == "passed"


def test_examples_do_not_run_where_nothing_may_run(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/words.py": BASE.encode()})
    repo.commit("head", {"pkg/words.py": HEAD.encode()})
    report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                  budget=Budget(timeout_s=8.0, execute=False)))
    assert report.items[0].examples == ()
