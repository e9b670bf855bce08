"""Crash safety in the review: every added function, and every changed function whose
change is not proven behaviour-preserving, is asked whether an input can make it crash
(``checks.safety``), on the head revision.

For a changed function found unsafe, the crashing input is run on the base revision too:
if the base version returns there (or raises something else), the change **adds** the
crash, the worst kind of behaviour change; if it raises the same exception, the crash
was there before. A verified change adds no crash (it behaves as before), so it is not
asked. At most ``MAX_ASKED`` functions per review are asked, each within its own share of
the unit budget; the others say why not.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from veribot.checks import typewarn
from veribot.checks.equivalence import Budget
from veribot.checks.project.units import ChangedUnit, UnitKind, is_test_path
from veribot.checks.safety import (
    INCONCLUSIVE,
    SAFE,
    UNSAFE,
    SafetyBudget,
    SafetyResult,
    check_safety,
    subclass,
)
from veribot.checks.sandbox import Limits as SandboxLimits
from veribot.checks.sandbox import run_calls
from veribot.checks.typewarn import TypeWarning
from veribot.checks.verdict import BehaviourKind, Result, Verdict

__all__ = ["MAX_ASKED", "SafetyFinding", "as_json", "assess", "wanted"]

log = logging.getLogger(__name__)

MAX_ASKED = 24
# Type-checker warnings answered per function.
MAX_WARNINGS = 8
# A safety question's share of the unit budget (seconds at most).
MAX_SECONDS = 6.0


@dataclass(frozen=True)
class SafetyFinding:
    """The safety verdict of one unit's head version, and for a changed function found
    unsafe, what its base version did on the crashing input."""

    result: SafetyResult
    # Changed functions found unsafe: True where the base version did not raise that
    # exception on the input (an added crash), False where it did; None otherwise.
    added_crash: bool | None = None
    before: str = ""  # what the base version did on the input ("returns 5")
    # The type checker's crash-site warnings in the function, each with its answer.
    warnings: tuple[tuple[TypeWarning, SafetyResult], ...] = ()
    # A private function found unsafe whose every caller (all in its module) is proven
    # safe with it inlined: the crash needs inputs its callers never pass.
    callers_safe: tuple[str, ...] = ()

    def text(self) -> str:
        r = self.result
        out = f"safety: {r.verdict} ({r.reason}): {r.detail}"
        if self.added_crash is True:
            out += f"; an added crash: before the change it {self.before}"
        elif self.added_crash is False:
            out += "; the base version raises it too (the crash was there before)"
        if self.callers_safe:
            out += ("; but only its callers in this module call it, and each is proven safe "
                    "with it (" + ", ".join(f"`{c}`" for c in self.callers_safe) + "): the "
                    "crash needs an input they never pass")
        return out

    def warning_lines(self) -> list[str]:
        return [f"{w.text()}: {answer_text(a)}" for w, a in self.warnings]


def answer_text(answer: SafetyResult) -> str:
    """A warning's answer, for people."""
    if answer.verdict == SAFE:
        return "false alarm, proven safe"
    if answer.verdict == UNSAFE:
        return f"real: {answer.detail}"
    return f"not decided ({answer.reason}: {answer.detail})"


def wanted(unit: ChangedUnit, result: Result) -> bool:
    """Whether the review asks the unit's safety: an added function, or a changed one
    whose change is not proven to keep its behaviour."""
    if not unit.is_function or unit.after_source is None or is_test_path(unit.path):
        return False  # a test that crashes is a failing test, which its run shows
    if unit.kind is UnitKind.ADDED:
        return True
    return (unit.kind is UnitKind.CHANGED and unit.before_source is not None
            and result.verdict is not Verdict.VERIFIED and not unit.noise)


def assess(units: Sequence[ChangedUnit], results: Sequence[Result],
           budget: Budget) -> tuple[list[SafetyFinding | None], str]:
    """A finding per unit (None where not asked), in order, and a note on the type
    checker where its warnings were not all read ("" otherwise)."""
    asking = [wanted(u, r) for u, r in zip(units, results, strict=True)]
    files = {u.after_path: u.after_source for u, ask in zip(units, asking, strict=True)
             if ask and u.after_path and u.after_source is not None}
    warnings: list[TypeWarning] = []
    note = ""
    if files and not budget.execute:
        # Where nothing may run (pull_request_target: secrets at hand), no process reads
        # the pull request's code but git, a type checker included.
        note = "mypy was not run: this review runs no process on the pull request's code"
    elif files:
        warnings, note = typewarn.mypy_warnings(files)
    out: list[SafetyFinding | None] = []
    asked = 0
    for unit, ask in zip(units, asking, strict=True):
        if not ask:
            out.append(None)
            continue
        if asked >= MAX_ASKED:
            out.append(SafetyFinding(SafetyResult(
                INCONCLUSIVE, "budget", f"not asked: {MAX_ASKED} functions per review are "
                "asked for crash safety, and this one came later")))
            continue
        asked += 1
        found = _one(unit, budget)
        inside = [w for w in warnings if w.path == unit.after_path and unit.after_lines
                  is not None and unit.after_lines[0] <= w.line <= unit.after_lines[1]]
        if inside:
            found = dataclasses.replace(found, warnings=tuple(
                (w, _answer(unit, found.result, w, budget)) for w in inside[:MAX_WARNINGS]))
        out.append(found)
    return out, note


def _answer(unit: ChangedUnit, whole: SafetyResult, warning: TypeWarning,
            budget: Budget) -> SafetyResult:
    """Whether the warning's line can raise: from the function's own verdict where it
    says (a proof of the function covers each line; its crash at that line answers a
    warning of that kind), else asked of that line."""
    if whole.verdict == SAFE:
        return whole
    if whole.verdict == UNSAFE and whole.line == warning.line and (
            warning.exception is None or subclass(whole.exception, warning.exception)):
        return whole
    assert unit.after_source is not None
    context = unit.context
    try:
        return check_safety(
            unit.after_source, unit.entry, line=warning.line, exception=warning.exception,
            budget=SafetyBudget(timeout_s=min(MAX_SECONDS, budget.timeout_s),
                                loop_bound=budget.loop_bound, inline_depth=budget.inline_depth,
                                execute=budget.execute),
            package=context.after if context is not None else None)
    except Exception as err:  # the one place per question: report it, log it, go on
        log.exception("the safety check of %s line %d failed", unit.qualname, warning.line)
        return SafetyResult(INCONCLUSIVE, "internal-error",
                            f"internal error: {type(err).__name__}: {err}", line=warning.line)


def _one(unit: ChangedUnit, budget: Budget) -> SafetyFinding:
    assert unit.after_source is not None
    started = time.monotonic()
    context = unit.context
    try:
        found = check_safety(
            unit.after_source, unit.entry,
            budget=SafetyBudget(timeout_s=min(MAX_SECONDS, budget.timeout_s),
                                loop_bound=budget.loop_bound, inline_depth=budget.inline_depth,
                                execute=budget.execute),
            package=context.after if context is not None else None)
    except Exception as err:  # the one place per unit: report it, log it, go on
        log.exception("the safety check of %s failed", unit.qualname)
        return SafetyFinding(SafetyResult(INCONCLUSIVE, "internal-error",
                                          f"internal error: {type(err).__name__}: {err}",
                                          time_s=time.monotonic() - started))
    if found.verdict != UNSAFE:
        return SafetyFinding(found)
    finding = SafetyFinding(found)
    if unit.kind is UnitKind.CHANGED and found.args:
        finding = _against_base(unit, found)
    callers = _callers_safe(unit, budget)
    return dataclasses.replace(finding, callers_safe=callers) if callers else finding


# Callers of a private function checked per finding.
MAX_CALLERS = 4


def _callers_safe(unit: ChangedUnit, budget: Budget) -> tuple[str, ...]:
    """The callers of a private function of the module, where it is only ever called, and
    by them alone, and each of them is proven safe (the function inlined); () otherwise."""
    assert unit.after_source is not None
    callers = private_callers(unit.after_source, unit.entry)
    context = unit.context
    package = context.after if context is not None else None
    if not callers or len(callers) > MAX_CALLERS or package is None or package.left_out:
        return ()  # without its package's other modules, another may import it
    name = unit.entry.rsplit(".", 1)[-1]
    if any(re.search(rf"\b{re.escape(name)}\b", text) for path, text in package.files
           if path != package.path):
        return ()
    for caller in callers:
        try:
            verdict = check_safety(unit.after_source, caller, budget=SafetyBudget(
                timeout_s=min(MAX_SECONDS, budget.timeout_s), loop_bound=budget.loop_bound,
                inline_depth=budget.inline_depth, execute=budget.execute), package=package)
        except Exception:  # the one place per caller: log it, claim nothing
            log.exception("the safety check of %s's caller %s failed", unit.qualname, caller)
            return ()
        if verdict.verdict != SAFE:
            return ()
    return tuple(callers)


def private_callers(source: str, entry: str) -> list[str]:
    """The functions and methods of the module calling ``entry``, where ``entry`` is a
    private module-level function (``_helper``) whose name the module uses only as the
    callee of calls, and never in a string; [] otherwise."""
    name = entry
    if "." in entry or not name.startswith("_") or name.startswith("__"):
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and name in (
                node.value):
            return []  # `__all__`, `getattr(mod, "_helper")`: reached another way
        if isinstance(node, ast.Name) and node.id == name:
            parent = parents.get(id(node))
            if not (isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Call)
                    and parent.func is node):
                return []  # rebound, passed as a value, decorated...
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return []
    # The module-level functions and the methods of module-level classes naming it.
    defs = [(f"{c.name}.{d.name}" if c else d.name, d)
            for c, body in [(None, tree.body), *((c, c.body) for c in tree.body
                                                 if isinstance(c, ast.ClassDef))]
            for d in body if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)]
    if sum(1 for entry_, _ in defs if entry_ == name) != 1:
        return []  # defined twice, or not at the module's top
    uses = {entry_: sum(1 for n in ast.walk(d) if isinstance(n, ast.Name) and n.id == name)
            for entry_, d in defs if entry_ != name}
    total = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name)
    if total != sum(uses.values()):
        return []  # called at module level, in a class body, or by itself
    return [entry_ for entry_, n in uses.items() if n]


def _against_base(unit: ChangedUnit, found: SafetyResult) -> SafetyFinding:
    """The crashing input run on the base version: an added crash or an old one."""
    assert unit.before_source is not None
    context = unit.context
    entry = unit.before_entry or unit.entry
    try:
        seen = run_calls(unit.before_source, entry, [list(found.args)],
                         limits=SandboxLimits(wall_s=8.0, call_s=2.0),
                         package=context.before if context is not None else None)
    except ValueError as err:  # an argument text the sandbox does not read back
        log.info("the crashing input of %s was not run on the base: %s", unit.qualname, err)
        return SafetyFinding(found)
    if len(seen) != 1 or seen[0].refused or seen[0].at_import:
        return SafetyFinding(found)
    before = seen[0]
    if before.kind is BehaviourKind.RAISED and str(before.value) == found.exception:
        return SafetyFinding(found, added_crash=False, before=before.describe())
    if before.kind in (BehaviourKind.RAISED, BehaviourKind.RETURNED):
        return SafetyFinding(found, added_crash=True, before=before.describe())
    return SafetyFinding(found)


def as_json(finding: SafetyFinding | None) -> dict[str, object] | None:
    """The finding in the JSON report (``unit.safety``)."""
    if finding is None:
        return None
    return {**finding.result.as_record(), "added_crash": finding.added_crash,
            "before": finding.before or None,
            "callers_safe": list(finding.callers_safe),
            "warnings": [{"checker": "mypy", "line": w.line, "code": w.code,
                          "message": w.message, "answer": a.verdict, "reason": a.reason,
                          "detail": a.detail, "input": a.call or None,
                          "exception": a.exception or None} for w, a in finding.warnings]}
