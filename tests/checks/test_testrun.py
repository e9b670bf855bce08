"""The tests a change adds or edits, run on both revisions in the sandbox: which tests,
with which files, and what each did on each side."""

from __future__ import annotations

import posixpath

from veribot.checks.project.units import ChangedUnit, FileChange, changed_units
from veribot.checks.search import testrun
from veribot.checks.search.testrun import ChangedTest, Outcome, TestRun


class Tree:
    """A revision's files from a mapping (``testrun.Files``)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def exists(self, path: str) -> bool:
        return path in self.files

    def listing(self, folder: str, recursive: bool) -> list[str]:
        prefix = f"{folder}/" if folder else ""
        return [p for p in self.files if p.startswith(prefix)
                and (recursive or "/" not in p[len(prefix):])]

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)


def _units(*changes: FileChange) -> list[ChangedUnit]:
    return [u for c in changes for u in changed_units(c, include_unchanged=True)]


def _change(path: str, before: str | None, after: str) -> FileChange:
    return FileChange(path if before is not None else None, path,
                      None if before is None else before.encode(), after.encode())


def test_the_changed_tests_that_name_a_function_directly_or_through_a_helper() -> None:
    before = "from shop import area, perimeter\n\n\ndef test_old():\n    assert area(1) == 1\n"
    after = (
        "from shop import area, perimeter\n\n\n"
        "def check(x):\n    assert area(x) >= 0\n\n\n"
        "def test_old():\n    assert area(1) == 1\n\n\n"  # unchanged: not run
        "def test_helper():\n    check(3)\n\n\n"  # names `area` through `check`
        "def test_other():\n    assert perimeter(1) == 4\n\n\n"  # names no function asked
        "class TestArea:\n    def test_zero(self):\n        assert area(0) == 0\n"
    )
    found = testrun.changed_tests(_units(_change("tests/test_shop.py", before, after),
                                         _change("shop/core.py", None, "def test_x(): area()\n")),
                                  {"area"})
    assert [(t.nodeid, t.added, sorted(t.names)) for t in found] == [
        ("tests/test_shop.py::test_helper", True, ["area"]),
        ("tests/test_shop.py::TestArea::test_zero", True, ["area"]),
    ]


def test_the_changed_tests_are_capped() -> None:
    after = "".join(f"def test_{n}():\n    assert area({n})\n\n\n" for n in range(40))
    found = testrun.changed_tests(_units(_change("tests/test_many.py", None, after)), {"area"})
    assert len(found) == testrun.MAX_TESTS


def test_the_workspace_holds_each_revisions_packages_and_the_heads_tests() -> None:
    code = Tree({
        "src/shop/__init__.py": b"", "src/shop/core.py": b"BASE = 1\n",
        "src/shop/prices.csv": b"a,1\n", "src/shop/tests/test_inside.py": b"x = 1\n",
        "src/other/__init__.py": b"", "src/lone.py": b"L = 1\n",
        "docs/conf.py": b"project = 'x'\n", "tests/test_core.py": b"old test\n",
    })
    head = Tree({
        "src/shop/__init__.py": b"", "src/shop/core.py": b"HEAD = 1\n",
        "tests/__init__.py": b"", "tests/conftest.py": b"FIXTURES = 1\n",
        "tests/test_core.py": b"new test\n", "tests/helpers.py": b"H = 1\n",
        "tests/data/sample.txt": b"data\n", "tests/unit/test_deep.py": b"deep\n",
        "conftest.py": b"TOP = 1\n",
    })
    assert testrun.code_roots(code, ["src/shop/core.py"]) == ("src",)
    files, left_out = testrun.workspace(code, head, ("src",), ["tests/test_core.py"])
    assert left_out == 0
    assert files["src/shop/core.py"] == b"BASE = 1\n"  # the code of the revision
    assert files["tests/test_core.py"] == b"new test\n"  # the test of the head
    assert {"src/shop/prices.csv", "src/other/__init__.py", "src/lone.py",
            "tests/conftest.py", "tests/__init__.py", "tests/helpers.py",
            "tests/data/sample.txt", "conftest.py"} <= files.keys()
    # Neither the package's own tests, nor what is beside the code root, nor other tests.
    assert not {"src/shop/tests/test_inside.py", "docs/conf.py",
                "tests/unit/test_deep.py"} & files.keys()


def test_the_workspace_is_bounded_and_says_what_it_left_out() -> None:
    big = b"x = 1\n" + b"#" * (testrun.MAX_BYTES // 2)
    code = Tree({"pkg/__init__.py": b"", "pkg/a.py": big, "pkg/b.py": big, "pkg/c.py": big})
    head = Tree({"tests/test_a.py": b"t\n", "../escape.py": b"no\n"})
    files, left_out = testrun.workspace(code, head, ("",), ["tests/test_a.py"])
    assert left_out == 2 and sum(len(v) for v in files.values()) <= testrun.MAX_BYTES
    assert all(not posixpath.isabs(p) and ".." not in p.split("/") for p in files)


def test_a_test_observes_the_change_only_when_it_fails_before_and_passes_after() -> None:
    test = ChangedTest("tests/test_a.py", "test_a", True, frozenset({"f"}))
    passed, failed = Outcome("passed"), Outcome("failed", "AssertionError")
    assert TestRun(test, failed, passed).observes
    assert TestRun(test, Outcome("error", "KeyError"), passed).observes
    assert not TestRun(test, passed, passed).observes
    assert not TestRun(test, failed, failed).observes
    assert not TestRun(test, Outcome("not-run", "x"), passed).observes


# One sandbox run per revision for all of these (a representative of each outcome).
_CODE_BEFORE = {"pkg/__init__.py": b"", "pkg/core.py": b"def f(n):\n    return n + 1\n"}
_CODE_AFTER = {"pkg/__init__.py": b"", "pkg/core.py": b"def f(n):\n    return n + 2\n"}
_TESTS = {
    "tests/conftest.py": b"import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
    "tests/test_core.py": b"""import pytest
from pkg.core import f


def test_observes(two):
    assert f(two) == 4


def test_blind():
    assert f(1) > 0


@pytest.mark.parametrize("n, want", [(0, 2), (1, 3)])
def test_rows(n, want):
    assert f(n) == want


def test_regresses():
    assert f(0) == 1
""",
    "tests/test_broken.py": b"import not_a_module_anywhere\n\n\ndef test_x():\n    pass\n",
}


def test_changed_tests_run_on_both_revisions_in_the_sandbox() -> None:
    names = ["test_observes", "test_blind", "test_rows", "test_regresses"]
    tests = [ChangedTest("tests/test_core.py", n, True, frozenset({"f"})) for n in names]
    tests.append(ChangedTest("tests/test_broken.py", "test_x", False, frozenset({"f"})))
    runs = testrun.run_tests(tests, {**_CODE_BEFORE, **_TESTS}, {**_CODE_AFTER, **_TESTS},
                             roots=("",))
    got = {r.test.entry: (r.before.kind, r.after.kind) for r in runs}
    assert got == {
        "test_observes": ("failed", "passed"),  # a fixture from conftest.py
        "test_blind": ("passed", "passed"),
        "test_rows": ("failed", "passed"),  # every row passes after
        "test_regresses": ("passed", "failed"),
        "test_x": ("error", "error"),
    }, runs
    by = {r.test.entry: r for r in runs}
    assert by["test_observes"].observes and not by["test_blind"].observes
    assert "assert 3 == 4" in by["test_observes"].before.detail
    assert "not_a_module_anywhere" in by["test_x"].after.detail


def test_a_test_run_that_reports_nothing_did_not_run() -> None:
    """A test file that ends the process before pytest reports (``os._exit``) leaves no
    outcome: the test did not run, and the report says why."""
    test = ChangedTest("tests/test_exit.py", "test_exit", True, frozenset({"f"}))
    files = {"tests/test_exit.py": b"import os\nos._exit(3)\n\n\ndef test_exit():\n    pass\n"}
    (run,) = testrun.run_tests([test], files, files, roots=("",))
    assert run.before.kind == run.after.kind == "not-run", run
    assert "without a report (status 3)" in run.after.detail and not run.observes
