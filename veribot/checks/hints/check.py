"""Check a unit with hints: the engine run again with them, and what became of each hint.

``check_hints`` is the one entry: the same pipeline as ``equivalence.check_pair`` (module
check, the repository's calls, the tripwire all still run after a proof), with a
``Session`` that offers the hints to the solver. A verified verdict that rests on hints
says so in its method (``z3+hints: ...``) and detail (each hint used, each proven);
hints that were not proven change nothing but the list of hint results.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.hints.format import Hint, Parsed, Rejected
from veribot.checks.hints.model import HintResult, Session, Status
from veribot.checks.lang import pysource
from veribot.checks.lang.pyexec import Limits as ExecLimits
from veribot.checks.lang.pytypes import parse_type
from veribot.checks.project.package import PairContext
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Reason, Result, Verdict

# Where the engine stops and a hint may help: a loop or recursion bound, the solver, or
# candidates from an arbitrary shared helper that did not reproduce or could not be run
# (a lemma narrows it).
HINTABLE = frozenset({
    Reason.LOOP_BOUND, Reason.RECURSION_BOUND, Reason.SOLVER_UNKNOWN, Reason.TIMEOUT,
    Reason.NOT_REPRODUCED, Reason.NOT_EXECUTED,
})
METHOD_PREFIX = "z3+hints"
RELATIONAL_PREFIX = "relational+hints"  # the relational check with a statement correspondence


@dataclass(frozen=True)
class Checked:
    """The unit's verdict with the hints, and each hint's result."""

    result: Result
    hints: tuple[HintResult, ...]
    rejected: tuple[Rejected, ...] = ()
    source: str = "given"  # "given", "archive", "agent", "archive+agent"

    @property
    def proven_with_hints(self) -> bool:
        """Verified, and the proof rests on hints (each proven)."""
        return (self.result.verdict is Verdict.VERIFIED
                and self.result.method.startswith((METHOD_PREFIX, RELATIONAL_PREFIX)))

    def proven(self) -> list[Hint]:
        return [r.hint for r in self.hints if r.status is Status.PROVEN]

    def archivable(self) -> list[Hint]:
        """The proven hints a proof used, but those that say nothing (a tautology): what
        an archive keeps (the rest saves no later model call)."""
        return [r.hint for r in self.hints
                if r.status is Status.PROVEN and r.used and not r.hint.vacuous()]

    def lines(self) -> list[str]:
        """One line per hint, for a report."""
        out = [r.line() for r in self.hints]
        out += [f"rejected: hint {r.index + 1} `{r.text}` ({r.reason})" for r in self.rejected]
        return out


def engine_stopped(result: Result) -> bool:
    """Whether ``result`` is an inconclusive verdict a hint may complete."""
    return result.verdict is Verdict.INCONCLUSIVE and result.reason in HINTABLE


def hint_may_help(result: Result, before: str, after: str, entry: str,
                  context: PairContext | None = None, execute: bool = True) -> bool:
    """``engine_stopped``, or an inconclusive verdict where the relational check stopped
    only at matching the statements (a statement correspondence may complete it; the
    check runs only where code may be executed)."""
    if engine_stopped(result):
        return True
    if result.verdict is not Verdict.INCONCLUSIVE or not execute:
        return False
    if result.reason is Reason.BUDGET:  # never checked: the review's budget was spent
        return False
    try:
        tree_a, tree_b = pysource.parse(before), pysource.parse(after)
    except SyntaxError:
        return False
    return relational.unmatched(tree_a, tree_b, entry, context)


def check_hints(
    before: str,
    after: str,
    entry: str,
    parsed: Parsed,
    *,
    param_types: Mapping[str, str] | None = None,
    budget: Budget | None = None,
    context: PairContext | None = None,
    source: str = "given",
) -> Checked:
    """Decide ``entry`` with the hints offered to the solver."""
    session = Session(parsed.hints)
    budget = budget or Budget()
    result = check_pair(before, after, entry, param_types, budget=budget, context=context,
                        hints=session)
    if any(h.kind == "precondition" for h in parsed.hints):
        _preconditions(session, before, after, entry, param_types, budget)
    return Checked(result, tuple(session.results), parsed.rejected, source)



def _preconditions(session: Session, before: str, after: str, entry: str,
                   param_types: Mapping[str, str] | None, budget: Budget) -> None:
    """Check the preconditions (shown only) on the model of both versions."""
    try:
        tree_a, tree_b = pysource.parse(before), pysource.parse(after)
    except SyntaxError:
        return
    given = {k: parse_type(v) for k, v in (param_types or {}).items()} or None
    limits = ExecLimits(loop_bound=budget.loop_bound, inline_depth=budget.inline_depth,
                        deadline=time.monotonic() + budget.timeout_s)
    session.check_preconditions(tree_a, tree_b, entry, given, limits)
