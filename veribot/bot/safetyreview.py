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
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from veribot.checks.equivalence import Budget
from veribot.checks.project.units import ChangedUnit, UnitKind
from veribot.checks.safety import INCONCLUSIVE, UNSAFE, SafetyBudget, SafetyResult, check_safety
from veribot.checks.sandbox import Limits as SandboxLimits
from veribot.checks.sandbox import run_calls
from veribot.checks.verdict import BehaviourKind, Result, Verdict

__all__ = ["MAX_ASKED", "SafetyFinding", "as_json", "assess", "wanted"]

log = logging.getLogger(__name__)

MAX_ASKED = 24
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

    def text(self) -> str:
        r = self.result
        out = f"safety: {r.verdict} ({r.reason}): {r.detail}"
        if self.added_crash is True:
            out += f"; an added crash: before the change it {self.before}"
        elif self.added_crash is False:
            out += "; the base version raises it too (the crash was there before)"
        return out


def wanted(unit: ChangedUnit, result: Result) -> bool:
    """Whether the review asks the unit's safety: an added function, or a changed one
    whose change is not proven to keep its behaviour."""
    if not unit.is_function or unit.after_source is None:
        return False
    if unit.kind is UnitKind.ADDED:
        return True
    return (unit.kind is UnitKind.CHANGED and unit.before_source is not None
            and result.verdict is not Verdict.VERIFIED and not unit.noise)


def assess(units: Sequence[ChangedUnit], results: Sequence[Result],
           budget: Budget) -> list[SafetyFinding | None]:
    """A finding per unit (None where not asked), in order."""
    out: list[SafetyFinding | None] = []
    asked = 0
    for unit, result in zip(units, results, strict=True):
        if not wanted(unit, result):
            out.append(None)
            continue
        if asked >= MAX_ASKED:
            out.append(SafetyFinding(SafetyResult(
                INCONCLUSIVE, "budget", f"not asked: {MAX_ASKED} functions per review are "
                "asked for crash safety, and this one came later")))
            continue
        asked += 1
        out.append(_one(unit, budget))
    return out


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
    if found.verdict != UNSAFE or unit.kind is not UnitKind.CHANGED or not found.call:
        return SafetyFinding(found)
    return _against_base(unit, found)


def _against_base(unit: ChangedUnit, found: SafetyResult) -> SafetyFinding:
    """The crashing input run on the base version: an added crash or an old one."""
    assert unit.before_source is not None
    context = unit.context
    entry = unit.before_entry or unit.entry
    try:
        call = ast.parse(f"f({found.call})", mode="eval").body
        assert isinstance(call, ast.Call)
        args = [ast.unparse(a) for a in call.args] + [
            f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords if k.arg]
        seen = run_calls(unit.before_source, entry, [args],
                         limits=SandboxLimits(wall_s=8.0, call_s=2.0),
                         package=context.before if context is not None else None)
    except (ValueError, SyntaxError, AttributeError) as err:
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
            "before": finding.before or None}
