"""Adversarial pairs: each version sees its own revision's data files and sibling modules.

A function that reads a file of its package (``importlib.resources``, ``pkgutil.get_data``,
``open`` beside ``__file__``) behaves as that file says. A change of the file alone, or
with a docstring, comment or rename of the function, must never be verified; an
equivalent inlining of the file's value must never be refuted (the sandbox must hold the
file); a change of the data file alone must list the functions that can read it.
"""

from __future__ import annotations

from pathlib import Path

from tests.bot.gitrepos import GitRepo
from veribot.bot.review import GitSource, Report, ReviewRequest, review
from veribot.checks.equivalence import Budget
from veribot.checks.project.package import from_mapping
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8.0)
# The differing pairs must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out of those reviews.
NO_SEARCH = Budget(timeout_s=8.0, search=False)

_RESOURCES = ("from importlib import resources\n\n\ndef limit() -> int:\n{doc}"
              "    return int(resources.files('pkg').joinpath('limit.txt').read_text())\n")
_GET_DATA = ("import pkgutil\n\n\ndef limit() -> int:\n{doc}"
             "    return int(pkgutil.get_data('pkg', 'data/limit.txt'))\n")
_BESIDE = ("import os\n\n\ndef limit() -> int:\n{doc}"
           "    here = os.path.dirname(__file__)\n"
           "    with open(os.path.join(here, 'limit.txt'), encoding='utf-8') as f:\n"
           "        return int(f.read())\n")
_INLINED = "def limit() -> int:\n    return 3\n"


def _review(tmp_path: Path, base: dict[str, bytes], head: dict[str, bytes],
            budget: Budget = BUDGET) -> Report:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": b"", **base})
    repo.commit("head", head)
    return review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"), budget=budget))


def _results(report: Report) -> dict[str, Verdict]:
    return {i.unit.qualname: i.result.verdict for i in report.items}


def _doc(text: str) -> str:
    return f'    """{text}"""\n'


# -- differing pairs: never verified -------------------------------------------------------


def test_a_docstring_change_beside_a_changed_resource_is_not_verified(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _RESOURCES.format(doc=_doc("The limit.")).encode(),
         "pkg/limit.txt": b"3"},
        {"pkg/mod.py": _RESOURCES.format(doc=_doc("The limit, from its file.")).encode(),
         "pkg/limit.txt": b"4"}, NO_SEARCH)
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.VERIFIED


def test_a_comment_change_beside_a_changed_get_data_file_is_not_verified(
        tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _GET_DATA.format(doc="").encode(), "pkg/data/limit.txt": b"3"},
        {"pkg/mod.py": _GET_DATA.format(doc="    # read the limit\n").encode(),
         "pkg/data/limit.txt": b"4"}, NO_SEARCH)
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.VERIFIED


def test_a_data_file_changed_alone_lists_the_functions_that_read_it(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _BESIDE.format(doc="").encode(), "pkg/limit.txt": b"3",
         "pkg/other.py": b"def add(x: int) -> int:\n    return x + 1\n"},
        {"pkg/limit.txt": b"4"}, NO_SEARCH)
    found = {i.unit.qualname: i.result for i in report.items}
    assert "pkg/mod.py::limit" in found, [u.path for u in report.skipped]
    assert found["pkg/mod.py::limit"].verdict is not Verdict.VERIFIED
    assert "pkg/other.py::add" not in found  # no code of it reads files


def test_a_data_file_changed_alone_reaches_a_module_calling_a_reader(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/config.py": _RESOURCES.format(doc="").encode(), "pkg/limit.txt": b"3",
         "pkg/mod.py": b"from pkg import config\n\n\ndef twice() -> int:\n"
                       b"    return 2 * config.limit()\n"},
        {"pkg/limit.txt": b"4"}, NO_SEARCH)
    found = _results(report)
    assert found.get("pkg/config.py::limit") not in (None, Verdict.VERIFIED)
    assert found.get("pkg/mod.py::twice") not in (None, Verdict.VERIFIED)


def test_a_renamed_reader_beside_a_changed_data_file_is_not_verified(tmp_path: Path) -> None:
    body = _BESIDE.format(doc="")
    report = _review(
        tmp_path,
        {"pkg/mod.py": (body + "\n\ndef g() -> int:\n    return limit()\n").encode(),
         "pkg/limit.txt": b"3"},
        {"pkg/mod.py": (body.replace("def limit", "def upper") + "\n\ndef g() -> int:\n"
                        "    return upper()\n").encode(), "pkg/limit.txt": b"4"}, NO_SEARCH)
    assert _results(report)["pkg/mod.py::g"] is not Verdict.VERIFIED


# -- equivalent pairs: never refuted -------------------------------------------------------


def test_inlining_a_resource_value_is_not_refuted(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _RESOURCES.format(doc="").encode(), "pkg/limit.txt": b"3"},
        {"pkg/mod.py": _INLINED.encode()})
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.REFUTED


def test_inlining_a_get_data_value_is_not_refuted(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _GET_DATA.format(doc="").encode(), "pkg/data/limit.txt": b"3"},
        {"pkg/mod.py": _INLINED.encode()})
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.REFUTED


def test_inlining_a_file_beside_the_module_is_not_refuted(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"pkg/mod.py": _BESIDE.format(doc="").encode(), "pkg/limit.txt": b"3\n"},
        {"pkg/mod.py": _INLINED.encode()})
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.REFUTED


def test_a_sibling_top_level_module_is_loaded(tmp_path: Path) -> None:
    report = _review(
        tmp_path,
        {"settings.py": b"LIMIT = 3\n",
         "pkg/mod.py": b"import settings\n\n\ndef limit(x: int) -> int:\n"
                       b"    return x + settings.LIMIT\n"},
        {"pkg/mod.py": b"import settings\n\n\ndef limit(x: int) -> int:\n"
                       b"    return x + 4\n"})
    assert _results(report)["pkg/mod.py::limit"] is Verdict.REFUTED


# -- the copy -------------------------------------------------------------------------------


def test_data_over_the_cap_is_counted_not_silently_dropped() -> None:
    tree = {"pkg/__init__.py": b"", "pkg/mod.py": b"", "pkg/big.bin": b"\0" * 64,
            "pkg/small.txt": b"3"}
    package = from_mapping("pkg/mod.py", tree, max_bytes=32)
    assert package is not None
    assert dict(package.data) == {"pkg/small.txt": b"3"}
    assert package.data_left_out == 1


def test_inlining_a_file_outside_the_package_is_not_refuted(tmp_path: Path) -> None:
    # The repository's other files are not copied: a version that cannot find one shows
    # nothing of the code.
    reader = ("from pathlib import Path\n\n\ndef limit() -> int:\n"
              "    return int((Path(__file__).parents[1] / 'data' / 'limit.txt').read_text())\n")
    report = _review(tmp_path, {"pkg/mod.py": reader.encode(), "data/limit.txt": b"3"},
                     {"pkg/mod.py": _INLINED.encode()})
    assert _results(report)["pkg/mod.py::limit"] is not Verdict.REFUTED
