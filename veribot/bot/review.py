"""The review pipeline: the one call every front end (CLI, Action, App) ends in.

``review(request)`` finds the changed units (from a git range or a pair of files), asks the
equivalence check about each changed function, and returns a :class:`Report` with one
result per unit. ``request.select`` narrows the units before anything is decided (the
others are listed in ``Report.filtered_out``); beyond ``request.max_units`` checked
functions the rest are reported inconclusive with reason ``budget``, never dropped. Units
that are not compared (added, deleted, renamed, outside functions, binary, unparsable) get
an inconclusive result whose reason says why. A function whose
only change is its docstring or its layout, in a module that is otherwise the same code, is
verified at once (no solver). An internal error in
one unit becomes that unit's inconclusive result (reason ``internal-error``); the rest run.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import logging
import multiprocessing
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import git

from veribot.bot import gitrepo, safetyreview
from veribot.bot.agentreview import AgentConfig, ask_units, files_view, git_view
from veribot.bot.hintreview import improve_units
from veribot.bot.intent import Intent, called_name, declared_refactoring, intents, is_private
from veribot.bot.safetyreview import SafetyFinding
from veribot.checks.agent.intentview import Difference, IntentView, ask_view
from veribot.checks.agent.llm import UsageReport
from veribot.checks.agent.verdict import NOT_ASKED, AgentFinding
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyreflect
from veribot.checks.project.package import PairContext
from veribot.checks.project.units import (
    CLASS_DOCSTRING,
    LAYOUT_READ,
    MODULE_ENTRY,
    MOVED_UNCHANGED,
    REPLACED,
    ChangedUnit,
    FileChange,
    UnitKind,
    UnitLevel,
    changed_units,
    data_readers,
    function_entries,
    is_stub_path,
    is_test_path,
)
from veribot.checks.relational import check as relational
from veribot.checks.search import examples, testrun
from veribot.checks.search.examples import ExampleRun
from veribot.checks.verdict import Reason, Result, Verdict

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
"""Called with (units done, units total) as the review goes."""

# Reasons for units that have no earlier version to compare with: listed in every report,
# never a reason to fail a build even with ``--fail-on inconclusive``.
NOT_COMPARED_REASONS = frozenset(
    {Reason.ADDED, Reason.DELETED, Reason.RENAMED, Reason.NOT_A_FUNCTION}
)


class ReviewError(Exception):
    """The request itself cannot be served (a missing file, an unknown entry)."""


class FailOn(enum.Enum):
    """Which results make the review fail (exit code 1 on the command line)."""

    # An untested behaviour change, or any in a change declared a refactoring (``intent``);
    # a difference a test of the change shows is intended, and passes.
    UNTESTED = "untested"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"  # refuted, or a changed function that was not decided
    NEVER = "never"


@dataclass(frozen=True)
class GitSource:
    """Review the changes from ``base`` to ``head`` (``base=None``: the merge base)."""

    repo: Path
    base: str | None = None
    head: str = "HEAD"


@dataclass(frozen=True)
class FilesSource:
    """Compare two files; ``entries`` limits the check to these functions."""

    before: Path
    after: Path
    entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReviewRequest:
    """What to review and with what budget per unit."""

    source: GitSource | FilesSource
    budget: Budget = field(default_factory=Budget)
    jobs: int = 1
    select: Callable[[ChangedUnit], bool] | None = None  # which units to review; None: all
    max_units: int | None = None  # functions to check at most; the rest: inconclusive (budget)
    agent: AgentConfig | None = None  # the model to ask about each function; None: not asked
    agent_reason: str = ""  # why ``agent`` is None, said in the report ("" : no model configured)
    # Which files of a git range are reviewed; the others are listed as skipped, with why.
    review_tests: bool = True  # test files (tests/, test_*.py, *_test.py, conftest.py)
    review_stubs: bool = False  # .pyi stubs: declarations only, nothing to run or prove
    # Checked hints where the engine stopped (veribot.bot.hintreview): asked of ``agent``,
    # and kept in / read from the archive file (proven hints per repository ``repo_name``).
    hints: bool = False
    hints_archive: Path | None = None
    repo_name: str = ""
    hints_ask: bool = True  # False: only the archive's proven hints, no model call for hints
    # What declares the change behaviour-preserving (``intent.declared_refactoring`` of a
    # pull request's title, labels and commit subjects); None: the range's commit subjects
    # (when every one declares it).
    declared: str | None = None


@dataclass(frozen=True)
class UnitResult:
    """One line of the report: a unit and what was decided about it."""

    unit: ChangedUnit
    result: Result
    agent: AgentFinding | None = None  # what the agent answered (None: nothing to ask)
    # For a refutation, with an agent: whether the difference is what the pull request
    # and the docstring state (the agent's view, never a verdict).
    view: IntentView | None = None
    # Whether an input can make the head version crash (added functions, and changed ones
    # not proven to behave as before: ``safetyreview``); None where not asked.
    safety: SafetyFinding | None = None
    # The head docstring's examples (`>>>`), run beside each revision (``examples``).
    examples: tuple[ExampleRun, ...] = ()

    @property
    def compared(self) -> bool:
        """Whether the unit had two versions to compare (so its verdict can gate a build)."""
        return self.result.reason not in NOT_COMPARED_REASONS


@dataclass(frozen=True)
class Report:
    """Everything a review found, in the order of the diff."""

    items: tuple[UnitResult, ...]
    skipped: tuple[ChangedUnit, ...] = ()  # files that are not Python: listed, not checked
    filtered_out: tuple[ChangedUnit, ...] = ()  # units the request's ``select`` left out
    unchanged: int = 0  # functions in changed files whose code did not change
    root: Path | None = None  # the repository root that unit paths are relative to
    base: str = ""  # commit id (git) or file path (compare)
    head: str = ""
    base_label: str = ""
    head_label: str = ""
    elapsed_s: float = 0.0
    agent_model: str = ""  # the model asked about each function; "" when none was
    agent_usage: UsageReport | None = None  # calls, tokens and cache hits of the review
    agent_reason: str = ""  # why the agent was not asked, when it was not
    # What declares the change behaviour-preserving ("" : nothing): then any difference is
    # "a refactoring that changes behaviour" (``intent``).
    declared: str = ""
    # Refuted private functions (qualified names) that another file of the head revision
    # names, or that a review of two files cannot tell: they are judged on their own, not
    # through their callers (``intent``).
    named_elsewhere: frozenset[str] = frozenset()
    # The tests the change adds or edits that name a refuted function, run on both
    # revisions (``testrun``); ``tests_note``: why none ran although some would have.
    tests: tuple[testrun.TestRun, ...] = ()
    tests_note: str = ""
    # Why the type checker's warnings were not all read ("" : they were, or none asked).
    safety_note: str = ""

    def count(self, verdict: Verdict, *, compared_only: bool = False) -> int:
        """How many units got ``verdict``."""
        return sum(
            1
            for i in self.items
            if i.result.verdict is verdict and (i.compared or not compared_only)
        )

    def failed(self, fail_on: FailOn) -> bool:
        """Whether this report fails under ``fail_on``."""
        if fail_on is FailOn.NEVER:
            return False
        if fail_on is FailOn.UNTESTED:
            return any(f.intent in (Intent.UNTESTED, Intent.REFACTORING)
                       for f in intents(self, self.declared).values())
        if self.count(Verdict.REFUTED):
            return True
        return fail_on is FailOn.INCONCLUSIVE and bool(
            self.count(Verdict.INCONCLUSIVE, compared_only=True)
        )


def review(request: ReviewRequest, progress: ProgressCallback | None = None) -> Report:
    """Run the review: find the units, decide each, and report them all."""
    started = time.monotonic()
    source = request.source
    root: Path | None = None
    if isinstance(source, GitSource):
        changes = gitrepo.read_changes(source.repo, source.base, source.head)
        root, base, head = changes.root, changes.base, changes.head
        labels = (changes.base_label, changes.head_label)
        units = [u for f in changes.files for u in changed_units(f, include_unchanged=True)]
        found = units  # every unit, test files' included (``_test_runs``)
        unchanged = sum(1 for u in units if u.kind is UnitKind.UNCHANGED and not _moved(u))
        # Those of a moved file stay until its module's name is known (``_same_module_moves``).
        units = [u for u in units if u.kind is not UnitKind.UNCHANGED or _moved(u)]
        if any(u.kind is UnitKind.NOT_PYTHON for u in units):  # a data file changed
            units += data_readers(units, lambda p: gitrepo.package_context(
                root, base, head, p, p), gitrepo.package_folders(root, (base, head)))
    else:
        units = _file_units(source)
        base, head = str(source.before), str(source.after)
        labels = (base, head)
        unchanged = 0
    if isinstance(source, GitSource):
        units = with_packages(_skip_by_choice(units, request), changes)
        kept = _same_module_moves(units)
        unchanged += len(units) - len(kept)
        units = kept
    skipped = tuple(u for u in units if u.kind in (UnitKind.NOT_PYTHON, UnitKind.SKIPPED))
    units = [u for u in units if u.kind not in (UnitKind.NOT_PYTHON, UnitKind.SKIPPED)]
    filtered_out: tuple[ChangedUnit, ...] = ()
    if request.select is not None:
        chosen = [request.select(u) for u in units]
        filtered_out = tuple(u for u, keep in zip(units, chosen, strict=True) if not keep)
        units = [u for u, keep in zip(units, chosen, strict=True) if keep]

    cuts = _budget_cuts(units, request.max_units)
    done: dict[int, Result] = dict(cuts)
    # Changes of docstrings, annotations or layout alone last: each holds only where what
    # its module imports of the project is the same (``_noise_apart``).
    total, offset = len(units) - len(cuts), 0
    for last in (False, True):
        if last:
            unsure = {units[i].path for i in done if _unsure(units[i], done[i])} | {
                u.path for u in (*filtered_out, *skipped)}
            folders = gitrepo.package_folders(changes.root, (changes.base, changes.head)) if (
                isinstance(source, GitSource) and unsure) else frozenset()
            units = [u if i in done else _noise_apart(u, unsure, folders)
                     for i, u in enumerate(units)]
        todo = [i for i, u in enumerate(units)
                if i not in done and (last or u.noise not in NOISE_METHODS)]
        decided = _decide_all(
            [units[i] for i in todo], request.budget, max(1, request.jobs),
            None if progress is None else _onward(progress, offset, total, first=not last))
        done.update(zip(todo, decided, strict=True))
        offset += len(todo)
    results = [done[i] for i in range(len(units))]
    if request.hints:
        asked = request.agent if request.hints_ask else None
        results = improve_units(units, results, asked, request.budget,
                                request.hints_archive, request.repo_name)
    safety, safety_note = safetyreview.assess(units, results, request.budget)
    example_runs = _examples(units, request.budget)
    findings = _ask_agent(request, units, results, root, base, head)
    views = _agent_views(request, units, results)
    runs, runs_note = _test_runs(changes, found, units, results, request.budget) if (
        isinstance(source, GitSource)) else ((), "")
    return Report(
        items=tuple(UnitResult(u, r, a, v, s, e) for u, r, a, v, s, e in zip(
            units, results, findings, views, safety, example_runs, strict=True)),
        skipped=skipped,
        filtered_out=filtered_out,
        unchanged=unchanged,
        root=root,
        base=base,
        head=head,
        base_label=labels[0],
        head_label=labels[1],
        elapsed_s=time.monotonic() - started,
        agent_model=request.agent.llm.model if request.agent is not None else "",
        agent_usage=request.agent.meter.report()
        if request.agent is not None and request.agent.meter is not None
        else None,
        agent_reason="" if request.agent is not None else request.agent_reason,
        named_elsewhere=_named_elsewhere(root, head, units, results),
        declared=request.declared if request.declared is not None else (
            declared_refactoring((), changes.subjects) if isinstance(source, GitSource)
            else ""),
        tests=runs,
        tests_note=runs_note,
        safety_note=safety_note,
    )


# Functions whose docstring examples run per review.
MAX_EXAMPLE_UNITS = 24


def _examples(units: Sequence[ChangedUnit], budget: Budget) -> list[tuple[ExampleRun, ...]]:
    """The head docstring's examples of each added or changed function outside test files,
    run beside each revision (none where nothing may run)."""
    out: list[tuple[ExampleRun, ...]] = []
    ran = 0
    for unit in units:
        doc = examples.docstring_of(unit.after_source, unit.entry) if (
            unit.after_source is not None and unit.is_function) else None
        if (not budget.execute or ran >= MAX_EXAMPLE_UNITS or is_test_path(unit.path)
                or unit.kind not in (UnitKind.ADDED, UnitKind.CHANGED)
                or doc is None or not examples.has_examples(doc)):
            out.append(())
            continue
        ran += 1
        assert unit.after_source is not None
        ctx = unit.context
        try:
            runs = examples.run_examples(
                unit.entry, doc, unit.after_source, ctx.after if ctx else None,
                unit.before_source if unit.kind is UnitKind.CHANGED else None,
                ctx.before if ctx else None)
        except Exception:  # the one place per unit: log it, go on without its examples
            logger.exception("the docstring examples of %s did not run", unit.qualname)
            runs = []
        out.append(tuple(runs))
    return out


def _test_runs(changes: gitrepo.ChangeSet, found: Sequence[ChangedUnit],
               units: Sequence[ChangedUnit], results: Sequence[Result], budget: Budget,
               ) -> tuple[tuple[testrun.TestRun, ...], str]:
    """The tests the change adds or edits (among ``found``, every unit of the change)
    that name a refuted function outside test files (of ``units``, decided as
    ``results``), each run on both revisions; or why they were not run."""
    refuted = [u for u, r in zip(units, results, strict=True)
               if r.verdict is Verdict.REFUTED and not is_test_path(u.path)]
    if not refuted:
        return (), ""
    tests = testrun.changed_tests(found, {called_name(u) for u in refuted})
    if not tests:
        return (), ""
    if not budget.execute:
        return (), "the changed tests were not run: running the code under review is off"
    try:
        repo = gitrepo.open_repo(changes.root)
        base = gitrepo.Revision(repo, changes.base)
        head = gitrepo.Revision(repo, changes.head)
        roots = tuple(dict.fromkeys((
            *testrun.code_roots(base, [u.before_path for u in refuted if u.before_path]),
            *testrun.code_roots(head, [u.after_path for u in refuted if u.after_path]))))
        paths = list(dict.fromkeys(t.path for t in tests))
        before, left_before = testrun.workspace(base, head, roots, paths)
        after, left_after = testrun.workspace(head, head, roots, paths)
    except (git.GitCommandError, gitrepo.GitRepoError, ValueError) as exc:
        return (), f"the changed tests were not run: the revisions could not be read ({exc})"
    runs = tuple(testrun.run_tests(tests, before, after, roots))
    left = max(left_before, left_after)
    return runs, (f"{left} file{'s' if left != 1 else ''} of the project did not fit in the "
                  "tests' sandbox" if left else "")


def _onward(progress: ProgressCallback, offset: int, total: int, *,
            first: bool) -> ProgressCallback:
    """``progress`` of a round of checks: counted on from ``offset`` of ``total`` (the
    start said once, by the ``first`` round)."""

    def report(done: int, _: int) -> None:
        if done or first:
            progress(offset + done, total)

    return report


def _unsure(unit: ChangedUnit, result: Result) -> bool:
    """Whether the unit's change may change what code calling it, or reading what it
    binds, does: any change but one verified for every input and every caller (the same
    code in the same environment, or a change of docstring, annotations or layout alone
    no code reads). A proof over declared or inferred types says nothing of a caller that
    passes other values; an added function is seen by ``hasattr``."""
    if result.verdict is not Verdict.VERIFIED:
        return True
    if result.method in NOISE_METHODS.values():
        return False
    return not (result.method == relational.METHOD and not any(
        "inferred" in a or "declared" in a for a in result.assumptions))


def _noise_apart(unit: ChangedUnit, unsure: set[str],
                 folders: frozenset[str] = frozenset()) -> ChangedUnit:
    """The unit, checked as any change is where only its docstring, annotations or layout
    changed but what its module imports may have changed otherwise (``unsure`` paths): the
    rest of the module is the same code, but not what it calls (``pkg/a.py`` returns
    ``b.K``, and ``pkg/b.py`` changed ``K``)."""
    others = unsure - {unit.path}
    if unit.noise not in NOISE_METHODS or not others or _imports_reach(
            unit, others, folders) is False:
        return unit
    why = (f"{unit.detail}, but code it may import changed in this range and is not "
           "verified for every caller: checked as any change")
    return dataclasses.replace(unit, noise="", detail=why)


# Words of code that imports a module by a name it computes, or reaches one otherwise.
_DYNAMIC_IMPORTS = {"import_module", "__import__", "modules", "importlib", "pkgutil",
                    "run_path", "run_module", "exec", "eval", "spec_from_file_location"}


def _imports_reach(unit: ChangedUnit, paths: set[str],
                   folders: frozenset[str] = frozenset()) -> bool | None:
    """Whether the unit's module, in either version, may reach one of ``paths``: a module
    it imports, itself or through the modules it imports (each package's ``__init__`` runs
    first, the module's own too), or a file of another kind in its package's folder (data
    it may read). None where that cannot be known (no package read, one the size caps cut,
    a module that imports by a computed name or does not parse, an import that leaves the
    files read while a path is outside them): the caller takes it as reached."""
    context = unit.context
    if context is None:
        return None
    for package, source in ((context.before, unit.before_source),
                            (context.after, unit.after_source)):
        if source is None:
            continue
        if package is None or package.left_out:
            return None  # (a package named like a module of the standard library has none)
        files = package.tree(source)
        prefix = f"{package.root}/" if package.root else ""
        top = prefix + package.module.split(".")[0] + "/"
        if any(not p.endswith(".py") and p.startswith(top) for p in paths):
            return True  # a data file of the package
        # An import reaches Python files only: those of the package, a module at the top
        # of the folder on `sys.path`, and those of regular packages there (`folders`: an
        # `__init__.py` in each folder); not `doc/source/conf.py`, which only an import of
        # a namespace package by a computed name would reach.
        importable = {p for p in paths if p.endswith(".py") and (
            p in files or _in_packages(p, prefix, folders))}
        if not importable:
            continue
        outside = any(p not in files for p in importable)
        by_name = {_dotted(path.removeprefix(prefix)): path for path in files
                   if path.endswith(".py") and path.startswith(prefix)}
        parts = package.module.split(".")
        todo = [package.path, *(by_name[m] for m in (
            ".".join(parts[:i]) for i in range(1, len(parts))) if m in by_name)]
        seen: set[str] = set()
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            if path in importable:
                return True
            try:
                tree = ast.parse(files[path])
            except (SyntaxError, ValueError):
                return None
            if any((isinstance(n, ast.Name) and n.id in _DYNAMIC_IMPORTS) or (
                    isinstance(n, ast.Attribute) and n.attr in _DYNAMIC_IMPORTS)
                   for n in ast.walk(tree)):
                return None
            name = _dotted(path.removeprefix(prefix))
            here = name if path.endswith("__init__.py") else name.rpartition(".")[0]
            for module in _imported(tree, here):
                if module in by_name:
                    todo.append(by_name[module])
                    continue
                # From another folder on `sys.path` (the repository's top, a namespace
                # package): `import pkg.b` of `pkg/b.py`.
                as_path = module.replace(".", "/")
                if paths & {f"{as_path}.py", f"{as_path}/__init__.py"}:
                    return True
                if outside and module.split(".")[0] not in sys.stdlib_module_names:
                    return None
    return False


def _in_packages(path: str, prefix: str, folders: frozenset[str]) -> bool:
    """Whether ``path`` is under ``prefix`` (the folder on ``sys.path``) and each folder
    between is a regular package (in ``folders``)."""
    if not path.startswith(prefix):
        return False
    parts = path.removeprefix(prefix).split("/")[:-1]
    return all(prefix + "/".join(parts[:i + 1]) in folders for i in range(len(parts)))


def _dotted(path: str) -> str:
    """``pkg.sub.mod`` of ``pkg/sub/mod.py`` (``pkg.sub`` of ``pkg/sub/__init__.py``)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _imported(tree: ast.Module, package: str) -> set[str]:
    """Every module an import of ``tree`` may run, ``package`` being the package it is
    in: each dotted prefix (a package's ``__init__`` runs first), and each imported name
    that may be a submodule (``from . import utils``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            full = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([base] if base else [])])
            full = [base, *(f"{base}.{a.name}" if base else a.name for a in node.names)]
        else:
            continue
        for name in full:
            parts = name.split(".")
            names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return names


# Words of a module that may read where its file is (``__file__``, a code object's file
# name, a frame): a move changes what they give even where the dotted name stays.
_READS_LOCATION = re.compile(
    r"__file__|__spec__|__loader__|__cached__|__path__|getfile|getsourcefile|getabsfile"
    r"|co_filename|_getframe|currentframe|f_code|__code__|traceback|inspect|getsource")


def _moved(unit: ChangedUnit) -> bool:
    """Whether the unit's file moved."""
    return unit.before_path is not None and unit.before_path != unit.after_path


# The detail of an unchanged function of a module whose dotted name changed.
MOVED_RENAMED = ("its code is unchanged, but its module moved from `{}` to `{}`: what it "
                 "builds from the module's name (`__name__`, a class's `__module__` or repr, "
                 "pickling, a logger's name) may differ")


def _same_module_moves(units: list[ChangedUnit]) -> list[ChangedUnit]:
    """The units of moved files that may behave otherwise. A file that moved but kept its
    dotted name (a package moved under `src/`) is the same module, and its relative
    imports reach the same modules as before: its unchanged functions are dropped, unless
    the module may read where its file is. A module whose dotted name changed keeps as
    changed units its unchanged functions but those that can observe nothing of the
    module (``pyreflect.module_blind``): any other may build its result from the name."""
    out = []
    for unit in units:
        ctx = unit.context
        before = ctx.before.module if ctx is not None and ctx.before is not None else None
        after = ctx.after.module if ctx is not None and ctx.after is not None else None
        if unit.kind is UnitKind.UNCHANGED:
            if before != after and not _blind(unit):
                out.append(dataclasses.replace(unit, kind=UnitKind.CHANGED, detail=(
                    MOVED_RENAMED.format(before, after))))
            continue
        if (unit.kind is UnitKind.CHANGED and unit.detail == MOVED_UNCHANGED
                and before is not None and before == after
                and not any(_READS_LOCATION.search(s or "")
                            for s in (unit.before_source, unit.after_source))):
            continue
        out.append(unit)
    return out


def _blind(unit: ChangedUnit) -> bool:
    """Whether both versions of the unit's function can observe nothing of its module."""
    for source in (unit.before_source, unit.after_source):
        try:
            tree = ast.parse(source or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        if not pyreflect.module_blind(tree, unit.entry):
            return False
    return True


def with_packages(units: list[ChangedUnit], changes: gitrepo.ChangeSet) -> list[ChangedUnit]:
    """Each unit to compare with its versions' packages, read once per file."""
    cache: dict[tuple[str | None, str | None], PairContext] = {}
    names: dict[tuple[str | None, str | None], list[str]] = {}
    for unit in units:  # the changed functions of each file, whose tests are read
        if _not_checked(unit) is None:
            # A method is called on an object its class builds: tests name both (a
            # special method, `__eq__`, is called through an operation: by its class).
            names.setdefault((unit.before_path, unit.after_path), []).extend(
                n for n in unit.entry.split(".")[-2:] if not n.startswith("__"))
    out = []
    for unit in units:
        # Added functions too: their crash safety and docstring examples run them.
        if _not_checked(unit) is not None and not (
                unit.kind is UnitKind.ADDED and unit.is_function):
            out.append(unit)
            continue
        key = (unit.before_path, unit.after_path)
        if key not in cache:
            cache[key] = gitrepo.package_context(changes.root, changes.base, changes.head, *key,
                                                 names=names.get(key, ()))
        out.append(dataclasses.replace(unit, context=cache[key]))
    return out


STUBS_SKIPPED = "a .pyi stub: not checked (review_stubs = false in .veribot.toml)"
TESTS_SKIPPED = "a test file: not checked (review_tests = false in .veribot.toml)"


def _skip_by_choice(units: list[ChangedUnit], request: ReviewRequest) -> list[ChangedUnit]:
    """Units of stubs and test files the request leaves out become one skipped unit per
    file, saying why, in the place of the file's first unit."""
    out: list[ChangedUnit] = []
    seen: set[str] = set()
    for u in units:
        why = ""
        if u.kind is not UnitKind.NOT_PYTHON:
            if not request.review_stubs and is_stub_path(u.path):
                why = STUBS_SKIPPED
            elif not request.review_tests and is_test_path(u.path):
                why = TESTS_SKIPPED
        if not why:
            out.append(u)
        elif u.path not in seen:
            seen.add(u.path)
            out.append(
                dataclasses.replace(
                    u,
                    kind=UnitKind.SKIPPED,
                    entry=MODULE_ENTRY,
                    detail=why,
                    level=UnitLevel.FILE,
                    noise="",
                )
            )
    return out


def _named_elsewhere(root: Path | None, head: str, units: Sequence[ChangedUnit],
                     results: Sequence[Result]) -> frozenset[str]:
    """The refuted private functions (``intent.is_private``) whose name another Python file of
    the head revision holds as a word (``git grep``); all of them without a repository, or
    where the search fails."""
    private = [u for u, r in zip(units, results, strict=True)
               if r.verdict is Verdict.REFUTED and is_private(u.entry)]
    if not private:
        return frozenset()
    if root is None:
        return frozenset(u.qualname for u in private)
    repo = gitrepo.open_repo(root)
    out: set[str] = set()
    for u in private:
        name = u.entry.rpartition(".")[2]
        try:
            found = repo.git.grep("-l", "-w", "-F", "-e", name, head, "--", "*.py")
        except git.GitCommandError as error:  # nothing found (status 1), or it failed
            if error.status == 1:
                continue
            out.add(u.qualname)
            continue
        paths = {line.partition(":")[2] for line in found.splitlines()}
        if paths - {u.after_path or u.path}:
            out.add(u.qualname)
    return frozenset(out)


def _ask_agent(
    request: ReviewRequest,
    units: list[ChangedUnit],
    results: list[Result],
    root: Path | None,
    base: str,
    head: str,
) -> list[AgentFinding | None]:
    """The agent's finding per unit; "not asked" for every function when no model is set."""
    if request.agent is None:
        return [NOT_ASKED if _not_checked(u) is None else None for u in units]
    source = request.source
    if isinstance(source, GitSource):
        view = git_view(root or source.repo, base, head)
    else:
        view = files_view(source.before, source.after, source.after.as_posix())
    return ask_units(units, results, request.agent, view, execute=request.budget.execute)


def _agent_views(request: ReviewRequest, units: list[ChangedUnit],
                 results: list[Result]) -> list[IntentView | None]:
    """For each refuted function outside test files, with an agent and a pull request
    (its title and description): its view of whether the difference is what they and the
    docstring state (``intentview``)."""
    out: list[IntentView | None] = []
    for u, r in zip(units, results, strict=True):
        cex = r.counterexample
        if (request.agent is None or not request.agent.pr_text.strip()
                or r.verdict is not Verdict.REFUTED or cex is None
                or is_test_path(u.path) or u.before_source is None or u.after_source is None):
            out.append(None)
            continue
        owner, _, name = u.entry.rpartition(".")
        shown = Difference(u.entry, u.path, cex.call(owner if name == "__init__" and owner
                                                     else name),
                           cex.before.describe(), cex.after.describe(), u.before_source,
                           u.after_source)
        out.append(ask_view(request.agent.llm, request.agent.pr_text, shown,
                            temperature=request.agent.limits.temperature))
    return out


def _file_units(source: FilesSource) -> list[ChangedUnit]:
    """Units of a pair of files: every function in both is compared, changed or not."""
    data = []
    for p in (source.before, source.after):
        try:
            data.append(p.read_bytes())
        except OSError as exc:
            raise ReviewError(f"cannot read {p}: {exc.strerror or exc}.") from exc
    # Both versions are shown under the after file's name, so no "file renamed" unit.
    name = source.after.as_posix()
    change = FileChange(name, name, data[0], data[1])
    units = list(changed_units(change, include_unchanged=True))
    if not source.entries:
        return units
    for entry in source.entries:
        for label, path, blob in (
            ("BEFORE", source.before, data[0]),
            ("AFTER", source.after, data[1]),
        ):
            try:
                entries = function_entries(blob.decode("utf-8", errors="replace"))
            except (SyntaxError, ValueError):
                continue  # the parse-error unit says it
            if entry not in entries:
                raise ReviewError(f"no function '{entry}' in {label} file {path}.")
    wanted = set(source.entries)
    return [u for u in units if u.entry in wanted or u.kind is UnitKind.PARSE_ERROR]


def _budget_cuts(units: list[ChangedUnit], max_units: int | None) -> dict[int, Result]:
    """Results for the functions beyond the first ``max_units`` to check (by index)."""
    if max_units is None:
        return {}
    cuts: dict[int, Result] = {}
    checked = 0
    for i, unit in enumerate(units):
        if _not_checked(unit) is not None:
            continue  # nothing to decide: costs no budget
        checked += 1
        if checked > max_units:
            cuts[i] = Result(
                Verdict.INCONCLUSIVE,
                Reason.BUDGET,
                f"not checked: the budget of {max_units} function(s) per review was spent",
                line=unit.line,
            )
    return cuts


def _decide_all(
    units: list[ChangedUnit], budget: Budget, jobs: int, progress: ProgressCallback | None
) -> list[Result]:
    total = len(units)
    results: list[Result | None] = [None] * total
    if progress:
        progress(0, total)
    if jobs == 1 or total <= 1:
        for i, u in enumerate(units):
            results[i] = decide(u, budget)
            if progress:
                progress(i + 1, total)
    else:
        # Processes, not threads: Z3's default context and CrossHair are not thread-safe.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(decide, u, budget): i for i, u in enumerate(units)}
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = _collect(fut, units[futures[fut]])
                if progress:
                    progress(done, total)
    return [r for r in results if r is not None]


def _collect(fut: Future[Result], unit: ChangedUnit) -> Result:
    """A worker's result; a worker that died (killed, out of memory) is an internal error."""
    try:
        return fut.result()
    except (BrokenProcessPool, OSError) as exc:
        logger.error("the worker checking %s died: %s", unit.qualname, exc)
        return Result(
            Verdict.INCONCLUSIVE, Reason.INTERNAL_ERROR, f"internal error: worker died: {exc}"
        )


def decide(unit: ChangedUnit, budget: Budget) -> Result:
    """The result for one unit; never raises (an internal error becomes inconclusive)."""
    not_checked = _not_checked(unit)
    if not_checked is not None:
        return not_checked
    assert unit.before_source is not None and unit.after_source is not None
    noise = _noise_result(unit)
    if noise is not None:
        return noise
    started = time.monotonic()
    try:
        result = check_pair(unit.before_source, unit.after_source, unit.entry,
                            budget=budget, context=unit.context)
        if unit.detail:  # why the unit is checked at all (a module-level name it reads changed)
            result = dataclasses.replace(result, detail=f"{unit.detail}; {result.detail}")
        return result
    except Exception as exc:  # the one place per unit: report it, log it, go on
        logger.exception("internal error while checking %s", unit.qualname)
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.INTERNAL_ERROR,
            f"internal error: {type(exc).__name__}: {exc}",
            time_s=time.monotonic() - started,
        )


NOISE_METHODS = {
    "docstring": "only the docstring changed",
    CLASS_DOCSTRING: "only the class's docstring changed",
    "annotations": "only the annotations changed",
    "formatting": "only formatting and comments changed",
}
NOISE_ASSUMPTIONS = {
    "docstring": (
        "the program does not read the function's docstring (`__doc__`)",
        "line numbers and source text (tracebacks, `inspect.getsource`) are not behaviour",
    ),
    "annotations": (
        "the program does not read the annotations of the function, its class or its "
        "module (`__annotations__`, `typing.get_type_hints`, `inspect.signature`) or the "
        "function's docstring",
        "`typing.TYPE_CHECKING` is false when the program runs",
        "line numbers and source text (tracebacks, `inspect.getsource`) are not behaviour",
    ),
    "formatting": (
        "line numbers and source text (tracebacks, `inspect.getsource`) are not behaviour",
    ),
    CLASS_DOCSTRING: (
        "the program does not read the class's docstring (`__doc__`)",
        "line numbers and source text (tracebacks, `inspect.getsource`) are not behaviour",
    ),
}


def _noise_result(unit: ChangedUnit) -> Result | None:
    """Verified at once when only the docstring, the annotations or the layout changed
    (``units`` and ``noise`` checked that the rest of the module is the same code and that
    nothing of it reads what changed)."""
    if unit.noise not in NOISE_METHODS:
        return None
    method = NOISE_METHODS[unit.noise]
    rest = "" if unit.noise == CLASS_DOCSTRING else "; the rest of the module is the same code"
    return Result(
        Verdict.VERIFIED,
        Reason.PROOF,
        f"{unit.detail or method}{rest}",
        method=method,
        assumptions=NOISE_ASSUMPTIONS[unit.noise],
        line=unit.line,
    )


def _not_checked(unit: ChangedUnit) -> Result | None:
    """The inconclusive result of a unit that is not compared, or None to compare it."""

    def result(reason: str, detail: str) -> Result:
        return Result(Verdict.INCONCLUSIVE, reason, detail, line=unit.line)

    kind = unit.kind
    if kind is UnitKind.ADDED:
        return result(Reason.ADDED, f"{unit.detail}: no earlier version to compare with")
    if kind is UnitKind.DELETED:
        return result(Reason.DELETED, f"{unit.detail}: no later version to compare with")
    if kind is UnitKind.RENAMED and not unit.is_function:
        return result(Reason.RENAMED, f"{unit.detail}; its functions are paired across the move")
    if kind is UnitKind.RENAMED:
        return result(Reason.RENAMED, f"{unit.detail}: not compared, its callers change too")
    if unit.noise == REPLACED:
        return result(Reason.unsupported("a-definition-replaced-later"),
                      f"{unit.detail}, which the module replaces with a later definition "
                      "(code may still hold the earlier one): not checked")
    if unit.noise == LAYOUT_READ:
        return result(Reason.unsupported("a-layout-change-read"), f"{unit.detail}: not checked")
    if kind is UnitKind.OUTSIDE_FUNCTIONS and unit.noise:
        return None  # only noise changed outside functions: `_noise_result` decides
    if kind is UnitKind.OUTSIDE_FUNCTIONS:
        return result(Reason.NOT_A_FUNCTION, f"{unit.detail}: not checked")
    if kind is UnitKind.PARSE_ERROR:
        return result(Reason.PARSE_ERROR, unit.detail)
    if kind is UnitKind.BINARY:
        return result(Reason.BINARY, unit.detail)
    if kind is UnitKind.NOT_PYTHON:
        return result(Reason.unsupported("language"), unit.detail)
    if not unit.is_function:
        return result(Reason.NOT_A_FUNCTION, unit.detail or "not a function: not checked")
    return None
