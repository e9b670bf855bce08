"""The review's hint step: units the engine left undecided get checked hints.

Called by the review pipeline after the engine decided every unit and before the agent's
judgement (``review.review``). For each changed function the engine left inconclusive
where a hint can help (a loop or recursion bound, the solver, an arbitrary helper), the
proven hints of the repository's archive are tried first (no model call), then, when a
model is configured, the agent is asked for hints (``veribot.checks.hints.ask``). The
unit's verdict changes only to a verified one whose proof rests on hints each proven by
Z3 (or to a refutation the rerun found); otherwise the engine's verdict stays, with what
became of each hint in its notes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from veribot.bot.agentreview import AgentConfig
from veribot.checks.equivalence import Budget
from veribot.checks.hints.archive import Archive
from veribot.checks.hints.ask import Unit, improve
from veribot.checks.hints.check import hint_may_help
from veribot.checks.project.units import ChangedUnit, UnitKind
from veribot.checks.verdict import Result, Verdict

log = logging.getLogger(__name__)


def improve_units(
    units: Sequence[ChangedUnit],
    results: Sequence[Result],
    agent: AgentConfig | None,
    budget: Budget,
    archive_path: Path | None = None,
    repo: str = "",
) -> list[Result]:
    """Each unit's result, completed by checked hints where the engine stopped."""
    if agent is None and archive_path is None:
        return list(results)
    archive = Archive(archive_path) if archive_path is not None else None
    out: list[Result] = []
    for unit, result in zip(units, results, strict=True):
        if (unit.kind is not UnitKind.CHANGED or not unit.is_function
                or unit.before_source is None or unit.after_source is None
                or not hint_may_help(result, unit.before_source, unit.after_source,
                                     unit.entry, unit.context, budget.execute)):
            out.append(result)
            continue
        done = improve(
            Unit(unit.before_source, unit.after_source, unit.entry, unit.path,
                 context=unit.context),
            result, llm=agent.llm if agent is not None else None, archive=archive, repo=repo,
            budget=budget,
        )
        notes = tuple(f"hint {line}" for line in done.checked.lines()) if done.checked else ()
        notes += done.problems
        if done.checked is not None and done.checked.result.verdict in (Verdict.VERIFIED,
                                                                         Verdict.REFUTED):
            new = done.checked.result
            log.info("hints on %s: %s (%s)", unit.qualname, new.verdict.value, new.method)
            out.append(replace(new, notes=(*new.notes, *notes)))
        else:
            out.append(replace(result, notes=(*result.notes, *notes)))
    return out
