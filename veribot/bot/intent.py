"""What a shown behaviour change means for the pull request.

A refutation says *that* a function behaves differently; a reviewer also asks whether the
change meant it. Three answers, from what the change itself holds (never from its prose):

- **tested**: a test the change adds or edits observes the change: run under pytest on
  both revisions in the sandbox (``testrun``), it fails (or errs) on the base and passes on
  the head; the report names the test and its outcome on each side. Where no changed test
  did that but one makes the distinguishing call itself (``harvest`` found the call in the
  head revision, at a line the change touched), or a docstring example the change touches
  does, that is the evidence shown, with the call's outcome on each side, unless the test
  ran and passed on both revisions (it makes the call but does not look at what changed).
- **untested behaviour change**: no test or example the change touches shows it.
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

A changed test that cannot run here (a pytest plugin or a library the sandbox does not
have, the network) errs on both sides and observes nothing; the call it makes still counts
as above, and the report gives its outcomes.
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
from veribot.checks.lang.pylookups import lookup_keys
from veribot.checks.project.reads import words
from veribot.checks.project.units import (
    ChangedUnit,
    UnitKind,
    function_definitions,
    is_test_path,
)
from veribot.checks.search.testrun import Outcome, TestRun
from veribot.checks.verdict import BehaviourKind, Verdict

if TYPE_CHECKING:  # (the review reads ``declared_refactoring``)
    from veribot.bot.review import Report, UnitResult

__all__ = ["DECLARING_PREFIXES", "Intent", "IntentFinding", "called_name",
           "declared_refactoring", "intents", "is_private", "pinning_test"]

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
        out[index] = _tested_or_not(item, touched, [
            r for r in report.tests if called_name(item.unit) in r.test.names])
    return out


def _tested_or_not(item: UnitResult, touched: dict[str, list[tuple[str, int, int]]],
                   runs: Sequence[TestRun]) -> IntentFinding:
    """Tested or untested: a changed test naming the function that fails before and
    passes after observes the change; failing that, a changed test or docstring example
    making the distinguishing call shows it, unless that test, run on both revisions,
    passes on both (it makes the call but does not observe the difference)."""
    cex = item.result.counterexample
    assert cex is not None
    observing = [r for r in runs if r.observes]
    if observing:
        first = observing[0]
        more = f" (and {len(observing) - 1} more)" if len(observing) > 1 else ""
        return IntentFinding(Intent.TESTED, f"the test `{first.test.nodeid}`{more}, which "
                             f"this change {'adds' if first.test.added else 'edits'}, "
                             f"{_outcome(first.before, 'before')} and passes after")
    caller = _changed_test(cex.found_by, touched)
    blind = [r for r in runs if r.before.kind == r.after.kind == "passed"]
    if caller and not any(_same_test(caller, r) for r in blind):
        ran = next((r for r in runs if _same_test(caller, r)), None)
        why = "" if ran is None else (
            f" (run on both revisions here it {_outcome(ran.before, 'before')} and "
            f"{_outcome(ran.after, 'after')}, so it does not say more)")
        return IntentFinding(Intent.TESTED, f"{caller}, makes this call: before it "
                             f"{cex.before.describe()}, after it {cex.after.describe()}{why}")
    example = _changed_example(item, cex.found_by)
    if example:
        return IntentFinding(Intent.TESTED, f"{example}, makes this call: before it "
                             f"{cex.before.describe()}, after it {cex.after.describe()}")
    why = "no test or docstring example this change adds or edits makes a call that shows it"
    if blind:
        shown = ", ".join(f"`{r.test.nodeid}`" for r in blind[:3]) + (
            f" and {len(blind) - 3} more" if len(blind) > 3 else "")
        why = (f"the changed test{'s' if len(blind) > 1 else ''} naming it ({shown}) "
               f"pass{'' if len(blind) > 1 else 'es'} on both revisions: "
               f"{'none observes' if len(blind) > 1 else 'it does not observe'} the difference")
    return IntentFinding(Intent.UNTESTED, why, pinning_test(item))


def _same_test(caller: str, run: TestRun) -> bool:
    """Whether the sentence ``_changed_test`` wrote names ``run``'s test."""
    return caller.startswith(f"the test `{run.test.path}::{run.test.entry}`")


def _outcome(outcome: Outcome, side: str) -> str:
    verb = {"passed": "passes", "failed": "fails", "error": "errs", "skipped": "is skipped",
            "not-run": "did not run"}[outcome.kind]
    return f"{verb} {side}" + (f" ({outcome.detail})" if outcome.detail else "")


def called_name(unit: ChangedUnit) -> str:
    """The name a test calls ``unit``'s function by: its own, or for a special method
    (``Point.__init__``, ``Box.__eq__``) its class's."""
    owner, _, name = unit.entry.rpartition(".")
    return owner.rpartition(".")[2] if owner and name.startswith("__") else name


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
    for qualname, node in function_definitions(tree):
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
        keys = lookup_keys(n) if isinstance(n, ast.Call) else None
        if keys is not None and not all(isinstance(k, ast.Constant) for k in keys):
            return True
    return False


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
