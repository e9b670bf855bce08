"""Adversarial pairs: a module that can read its own source text or line numbers.

A traceback (``traceback.format_exc``), ``linecache``, ``inspect.stack``, a read of
``__file__``, the loader's ``get_source``, a logging handler the module installs, or a
finished asyncio task's ``repr`` show comments, docstrings and line numbers. A change of
docstring or layout alone in such a module must never be verified, nor a function that is
unchanged while lines of its module moved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.gitrepos import GitRepo
from veribot.bot.review import GitSource, Report, ReviewRequest, review
from veribot.checks.equivalence import Budget
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8.0)
# Most pairs here must only not be verified: random testing, which runs only once no proof
# was found and can turn no verdict into "verified", is left out of those reviews.
NO_SEARCH = Budget(timeout_s=8.0, search=False)


def _review(tmp_path: Path, before: str, after: str, budget: Budget = NO_SEARCH) -> Report:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", "pkg/mod.py": before.encode()})
    repo.commit("head", {"pkg/mod.py": after.encode()})
    return review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"), budget=budget))


def _verdicts(report: Report) -> dict[str, Verdict]:
    return {i.unit.qualname: i.result.verdict for i in report.items}


_DOC = '    """Doc.\n\n    More.\n    """\n'

# (name, module text with {doc} at the start of f's body, a call-free reader)
READERS = [
    ("traceback-format-exc", "import traceback\n\n\ndef f(x: int) -> str:\n{doc}"
     "    try:\n        return str(1 // x)\n    except ZeroDivisionError:\n"
     "        return traceback.format_exc()\n"),
    ("linecache", "import linecache\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return linecache.getline(__file__, 5 + x)\n"),
    ("inspect-stack", "import inspect\n\n\ndef f(x: int) -> int:\n{doc}"
     "    return inspect.stack()[0][2] + x\n"),
    ("open-own-file", "def f(x: int) -> int:\n{doc}"
     "    with open(__file__, encoding='utf-8') as own:\n        return len(own.read()) + x\n"),
    ("loader-get-source", "def f(x: int) -> int:\n{doc}"
     "    return len(__loader__.get_source(__name__)) + x\n"),
    ("logging-handler", "import io\nimport logging\n\n\ndef f(x: int) -> str:\n{doc}"
     "    out = io.StringIO()\n    handler = logging.StreamHandler(out)\n"
     "    handler.setFormatter(logging.Formatter('%(message)s'))\n"
     "    log = logging.getLogger('pkg.mod.f')\n    log.addHandler(handler)\n"
     "    try:\n        1 // x\n    except ZeroDivisionError:\n"
     "        log.exception('failed')\n    log.removeHandler(handler)\n"
     "    return out.getvalue()\n"),
    ("asyncio-task-repr", "import asyncio\n\n\nasync def g() -> int:\n    return 1\n\n\n"
     "def f(x: int) -> str:\n{doc}    async def main() -> str:\n"
     "        task = asyncio.ensure_future(g())\n        await task\n"
     "        return repr(task)[:200]\n    return asyncio.run(main()) + str(x)\n"),
]


@pytest.mark.parametrize("module", [m for _, m in READERS], ids=[n for n, _ in READERS])
def test_a_docstring_change_in_a_module_reading_its_source_is_not_verified(
        tmp_path: Path, module: str) -> None:
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_DOC))
    assert _verdicts(report)["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_lines_moved_above_an_unchanged_reader_list_it(tmp_path: Path) -> None:
    module = READERS[0][1].format(doc="")
    report = _review(tmp_path, module, "\n\n" + module)
    found = _verdicts(report)
    assert "pkg/mod.py::f" in found
    assert found["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_a_comment_on_the_failing_line_of_an_otherwise_changed_module(tmp_path: Path) -> None:
    module = READERS[0][1].format(doc="")
    after = module.replace("return str(1 // x)", "return str(1 // x)  # boom")
    report = _review(tmp_path, "K = 1\n" + module, "K = 2\n" + after)
    found = _verdicts(report)
    assert "pkg/mod.py::f" in found
    assert found["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_a_docstring_moving_a_helper_of_a_reader_is_not_verified(tmp_path: Path) -> None:
    # `f` is unchanged, but the traceback it formats shows the line of `g`, which moved
    # (`g` itself returns and raises as before).
    before = ("import traceback\n\n\ndef g(x: int) -> int:\n{doc}    return 1 // x\n\n\n"
              "def f(x: int) -> str:\n    try:\n        return str(g(x))\n"
              "    except ZeroDivisionError:\n        return traceback.format_exc()\n")
    report = _review(tmp_path, before.format(doc=""), before.format(doc=_DOC))
    found = _verdicts(report)
    assert "pkg/mod.py::f" in found and found["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_a_warning_shown_on_a_captured_stderr_is_read(tmp_path: Path) -> None:
    # A shown warning carries its file, line and source line.
    module = ("import io\nimport sys\nimport warnings\n\n\ndef f(x: int) -> str:\n{doc}"
              "    buf, old = io.StringIO(), sys.stderr\n    sys.stderr = buf\n"
              "    try:\n        warnings.warn('careful')\n    finally:\n"
              "        sys.stderr = old\n    return buf.getvalue() + str(x)\n")
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_DOC))
    assert _verdicts(report)["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_a_traceback_module_imported_by_a_computed_name_is_a_reader(tmp_path: Path) -> None:
    module = ("import importlib\n\n\ndef f(x: int) -> str:\n{doc}"
              "    tb = importlib.import_module('trace' + 'back')\n"
              "    try:\n        return str(1 // x)\n    except ZeroDivisionError:\n"
              "        return tb.format_exc()\n")
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_DOC))
    assert _verdicts(report)["pkg/mod.py::f"] is not Verdict.VERIFIED


def test_moved_lines_list_the_readers_and_their_callers_not_every_function(
        tmp_path: Path) -> None:
    """Lines added at the top move every line, but only what reads them can tell: the
    reader (through an aliased import), its caller; not a function that reads neither."""
    module = ("from traceback import format_exc as fe\n\n\n"
              "def where(x: int) -> str:\n    try:\n        return str(1 // x)\n"
              "    except ZeroDivisionError:\n        return fe()\n\n\n"
              "def api(x: int) -> str:\n    return where(x).upper()\n\n\n"
              "def plain(x: int) -> int:\n    return x + 1\n")
    found = _verdicts(_review(tmp_path, module, "\n\n" + module))
    assert "pkg/mod.py::where" in found and "pkg/mod.py::api" in found
    assert found["pkg/mod.py::where"] is not Verdict.VERIFIED
    assert found["pkg/mod.py::api"] is not Verdict.VERIFIED
    assert "pkg/mod.py::plain" not in found


def test_a_proof_in_a_module_reading_given_paths_lists_that_assumption(tmp_path: Path) -> None:
    from veribot.checks.project.reads import GIVEN_PATHS

    module = ("def f(path: str) -> int:\n{doc}    first = open(path, encoding='utf-8')\n"
              "    return len(first.read())\n")
    report = _review(tmp_path, module.format(doc=""),
                     module.format(doc="").replace("first", "size") + "\n\nK = 1\n", BUDGET)
    (item,) = [i for i in report.items if i.unit.qualname == "pkg/mod.py::f"]
    assert item.result.verdict is Verdict.VERIFIED, item.result.detail
    assert GIVEN_PATHS in item.result.assumptions


@pytest.mark.parametrize("lookup", [
    "getattr(sys.modules['trace' + 'back'], 'format_' + 'exc')()",
    "getattr(sys.modules[''.join(['trace', 'back'])], f'format_{\"exc\"}')()",
])
def test_a_reader_named_in_pieces_is_a_reader(tmp_path: Path, lookup: str) -> None:
    # (`traceback` is among the modules the interpreter has loaded; nothing imports it here.)
    module = ("import sys\n\n\ndef f(x: int) -> str:\n{doc}    try:\n        return str(1 // x)\n"
              "    except ZeroDivisionError:\n        return LOOKUP\n")
    before, after = (module.format(doc=d).replace("LOOKUP", lookup) for d in ("", _DOC))
    report = _review(tmp_path, before, after)
    assert _verdicts(report)["pkg/mod.py::f"] is not Verdict.VERIFIED
