"""The review pipeline on real git repositories and real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.gitrepos import GitRepo, calc_repo, shop_repo
from veribot.bot.gitrepo import (
    NoDefaultBranchError,
    NotARepositoryError,
    UnknownRevisionError,
    package_context,
)
from veribot.bot.review import (
    FailOn,
    FilesSource,
    GitSource,
    Report,
    ReviewError,
    ReviewRequest,
    UnitResult,
    review,
)
from veribot.checks.equivalence import Budget
from veribot.checks.project.units import MODULE_ENTRY, ChangedUnit, UnitKind
from veribot.checks.verdict import Reason, Result, Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_a_docstring_change_whose_imports_changed_otherwise_is_checked": {
        "callee-verified-for-its-types",
    },
}

FAST = Budget(timeout_s=3.0)

EXPECTED_UNITS = {
    "shop/helpers.py::<module>": ("parse-error", Reason.PARSE_ERROR),
    "shop/helpers.py::clamp": ("parse-error", Reason.PARSE_ERROR),
    "shop/pricing.py::discount": ("changed", None),
    "shop/pricing.py::tip": ("added", Reason.ADDED),
    "shop/pricing.py::Cart": ("outside-functions", Reason.NOT_A_FUNCTION),
    "shop/pricing.py::Cart.count": ("changed", None),
    "shop/shapes.py::<module>": ("renamed", Reason.RENAMED),
    "shop/shapes.py::rect_area": ("renamed", Reason.RENAMED),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return shop_repo(tmp_path_factory.mktemp("shop"))


@pytest.fixture(scope="module")
def shop_report(shop: GitRepo) -> Report:
    return review(ReviewRequest(GitSource(shop.path), budget=FAST))


def by_name(report: Report) -> dict[str, UnitResult]:
    return {i.unit.qualname: i for i in report.items}


def test_every_changed_unit_is_listed_with_its_kind_and_reason(shop_report: Report) -> None:
    found = by_name(shop_report)
    assert set(found) == set(EXPECTED_UNITS)
    for name, (kind, reason) in EXPECTED_UNITS.items():
        item = found[name]
        assert item.unit.kind.value == kind, name
        if reason is not None:
            assert item.result.verdict is Verdict.INCONCLUSIVE
            assert item.result.reason == reason, name
    assert found["shop/shapes.py::rect_area"].unit.before_entry == "area"
    assert found["shop/shapes.py::rect_area"].unit.before_path == "shop/geometry.py"


def test_the_default_base_is_the_merge_base_with_main(shop: GitRepo, shop_report: Report) -> None:
    assert shop_report.base == shop.git("rev-parse", "main")
    assert shop_report.head == shop.git("rev-parse", "feature")
    assert shop_report.base_label == "merge-base(main, HEAD)"
    assert shop_report.root == shop.path.resolve() or shop_report.root == shop.path


def test_unchanged_functions_are_counted_and_non_python_files_skipped(shop_report: Report) -> None:
    assert shop_report.unchanged == 3  # net (reformatted only), Cart.add, perimeter
    assert sorted(u.path for u in shop_report.skipped) == ["README.md", "assets/logo.png"]


def test_parse_error_unit_says_the_line(shop_report: Report) -> None:
    item = by_name(shop_report)["shop/helpers.py::<module>"]
    assert item.unit.line == 2
    assert "does not parse" in item.result.detail and "line 2" in item.result.detail


def test_changed_functions_reach_the_prover_and_others_are_not_compared(
    shop_report: Report,
) -> None:
    for item in shop_report.items:
        compared = item.unit.kind in (UnitKind.CHANGED, UnitKind.PARSE_ERROR)
        assert item.compared is compared, item.unit.qualname
        if item.unit.kind is UnitKind.CHANGED:
            assert item.result.reason not in (Reason.ADDED, Reason.NOT_A_FUNCTION)


def test_fail_on_inconclusive_counts_the_parse_error_but_not_added_units(
    shop_report: Report,
) -> None:
    # These changes are all behaviour-preserving: nothing can be refuted.
    assert shop_report.count(Verdict.REFUTED) == 0
    assert not shop_report.failed(FailOn.REFUTED)
    assert shop_report.failed(FailOn.INCONCLUSIVE)  # the parse error is never decided
    assert not shop_report.failed(FailOn.NEVER)


def test_added_units_alone_do_not_fail_on_inconclusive() -> None:
    added = ChangedUnit(UnitKind.ADDED, "a.py", "f", after_path="a.py", after_lines=(1, 2))
    report = Report(
        items=(UnitResult(added, Result(Verdict.INCONCLUSIVE, Reason.ADDED, "function added")),)
    )
    assert not report.failed(FailOn.INCONCLUSIVE)


def test_progress_reports_every_unit_and_jobs_give_the_same_report(shop: GitRepo) -> None:
    seen: list[tuple[int, int]] = []
    report = review(
        ReviewRequest(GitSource(shop.path, base="main"), budget=FAST, jobs=2),
        lambda done, total: seen.append((done, total)),
    )
    total = len(EXPECTED_UNITS)
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert sorted(d for d, _ in seen) == list(range(total + 1))
    assert [i.unit.qualname for i in report.items] == list(by_name(report))
    assert set(by_name(report)) == set(EXPECTED_UNITS)
    assert report.base_label == "main"


def test_explicit_range_and_empty_range(shop: GitRepo) -> None:
    report = review(ReviewRequest(GitSource(shop.path, base="feature", head="feature")))
    assert report.items == () and report.skipped == ()


def test_git_errors_are_typed_and_say_what_is_wrong(tmp_path: Path, shop: GitRepo) -> None:
    with pytest.raises(UnknownRevisionError, match="unknown revision 'nope'"):
        review(ReviewRequest(GitSource(shop.path, base="nope")))
    with pytest.raises(NotARepositoryError, match="not a git repository"):
        review(ReviewRequest(GitSource(tmp_path)))
    lonely = GitRepo(tmp_path / "lonely", branch="trunk")
    lonely.commit("one", {"a.py": b"x = 1\n"})
    with pytest.raises(NoDefaultBranchError, match="--base"):
        review(ReviewRequest(GitSource(lonely.path)))


def test_compare_two_files_checks_every_function_present_in_both(tmp_path: Path) -> None:
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text("def f(x: int) -> int:\n    return x\n\ndef g() -> int:\n    return 1\n")
    after.write_text(
        "def f(x: int) -> int:\n    return x + 0\n\ndef g() -> int:\n    return 1\n"
        "\ndef h() -> int:\n    return 2\n"
    )
    report = review(ReviewRequest(FilesSource(before, after), budget=FAST))
    kinds = {i.unit.entry: i.unit.kind for i in report.items}
    assert kinds == {"f": UnitKind.CHANGED, "g": UnitKind.UNCHANGED, "h": UnitKind.ADDED}
    assert report.base == str(before) and report.root is None

    only_g = review(ReviewRequest(FilesSource(before, after, ("g",)), budget=FAST))
    assert [i.unit.entry for i in only_g.items] == ["g"]

    with pytest.raises(ReviewError, match="no function 'h' in BEFORE"):
        review(ReviewRequest(FilesSource(before, after, ("h",))))
    with pytest.raises(ReviewError, match="cannot read"):
        review(ReviewRequest(FilesSource(before, tmp_path / "missing.py")))


def test_compare_with_a_broken_file_reports_the_parse_error(tmp_path: Path) -> None:
    before, after = tmp_path / "a.py", tmp_path / "b.py"
    before.write_text("def f(x: int) -> int:\n    return x\n")
    after.write_text("def f(x: int) -> int:\n    return (x\n")
    report = review(ReviewRequest(FilesSource(before, after, ("f",))))
    entries = {i.unit.entry: i.result.reason for i in report.items}
    assert entries == {MODULE_ENTRY: Reason.PARSE_ERROR, "f": Reason.PARSE_ERROR}


def test_a_module_is_loaded_as_part_of_its_package_from_each_revision(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path / "calc")
    report = review(ReviewRequest(GitSource(repo.path), budget=Budget(timeout_s=8.0), jobs=2))
    found = by_name(report)
    assert set(found) == {"src/calc/ops.py::scale", "src/calc/ops.py::triple"}
    scale = found["src/calc/ops.py::scale"].result
    assert scale.verdict is Verdict.REFUTED, scale.detail
    assert scale.counterexample is not None and int(scale.counterexample.args[0]) > 100
    # Equivalent with the committed sibling (FACTOR = 3), not with the working tree's.
    triple = found["src/calc/ops.py::triple"].result
    assert triple.verdict is not Verdict.REFUTED, triple.detail
    assert any("random testing tried" in n and "could not be loaded" not in n
               for n in triple.notes), triple.notes
    context = found["src/calc/ops.py::triple"].unit.context
    assert context is not None and context.after is not None
    assert context.after.module == "calc.ops" and context.after.root == "src"
    assert dict(context.after.files)["src/calc/consts.py"] == "FACTOR = 3\n"


def test_a_docstring_change_next_to_a_changed_sibling_module_is_checked(tmp_path: Path) -> None:
    # `a.f` changes only its docstring, but returns `b.K`, which changes in the same range.
    repo = GitRepo(tmp_path / "r")
    a = b"from . import b\n\ndef f():\n    'Return K.'\n    return b.K\n"
    repo.commit("one", {"pkg/__init__.py": b"", "pkg/a.py": a, "pkg/b.py": b"K = 1\n",
                        "pkg/c.py": b"def g() -> int:\n    'x'\n    return 1\n",
                        "pkg/e.py": b"from . import c\n\ndef h() -> int:\n    'x'\n"
                                    b"    return c.g()\n"})
    repo.commit("two", {"pkg/a.py": a.replace(b"Return K.", b"Return the constant K."),
                        "pkg/b.py": b"K = 2\n",
                        "pkg/c.py": b"def g() -> int:\n    'y'\n    return 1\n",
                        "pkg/e.py": b"from . import c\n\ndef h() -> int:\n    'y'\n"
                                    b"    return c.g()\n"})
    found = by_name(review(ReviewRequest(GitSource(repo.path, base="HEAD^", head="HEAD"),
                                         budget=Budget(timeout_s=8.0))))
    f = found["pkg/a.py::f"].result
    assert f.verdict is Verdict.REFUTED, f.detail
    assert "not verified for every caller" in f.detail
    # A module that imports nothing of the project keeps the shortcut, and so does one
    # whose imports never reach the changed module.
    assert found["pkg/c.py::g"].result.method == "only the docstring changed"
    assert found["pkg/e.py::h"].result.method == "only the docstring changed"


A_DOC = b"from . import b\n\ndef f():\n    'Old.'\n    return {}\n"


@pytest.mark.parametrize(
    ("read", "b_before", "b_after", "init"),
    [
        # A callee verified only for `x: int`, called with 0.5.
        (b"b.g(1 / 2)", b"def g(x: int) -> int:\n    return x\n",
         b"def g(x: int) -> int:\n    if x == 0.5:\n        return 0\n    return x\n", None),
        # A function added to the module `f` imports: `hasattr` sees it.
        (b"hasattr(b, 'g')", b"def h():\n    return 1\n",
         b"def h():\n    return 1\n\ndef g():\n    return 2\n", None),
        # The package's `__init__` (which runs first) sets what `f` reads.
        (b"LIMIT", b"X = 1\n", b"X = 1\n", (b"from . import a\na.LIMIT = 5\n",
                                             b"from . import a\na.LIMIT = 6\n")),
    ],
    ids=["callee-verified-for-its-types", "function-added", "package-init"],
)
def test_a_docstring_change_whose_imports_changed_otherwise_is_checked(
        tmp_path: Path, read: bytes, b_before: bytes, b_after: bytes,
        init: tuple[bytes, bytes] | None) -> None:
    repo = GitRepo(tmp_path / "r")
    a = A_DOC.replace(b"{}", read).replace(b"from . import b\n", b"from . import b\nLIMIT = 1\n")
    inits = init or (b"", b"")
    repo.commit("one", {"pkg/__init__.py": inits[0], "pkg/a.py": a, "pkg/b.py": b_before})
    repo.commit("two", {"pkg/__init__.py": inits[1], "pkg/a.py": a.replace(b"Old.", b"New."),
                        "pkg/b.py": b_after})
    found = by_name(review(ReviewRequest(GitSource(repo.path, base="HEAD^", head="HEAD"),
                                         budget=Budget(timeout_s=8.0))))
    f = found["pkg/a.py::f"].result
    assert f.verdict is not Verdict.VERIFIED, f.detail


def test_a_docstring_change_next_to_code_no_import_reaches_keeps_the_shortcut(
        tmp_path: Path) -> None:
    # toolz 037b10a: `doc/source/conf.py` (Sphinx's, no package) changed beside `fold`.
    repo = GitRepo(tmp_path / "r")
    a = A_DOC.replace(b"{}", b"b.K")
    repo.commit("one", {"pkg/__init__.py": b"", "pkg/a.py": a, "pkg/b.py": b"K = 1\n",
                        "doc/source/conf.py": b"project = 'x'\n"})
    repo.commit("two", {"pkg/a.py": a.replace(b"Old.", b"New."),
                        "doc/source/conf.py": b"project = 'y'\n"})
    found = by_name(review(ReviewRequest(GitSource(repo.path, base="HEAD^", head="HEAD"),
                                         budget=Budget(timeout_s=8.0))))
    assert found["pkg/a.py::f"].result.method == "only the docstring changed"


def test_package_files_come_from_the_commits_and_never_through_a_link(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path / "calc")
    (repo.path / "src/calc/secret.py").symlink_to("/etc/hostname")
    repo.commit("a link out of the repository")
    base, head = repo.git("rev-parse", "main"), repo.git("rev-parse", "HEAD")
    context = package_context(repo.path, base, head, "src/calc/ops.py", "src/calc/ops.py")
    assert context.before is not None and context.after is not None
    assert dict(context.before.files)["src/calc/consts.py"] == "FACTOR = 3\n"
    assert "src/calc/secret.py" not in dict(context.after.files)
    assert context.after.left_out == 1 and context.before.left_out == 0
    assert context.after.module == "calc.ops" and context.after.root == "src"


def _compare(tmp_path: Path, before: str, after: str) -> dict[str, Result]:
    b, a = tmp_path / "before.py", tmp_path / "after.py"
    b.write_text(before)
    a.write_text(after)
    report = review(ReviewRequest(FilesSource(b, a), budget=FAST))
    return {i.unit.entry: i.result for i in report.items if i.unit.kind is UnitKind.CHANGED}


NOISY = (
    '"""Mod."""\n\nRATE = 3\n\n\n'
    "def f(x: int) -> int:\n    '''Old.'''\n    return x + RATE\n\n\n"
    "def g(x: int) -> int:\n    return x * 2  # twice\n\n\n"
    "def k(x: int) -> int:\n    return x\n"
)


def test_docstring_and_formatting_only_changes_are_verified_at_once(tmp_path: Path) -> None:
    after = NOISY.replace("Old.", "New.").replace("x * 2  # twice", "x*2")
    found = _compare(tmp_path, NOISY, after)
    assert set(found) == {"f", "g"}
    f, g = found["f"], found["g"]
    assert f.verdict is Verdict.VERIFIED and f.method == "only the docstring changed"
    assert any("__doc__" in a for a in f.assumptions)
    assert g.verdict is Verdict.VERIFIED and g.method == "only formatting and comments changed"


def test_an_annotation_only_change_is_verified_at_once(tmp_path: Path) -> None:
    before = "from __future__ import annotations\n\ndef f(x: int) -> int:\n    'Old.'\n" \
        "    return x\n"
    found = _compare(tmp_path, before, before.replace("x: int", "x: int | str"))
    f = found["f"]
    assert f.verdict is Verdict.VERIFIED and f.method == "only the annotations changed"
    assert any("__annotations__" in a for a in f.assumptions)
    found = _compare(tmp_path, before, before.replace("x: int", "x: int | str").replace(
        "'Old.'", "'New.'"))
    assert found["f"].detail.startswith("only the annotations and the docstring changed")


def test_a_docstring_the_code_returns_is_not_noise(tmp_path: Path) -> None:
    before = "def f() -> str:\n    'a'\n    return f.__doc__ or ''\n"
    found = _compare(tmp_path, before, before.replace("'a'", "'b'"))
    assert found["f"].verdict is not Verdict.VERIFIED
    assert found["f"].method != "only the docstring changed"


def test_a_changed_constant_checks_its_readers(tmp_path: Path) -> None:
    after = NOISY.replace("RATE = 3", "RATE = 4").replace("Old.", "New.")
    found = _compare(tmp_path, NOISY, after)
    assert set(found) == {"f"}  # g and k do not read RATE
    assert found["f"].verdict is Verdict.REFUTED
    assert "reads the module-level `RATE`, which changed too" in found["f"].detail


def test_an_unchanged_reader_of_a_changed_constant_is_checked(tmp_path: Path) -> None:
    found = _compare(tmp_path, NOISY, NOISY.replace("RATE = 3", "RATE = 4"))
    assert set(found) == {"f"}
    assert found["f"].verdict is Verdict.REFUTED
    assert found["f"].detail.startswith("its code is unchanged, but it reads the module-level")


def test_stubs_are_skipped_by_default_and_tests_reviewed(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit(
        "first",
        {
            "pkg/mod.py": b"def f(x: int) -> int:\n    return x\n",
            "pkg/mod.pyi": b"def f(x: int) -> int: ...\n",
            "tests/test_mod.py": b"def test_f() -> None:\n    assert 1\n",
        },
    )
    repo.commit(
        "second",
        {
            "pkg/mod.py": b"def f(x: int) -> int:\n    return x + 0\n",
            "pkg/mod.pyi": b"def f(x: int, /) -> int: ...\n",
            "tests/test_mod.py": b"def test_f() -> None:\n    assert 2\n",
        },
    )
    source = GitSource(repo.path, "HEAD~1", "HEAD")
    report = review(ReviewRequest(source, budget=FAST))
    assert {i.unit.qualname for i in report.items} == {
        "pkg/mod.py::f",
        "tests/test_mod.py::test_f",
    }
    assert [(u.path, u.kind) for u in report.skipped] == [("pkg/mod.pyi", UnitKind.SKIPPED)]
    assert "review_stubs = false" in report.skipped[0].detail

    chosen = review(ReviewRequest(source, budget=FAST, review_tests=False, review_stubs=True))
    assert {i.unit.qualname for i in chosen.items} == {"pkg/mod.py::f", "pkg/mod.pyi::f"}
    assert [(u.path, u.detail) for u in chosen.skipped] == [
        ("tests/test_mod.py", "a test file: not checked (review_tests = false in .veribot.toml)")
    ]


def test_constant_readers_through_a_helper_and_an_equivalent_constant_change(
    tmp_path: Path,
) -> None:
    before = (
        "N = 3\nLIMITS = (1, 2)\n\n\ndef _h(x: int) -> int:\n    return x * N\n\n\n"
        "def top(x: int) -> int:\n    return _h(x) + 1\n\n\n"
        "def member(x: int) -> bool:\n    return x in LIMITS\n\n\n"
        "def other(x: int) -> int:\n    return x\n"
    )
    found = _compare(tmp_path, before, before.replace("N = 3", "N = 4"))
    assert set(found) == {"_h", "top"}
    assert all(r.verdict is Verdict.REFUTED for r in found.values())
    found = _compare(tmp_path, before, before.replace("(1, 2)", "(2, 1)"))
    assert set(found) == {"member"}
    assert found["member"].verdict is Verdict.VERIFIED  # decided by the engine, not a shortcut
    assert found["member"].method not in ("only the docstring changed", "")


def test_a_class_whose_body_changed_only_in_annotations_is_verified(tmp_path: Path) -> None:
    # click aef225d: instance attributes annotated in the class body.
    before = ("from __future__ import annotations\n\n\nclass Box:\n"
              "    def __init__(self, width: int) -> None:\n        self.width: int = width\n")
    after = ("from __future__ import annotations\n\n\nclass Box:\n    width: int\n\n"
             "    def __init__(self, width: int) -> None:\n        self.width = width\n")
    b, a = tmp_path / "before.py", tmp_path / "after.py"
    b.write_text(before)
    a.write_text(after)
    report = review(ReviewRequest(FilesSource(b, a), budget=FAST))
    found = {i.unit.entry: i.result for i in report.items}
    assert found["Box"].verdict is Verdict.VERIFIED, found["Box"]
    assert found["Box"].method == "only the annotations changed"
    assert any("TYPE_CHECKING" in x for x in found["Box"].assumptions)
    assert found["Box.__init__"].verdict is Verdict.VERIFIED, found["Box.__init__"]
    # A class-level change that is code is still not checked.
    a.write_text(after.replace("    width: int\n", "    width: int = 0\n"))
    report = review(ReviewRequest(FilesSource(b, a), budget=FAST))
    found = {i.unit.entry: i.result for i in report.items}
    assert found["Box"].verdict is Verdict.INCONCLUSIVE, found["Box"]


ASYNC_BASE = b'''import asyncio


async def double(x: int) -> int:
    return x * 2


async def bump(x: int) -> int:
    return x + 1


async def wait(x: int) -> int:
    """Old."""
    await asyncio.sleep(0)
    return x


async def waits(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2
'''


def test_changed_async_functions_are_found_and_decided(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    base = repo.commit("one", {"pkg/__init__.py": b"", "pkg/m.py": ASYNC_BASE})
    after = (ASYNC_BASE.replace(b"return x * 2", b"return x + x")  # double and waits
             .replace(b"return x + 1", b"return x + 2").replace(b"Old.", b"New."))
    head = repo.commit("two", {"pkg/m.py": after})
    report = review(ReviewRequest(GitSource(repo.path, base, head), budget=FAST))
    found = {i.unit.entry: i.result for i in report.items}
    assert set(found) == {"double", "bump", "wait", "waits"}
    assert all(r.reason != Reason.NOT_FOUND for r in found.values()), found
    # The body never suspends: the model proves what awaiting the coroutines gives.
    assert found["double"].verdict is Verdict.VERIFIED, found["double"]
    assert any("async def" in a for a in found["double"].assumptions)
    # Awaited in the sandbox, the coroutines give different results.
    bump = found["bump"]
    assert bump.verdict is Verdict.REFUTED, bump
    assert bump.counterexample is not None
    assert "awaiting it returns" in bump.counterexample.after.text
    # Only the docstring changed, next to other changes: the same code, awaits and all.
    assert found["wait"].verdict is Verdict.VERIFIED, found["wait"]
    # It awaits: not modelled, and said so; running it found nothing.
    waits = found["waits"]
    assert waits.verdict is Verdict.INCONCLUSIVE, waits
    assert waits.reason == Reason.unsupported("async-function"), waits
    assert "`await` at line" in waits.detail


def _moved(tmp_path: Path, a_source: bytes, to: str) -> Report:
    """A package `pkg` (a.py importing b relatively) moved whole to `to` in one commit."""
    repo = GitRepo(tmp_path / "moved")
    files = {"pkg/__init__.py": b"", "pkg/b.py": b"K = 2\n", "pkg/a.py": a_source}
    repo.commit("initial", files)
    (repo.path / to).parent.mkdir(parents=True, exist_ok=True)
    repo.git("mv", "pkg", to)
    repo.commit("move")
    return review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"), budget=FAST))


A_SOURCE = b"from .b import K\n\n\ndef g(x: int) -> int:\n    return x + K\n"


def test_a_package_moved_under_src_keeps_its_modules() -> None:
    """`pkg/a.py` moved to `src/pkg/a.py` is still the module `pkg.a`: its relative
    imports reach the same modules, so its unchanged functions are not changed units."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        report = _moved(Path(tmp), A_SOURCE, "src/pkg")
        assert "src/pkg/a.py::g" not in by_name(report)
        assert report.unchanged >= 1
    with tempfile.TemporaryDirectory() as tmp:
        # Moved into another package, `pkg.sub.a`: another module, checked.
        repo = GitRepo(Path(tmp) / "sub")
        repo.commit("initial", {"pkg/__init__.py": b"", "pkg/b.py": b"K = 2\n",
                                "pkg/a.py": A_SOURCE})
        repo.write({"pkg/sub/__init__.py": b"", "pkg/sub/b.py": b"K = 3\n"})
        repo.git("mv", "pkg/a.py", "pkg/sub/a.py")
        repo.commit("move")
        report = review(ReviewRequest(GitSource(repo.path, base="HEAD~1", head="HEAD"),
                                      budget=FAST))
        assert by_name(report)["pkg/sub/a.py::g"].unit.kind is UnitKind.CHANGED


def test_a_moved_module_that_reads_its_file_location_stays_a_unit(tmp_path: Path) -> None:
    source = (b"import os\nfrom .b import K\n\n\ndef g(x: int) -> str:\n"
              b"    return os.path.dirname(__file__) * (x + K)\n")
    report = _moved(tmp_path, source, "src/pkg")
    assert by_name(report)["src/pkg/a.py::g"].unit.kind is UnitKind.CHANGED
