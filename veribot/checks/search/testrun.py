"""Run the tests a change adds or edits on both revisions, in the sandbox.

A behaviour change is *intended and tested* when a test the change adds or edits observes
it: the test fails (or errs) on the base revision and passes on the head. To see that,
each such test (the head revision's text) runs under pytest twice, once beside each
revision's code:

- **what runs**: the test functions of test files that the change adds or whose code it
  edits (``test_*`` functions and methods, parametrized rows included), and only those
  that name one of the functions in question (directly, or through a helper function of
  their own file); at most ``MAX_TESTS``;
- **the files**: from each revision, the project's packages (every package folder beside
  the code in question, on ``sys.path`` as the repository lays it out, data files
  included); from the head revision, the test files themselves, the other modules and
  the data files of their folder, and the ``conftest.py`` and ``__init__.py`` files of
  the folders above them. Everything is bounded (``MAX_FILES``, ``MAX_BYTES``);
- **how**: ``pytest`` of the environment veribot runs in, with the project's own pytest
  configuration left out (its options may name plugins that are not installed here) and
  no plugin loaded by entry point; one sandboxed child per revision (``sandbox.run_script``:
  no network, no processes, a wall-clock limit). A test that needs what the sandbox does
  not have (a plugin, a library the project depends on, the network) errs on both sides
  and observes nothing: the report says so.

The outcomes are reported by the child itself, so code under test could forge them; they
only say whether the change's own tests observe its behaviour (something its author could
also write a test for), never a verdict.
"""

from __future__ import annotations

import ast
import concurrent.futures
import json
import posixpath
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from veribot.checks import sandbox
from veribot.checks.project.units import ChangedUnit, UnitKind, is_test_path

__all__ = ["MAX_BYTES", "MAX_FILES", "MAX_TESTS", "ChangedTest", "Files", "Outcome",
           "TestRun", "changed_tests", "code_roots", "run_tests", "workspace"]

MAX_TESTS = 24  # test functions run per review
MAX_FILES = 1200  # files copied per revision
MAX_BYTES = 8 * 1024 * 1024  # bytes copied per revision
_TEST_DATA_BYTES = 2 * 1024 * 1024  # of them, the test folders' data files at most
LIMITS = sandbox.Limits(wall_s=90.0, call_s=90.0, cpu_s=90, memory_mb=1024,
                        file_size_mb=8, disk_mb=96)
_DETAIL_CHARS = 240
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Files(Protocol):
    """The files of one revision, read-only."""

    def exists(self, path: str) -> bool: ...

    def listing(self, folder: str, recursive: bool) -> list[str]: ...

    def read(self, path: str) -> bytes | None: ...


@dataclass(frozen=True)
class ChangedTest:
    """A test function the change adds or edits, in the head revision."""

    path: str  # repository-relative test file
    entry: str  # ``test_x`` or ``TestClass.test_x``
    added: bool  # added by the change (else edited)
    names: frozenset[str]  # the functions in question it names

    @property
    def nodeid(self) -> str:
        return f"{self.path}::{self.entry.replace('.', '::')}"


@dataclass(frozen=True)
class Outcome:
    """A test's outcome on one revision."""

    kind: str  # "passed", "failed", "error", "skipped" or "not-run"
    detail: str = ""  # the first line of the failure, or why it did not run

    def describe(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


@dataclass(frozen=True)
class TestRun:
    """A changed test and its outcome on each revision."""

    __test__ = False  # not a pytest test class, though its name starts with "Test"

    test: ChangedTest
    before: Outcome
    after: Outcome

    @property
    def observes(self) -> bool:
        """Whether the test fails (or errs) before and passes after: it observes the
        change."""
        return self.before.kind in ("failed", "error") and self.after.kind == "passed"

    @property
    def ran(self) -> bool:
        """Whether the test ran through on the head revision (passed or failed there), so
        its outcome says something of the change."""
        return self.after.kind in ("passed", "failed")


# --------------------------------------------------------------------- which tests to run


def changed_tests(units: Iterable[ChangedUnit], names: Iterable[str]) -> list[ChangedTest]:
    """The test functions among ``units`` (a review's changed units, test files included)
    that the change adds or edits and that name one of ``names`` (function or class
    names) in their own code or through a module-level helper of their file they call;
    the first ``MAX_TESTS`` in diff order."""
    wanted = frozenset(names)
    found: list[ChangedTest] = []
    helpers: dict[str, dict[str, set[str]]] = {}
    for u in units:
        if not (u.kind in (UnitKind.ADDED, UnitKind.CHANGED) and u.is_function
                and u.after_path is not None and u.after_path.endswith(".py")
                and is_test_path(u.after_path) and _is_test_entry(u.entry)
                and u.after_lines and u.after_source):
            continue
        if u.after_path not in helpers:
            helpers[u.after_path] = _helper_words(u.after_source)
        start, end = u.after_lines
        own = set(_WORD.findall("\n".join(u.after_source.splitlines()[start - 1:end])))
        seen = set(own)
        for helper in own & helpers[u.after_path].keys():
            seen |= helpers[u.after_path][helper]
        named = wanted & seen
        if named:
            found.append(ChangedTest(u.after_path, u.entry, u.kind is UnitKind.ADDED,
                                     frozenset(named)))
            if len(found) == MAX_TESTS:
                break
    return found


def _is_test_entry(entry: str) -> bool:
    parts = entry.split(".")
    return len(parts) <= 2 and parts[-1].startswith("test")


def _helper_words(source: str) -> dict[str, set[str]]:
    """The words of each module-level function of a test file that is not a test itself
    (a helper a test calls, ``check(x)``), by its name."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {n.name: set(_WORD.findall(ast.get_source_segment(source, n) or ""))
            for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and not n.name.startswith("test")}


# ------------------------------------------------------------------------- what is copied


def code_roots(files: Files, module_paths: Iterable[str]) -> tuple[str, ...]:
    """The ``sys.path`` folders of the modules at ``module_paths``: the folder above the
    top package folder (the first without ``__init__.py``), as in the repository."""
    roots: list[str] = []
    for path in module_paths:
        folder = posixpath.dirname(path)
        while folder and files.exists(posixpath.join(folder, "__init__.py")):
            folder = posixpath.dirname(folder)
        if folder not in roots:
            roots.append(folder)
    return tuple(roots)


def workspace(code: Files, head: Files, roots: Sequence[str],
              tests: Sequence[str]) -> tuple[dict[str, str | bytes], int]:
    """The files to run ``tests`` (test file paths) with: the packages and top-level
    modules of each of ``roots`` from ``code`` (their test files left out), then from
    ``head`` each test file, the modules of its folder, the ``conftest.py`` and
    ``__init__.py`` of the folders above it, and its folder's other files (data). Returns
    the files and how many the caps left out."""
    chosen: list[tuple[str, Files]] = []
    for root in roots:
        prefix = f"{root}/" if root else ""
        everything = [p for p in code.listing(root, True) if p.startswith(prefix)]
        tops = sorted({p[len(prefix):].split("/", 1)[0] for p in everything
                       if "/" in p[len(prefix):]})
        packages = tuple(f"{prefix}{t}/" for t in tops
                         if code.exists(f"{prefix}{t}/__init__.py"))
        kept = [p for p in everything if not is_test_path(p) and (
            p.startswith(packages) or ("/" not in p[len(prefix):] and p.endswith(".py")))]
        chosen += [(p, code) for p in sorted(kept, key=lambda p: (
            not p.endswith(".py"), p.count("/"), p))]
    support: list[str] = []
    data: list[str] = []
    for test in tests:
        folder = posixpath.dirname(test)
        support.append(test)
        listed = head.listing(folder, bool(folder))
        support += sorted(p for p in listed if p.endswith(".py")
                          and posixpath.dirname(p) == folder)
        data += sorted((p for p in listed if folder and not p.endswith(".py")),
                       key=lambda p: (p.count("/"), p))
        while True:
            for name in ("conftest.py", "__init__.py"):
                candidate = posixpath.join(folder, name)
                if head.exists(candidate):
                    support.append(candidate)
            if not folder:
                break
            folder = posixpath.dirname(folder)
    chosen += [(p, head) for p in dict.fromkeys(support)]
    test_data = set(data)
    files: dict[str, str | bytes] = {}
    size = left_out = data_size = 0
    for path, where in [*chosen, *((p, head) for p in dict.fromkeys(data))]:
        from_tests = where is head and path in test_data
        if path in files and where is not head:
            continue
        blob = where.read(path) if len(files) < MAX_FILES and _safe(path) else None
        if blob is None or size + len(blob) > MAX_BYTES or (
                from_tests and data_size + len(blob) > _TEST_DATA_BYTES):
            left_out += 1
            continue
        size += len(blob) - len(_bytes(files.get(path)))
        data_size += len(blob) if from_tests else 0
        files[path] = blob
    return files, left_out


def _bytes(value: str | bytes | None) -> bytes:
    return value.encode() if isinstance(value, str) else value or b""


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(
        p not in ("", ".", "..") for p in parts)


# ----------------------------------------------------------------------------- running


_REPO = "repo"

_DRIVER = r'''
import json, os, sys, tempfile
CONFIG = json.loads(CONFIG_TEXT)
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.dont_write_bytecode = True
repo = os.path.abspath(CONFIG["repo"])
sys.path[:0] = [os.path.join(repo, r) if r else repo for r in CONFIG["roots"]]
os.chdir(repo)
outcomes = {}

def first_line(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(report.longrepr, tuple):
        text = str(report.longrepr[-1])
    else:
        lines = [l for l in str(report.longrepr or "").splitlines() if l.strip()]
        text = lines[-1] if lines else ""
    text = text.strip().splitlines()[0] if text.strip() else ""
    return text[:240]

class Collect:
    def pytest_runtest_logreport(self, report):
        base = report.nodeid.split("[", 1)[0]
        kind = None
        if report.when == "call":
            kind = "passed" if report.passed else "failed" if report.failed else "skipped"
        elif report.failed:
            kind = "error"
        elif report.skipped:
            kind = "skipped"
        if kind is None:
            return
        rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
        old = outcomes.get(base)
        if old is None or rank[kind] > rank[old[0]]:
            outcomes[base] = (kind, "" if kind == "passed" else first_line(report))

    def pytest_collection_modifyitems(self, session, config, items):
        wanted = set(CONFIG["nodeids"])
        keep = [i for i in items if i.nodeid.split("[", 1)[0] in wanted]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_collectreport(self, report):
        if report.failed:
            outcomes.setdefault("collect:" + report.nodeid.split("::", 1)[0],
                                ("error", "collecting it: " + first_line(report)))

try:
    import pytest
except ImportError as exc:
    outcomes["*"] = ("not-run", "pytest is not installed where veribot runs")
else:
    ini = os.path.join(tempfile.mkdtemp(), "empty.ini")
    with open(ini, "w") as f:
        f.write("[pytest]\n")
    paths = list(dict.fromkeys(n.split("::", 1)[0] for n in CONFIG["nodeids"]))
    pytest.main([*paths, "-c", ini, "--rootdir", repo,
                 "-p", "no:cacheprovider", "-q", "--no-header",
                 "--continue-on-collection-errors"],
                plugins=[Collect()])
print("\n" + CONFIG["mark"] + json.dumps(outcomes))
'''


def run_tests(tests: Sequence[ChangedTest], before: dict[str, str | bytes],
              after: dict[str, str | bytes], roots: Sequence[str],
              limits: sandbox.Limits = LIMITS) -> list[TestRun]:
    """Run ``tests`` beside the files of each revision (``workspace``), in two sandboxed
    children at once; each test's outcome on each side."""
    if not tests:
        return []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        sides = list(pool.map(lambda files: _run_side(tests, files, roots, limits),
                              (before, after)))
    return [TestRun(t, sides[0][t.nodeid], sides[1][t.nodeid]) for t in tests]


def _run_side(tests: Sequence[ChangedTest], files: dict[str, str | bytes],
              roots: Sequence[str], limits: sandbox.Limits) -> dict[str, Outcome]:
    mark = f"veribot-tests-{secrets.token_hex(8)}:"
    config = {"repo": _REPO, "roots": list(roots), "mark": mark,
              "nodeids": [t.nodeid for t in tests]}
    script = f"CONFIG_TEXT = {json.dumps(json.dumps(config))}\n{_DRIVER}"
    try:
        run = sandbox.run_script(script, {f"{_REPO}/{p}": v for p, v in files.items()},
                                 limits=limits)
    except sandbox.SandboxError as exc:
        return {t.nodeid: Outcome("not-run", f"the sandbox cannot run: {exc}") for t in tests}
    if run.timed_out:
        why = f"the tests ran past the sandbox's {limits.wall_s:g} s"
        return {t.nodeid: Outcome("not-run", why) for t in tests}
    raw = _reported(run.stdout, mark)
    if raw is None:
        tail = (run.stderr.strip().splitlines() or [""])[-1][:_DETAIL_CHARS]
        why = f"pytest ended without a report (status {run.returncode})" + (
            f": {tail}" if tail else "")
        return {t.nodeid: Outcome("not-run", why) for t in tests}
    out: dict[str, Outcome] = {}
    for t in tests:
        found = raw.get(t.nodeid) or raw.get(f"collect:{t.path}") or raw.get("*")
        out[t.nodeid] = Outcome(*found) if found else Outcome(
            "not-run", "pytest did not collect it here")
    return out


def _reported(stdout: str, mark: str) -> dict[str, tuple[str, str]] | None:
    """The outcomes the child printed after ``mark`` (its last such line), checked."""
    lines = [line for line in stdout.splitlines() if line.startswith(mark)]
    if not lines:
        return None
    try:
        raw = json.loads(lines[-1][len(mark):])
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    kinds = ("passed", "failed", "error", "skipped", "not-run")
    return {str(k): (v[0], str(v[1])[:_DETAIL_CHARS]) for k, v in raw.items()
            if isinstance(v, list) and len(v) == 2 and v[0] in kinds}
