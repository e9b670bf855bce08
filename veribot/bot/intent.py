"""What a shown behaviour change means for the pull request.

A refutation says *that* a function behaves differently; a reviewer also asks whether the
change meant it. Three answers, from what the change itself holds (never from its prose):

- **tested**: the distinguishing call comes from a test function or a docstring example
  that this change adds or edits (``harvest`` found the call in the head revision, at a
  line the change touched). The change shows it knows the new behaviour; the report says
  which test, and what the call does before and after.
- **untested behaviour change**: no test or example the change touches makes the call.
  The report shows the input, both outcomes and a ready-to-paste pytest test that pins the
  new behaviour (accepting the change is one paste).
- **internal**: a private function (``_helper``; not named by another file, by the
  module's own top-level code or ``__all__``, nor reachable by a name the module computes)
  whose callers in its module are all units of the review that were decided: a helper
  that gained a parameter with every caller updated is judged through its callers, each
  judged on its own (a caller that shows the difference is refuted itself).
- **a refactoring that changes behaviour**: the change declares itself behaviour-preserving
  (a commit subject or pull-request title starting ``refactor``, ``perf``, ``style`` or
  ``docs``, or a configured label), whatever its tests say.

This is not the stronger reading in which the new test fails on the base revision and
passes on the head: veribot runs the function's call from the test on both revisions, not
the test's own assertions.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from veribot.checks.agent.claims import is_literal
from veribot.checks.project.reads import words
from veribot.checks.project.units import UnitKind, is_test_path
from veribot.checks.verdict import BehaviourKind, Verdict

if TYPE_CHECKING:  # (the review reads ``declared_refactoring``)
    from veribot.bot.review import Report, UnitResult

__all__ = ["DECLARING_PREFIXES", "Intent", "IntentFinding", "declared_refactoring",
           "intents", "is_private", "pinning_test"]

# Conventional-commit types that promise no behaviour change.
DECLARING_PREFIXES = ("refactor", "perf", "style", "docs")
_DECLARING = re.compile(
    rf"^\s*(?:\[(?:{'|'.join(DECLARING_PREFIXES)})\]|(?:{'|'.join(DECLARING_PREFIXES)})"
    r"(?:\([^)]*\))?!?:)", re.IGNORECASE)
# Where ``harvest`` found a call (``Call.origin``), in the head revision.
_TEST_CALL = re.compile(r"^a call in (?P<path>.+) line (?P<line>\d+) \(after revision\)$")
_OWN_DOCTEST = re.compile(r"^the doctest at line (?P<line>\d+) of the after version$")


class Intent(enum.Enum):
    TESTED = "tested"
    INTERNAL = "internal"  # a private helper judged through its callers
    UNTESTED = "untested behaviour change"
    REFACTORING = "a refactoring that changes behaviour"


@dataclass(frozen=True)
class IntentFinding:
    """What a refuted unit's difference means for the pull request."""

    intent: Intent
    why: str  # one sentence
    test: str = ""  # a pytest test pinning the new behaviour (untested), "" when none


def declared_refactoring(titles: Iterable[str], subjects: Sequence[str] = (),
                         labels: Iterable[str] = (),
                         declaring_labels: Iterable[str] = ()) -> str:
    """What declares the change behaviour-preserving: the first of ``titles`` (a pull
    request's) that does (``refactor: ...``, ``perf(x): ...``, ``docs!: ...``,
    ``[style] ...``), else the commit ``subjects`` when every one does (a feature with one
    tidying commit is no refactoring), else a label among ``declaring_labels``; "" when
    nothing does."""
    for text in titles:
        if _declares(text):
            return _first_line(text)
    if subjects and all(_declares(s) for s in subjects):
        return _first_line(subjects[0])
    wanted = {label.lower() for label in declaring_labels}
    return next((f"label `{label}`" for label in labels if label.lower() in wanted), "")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _declares(text: str) -> bool:
    return bool(_DECLARING.match(_first_line(text)))


def intents(report: Report, declared: str = "") -> dict[int, IntentFinding]:
    """For each refuted unit of ``report`` outside test files (by its index in
    ``report.items``), what its difference means (see the module docstring). ``declared``:
    what declares the change a refactoring ("" when nothing does)."""
    touched = _touched_tests(report.items)
    out: dict[int, IntentFinding] = {}
    for index, item in enumerate(report.items):
        cex = item.result.counterexample
        if item.result.verdict is not Verdict.REFUTED or cex is None or (
                is_test_path(item.unit.path)):
            continue
        callers = _judged_callers(report, item)
        if callers is not None:
            shown = ", ".join(f"`{c}`" for c in callers[:5]) + (
                f" and {len(callers) - 5} more" if len(callers) > 5 else "")
            out[index] = IntentFinding(
                Intent.INTERNAL, "a private function that only its module calls, and every "
                "caller is " + (f"decided in this change ({shown}): each is judged on its "
                                "own, and a difference no caller shows stays inside"
                                if callers else "gone: nothing calls it"))
            continue
        if declared:
            out[index] = IntentFinding(
                Intent.REFACTORING, f"the change declares itself behaviour-preserving "
                f"({declared}), but this input shows a difference")
            continue
        source = _changed_test(cex.found_by, touched) or _changed_example(item, cex.found_by)
        if source:
            out[index] = IntentFinding(Intent.TESTED, f"{source}, makes this call: "
                                       f"before it {cex.before.describe()}, after it "
                                       f"{cex.after.describe()}")
            continue
        out[index] = IntentFinding(
            Intent.UNTESTED, "no test or docstring example this change adds or edits makes a "
            "call that shows it", pinning_test(item))
    return out


def is_private(entry: str) -> bool:
    """``_helper`` or ``Class._helper`` (not a special ``__name__``, nor ``__mangled``,
    which subclasses elsewhere may still reach through ``_Class__mangled``)."""
    name = entry.rpartition(".")[2]
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _judged_callers(report: Report, item: UnitResult) -> list[str] | None:
    """The callers of the private function of ``item`` (its module's functions naming it,
    in the head revision), when each is a unit of ``report`` that was decided (verified,
    or refuted and judged on its own), nothing else names it (no other file, no code at
    module level, not ``__all__``), and the report holds the unit's own module; else None."""
    u = item.unit
    if not is_private(u.entry) or u.qualname in report.named_elsewhere or (
            u.after_source is None or u.kind is not UnitKind.CHANGED):
        return None
    name = u.entry.rpartition(".")[2]
    try:
        tree = ast.parse(u.after_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if _looks_up_by_computed_name(tree):
        return None  # `getattr(self, "_" + kind)` may call it without naming it
    decided = {i.unit.entry: i.result.verdict for i in report.items if i.unit.path == u.path}
    callers: list[str] = []
    for qualname, node in _definitions(tree):
        if qualname == u.entry:
            continue
        if name in words(node):
            if decided.get(qualname) not in (Verdict.VERIFIED, Verdict.REFUTED):
                return None
            callers.append(qualname)
    outside = ast.Module([n for n in tree.body if not isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)], [])
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    in_classes = [m for c in classes for m in c.body if not isinstance(
        m, ast.FunctionDef | ast.AsyncFunctionDef)] + [b for c in classes for b in (
            *c.bases, *c.keywords, *c.decorator_list)]
    if name in words(outside) or any(name in words(n) for n in in_classes):
        return None  # module-level code (or `__all__`) names it
    return callers


def _looks_up_by_computed_name(tree: ast.Module) -> bool:
    """Whether code of the module may reach a function by a name it computes."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in ("globals", "vars", "locals", "eval", "exec",
                                                "__import__"):
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("__dict__", "__getattribute__"):
            return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)
                and (n.func.id if isinstance(n.func, ast.Name) else n.func.attr) in (
                    "getattr", "hasattr", "attrgetter", "methodcaller", "getattr_static")
                and not all(isinstance(a, ast.Constant) for a in n.args[1:2] or n.args[:1])):
            return True
    return False


def _definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """The module's functions and its classes' methods, by qualified name (a nested
    function is part of the one it is in)."""
    out: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            out += [(f"{node.name}.{m.name}", m) for m in node.body
                    if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def _touched_tests(items: Sequence[UnitResult]) -> dict[str, list[tuple[str, int, int]]]:
    """The test functions the change adds or edits: path -> (name, first line, last line)
    in the head revision."""
    found: dict[str, list[tuple[str, int, int]]] = {}
    for item in items:
        u = item.unit
        if (is_test_path(u.path) and u.kind in (UnitKind.ADDED, UnitKind.CHANGED)
                and u.after_lines is not None and u.after_path):
            found.setdefault(u.after_path, []).append((u.entry, *u.after_lines))
    return found


def _changed_test(origin: str, touched: dict[str, list[tuple[str, int, int]]]) -> str:
    match = _TEST_CALL.match(origin)
    if match is None:
        return ""
    path, line = match["path"], int(match["line"])
    for name, first, last in touched.get(path, ()):
        if first <= line <= last:
            return f"the test `{path}::{name}`, which this change adds or edits, at line {line}"
    return ""


def _changed_example(item: UnitResult, origin: str) -> str:
    """A docstring example of the head revision's module at a line the change touched."""
    match = _OWN_DOCTEST.match(origin)
    before, after = item.unit.before_source, item.unit.after_source
    if match is None or before is None or after is None:
        return ""
    line = int(match["line"])
    a, b = before.splitlines(), after.splitlines()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b,
                                                         autojunk=False).get_opcodes():
        if tag != "equal" and j1 < line <= j2:
            return f"the docstring example at line {line}, which this change adds or edits"
    return ""


def pinning_test(item: UnitResult) -> str:
    """A pytest test asserting what the head revision does on the distinguishing input,
    or "" where that cannot be written as code (a value without a literal ``repr``, an
    exception that is not a builtin, a hang, a crash, a result that follows the hash
    seed)."""
    cex = item.result.counterexample
    module = _module_name(item.unit.after_path or item.unit.path)
    if cex is None or module is None or cex.hash_seed is not None:
        return ""
    owner, _, name = item.unit.entry.rpartition(".")
    imported = (owner or name).split(".")[0]
    called = owner if name == "__init__" and owner else name
    last = dataclasses.replace(cex, prior=()).call(called)
    # (`f(2) after f(1)`: the calls made first come first, on the same module.)
    steps = [f"    {dataclasses.replace(cex, prior=(), args=args).call(called)}"
             for args in cex.prior]
    after = cex.after
    if after.kind is BehaviourKind.RETURNED and is_literal(after.text):
        check = [f"    assert {last} == {after.text}"]
    elif after.kind is BehaviourKind.RAISED and _builtin_exception(str(after.value)):
        check = [f"    with pytest.raises({after.value}):", f"        {last}"]
    else:
        return ""
    lines = [f"def test_{_identifier(item.unit.entry)}_new_behaviour():",
             *(["    import pytest", ""] if check[0].startswith("    with") else []),
             f"    from {module} import {imported}", "", *steps, *check]
    text = "\n".join(lines) + "\n"
    try:
        ast.parse(text)
    except SyntaxError:
        return ""
    return text


def _builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None) if name.isidentifier() else None
    return isinstance(found, type) and issubclass(found, BaseException)


def _identifier(entry: str) -> str:
    return re.sub(r"\W+", "_", entry).strip("_").lower() or "unit"


def _module_name(path: str) -> str | None:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``src/pkg/mod.py`` -> ``pkg.mod``."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None
