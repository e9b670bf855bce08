"""Asking the agent for hints where the engine stopped, and checking what it proposes.

``ask_hints`` puts one question to the model (the Messages API, through the project's
``LLM`` protocol): the two versions, where the engine stopped and why, and the hints
already tried with their results. The model answers by calling the ``propose_hints``
tool, whose input is the hint format of ``hints.format``. ``improve`` is the step the
review pipeline calls for a unit the engine left inconclusive: proven hints from the
repository's archive first (no model call), then the model, in up to
``HintLimits.rounds`` rounds, each proposal checked by the solver (``hints.check``).
Proven hints are stored in the archive, keyed by the code they are about.

Pure apart from the archive file: the ``LLM`` is injected; text from the model is data,
parsed by ``hints.format`` and never run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from veribot.checks.agent import prompts
from veribot.checks.agent.llm import LLM, LLMError, Message, ToolSpec
from veribot.checks.equivalence import Budget
from veribot.checks.hints.archive import Archive, unit_keys
from veribot.checks.hints.check import Checked, check_hints, hint_may_help
from veribot.checks.hints.format import KINDS, HintError, Parsed, parse_hints
from veribot.checks.project.package import PairContext
from veribot.checks.verdict import Result

log = logging.getLogger(__name__)

TOOL_NAME = "propose_hints"
MAX_MODULE_CHARS = 20_000

_EXPR = {"type": "string", "maxLength": 400}
PROPOSE_HINTS = ToolSpec(
    TOOL_NAME,
    "Propose hints for the prover: relational loop invariants, variable correspondences, "
    "lemmas about helper functions, preconditions. Each is checked by the Z3 solver; a "
    "wrong one is discarded.",
    {
        "type": "object",
        "properties": {
            "hints": {
                "type": "array",
                "maxItems": 16,
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": list(KINDS)},
                        "expr": _EXPR,
                        "variables": {"type": "object", "additionalProperties": {"type": "string"}},
                        "loops": {"type": "array", "items": {"type": "integer"},
                                  "minItems": 2, "maxItems": 2},
                        "statements": {"type": "object",
                                       "additionalProperties": {"type": "integer"}},
                        "function": {"type": "string"},
                        "requires": _EXPR,
                        "ensures": _EXPR,
                        "why": {"type": "string", "maxLength": 500},
                    },
                    "required": ["kind"],
                },
            },
            "explanation": {"type": "string", "maxLength": 2000},
        },
        "required": ["hints"],
    },
)


@dataclass(frozen=True)
class HintLimits:
    """How much the agent may be asked for one unit."""

    rounds: int = 2  # model calls, each followed by a check
    max_tokens: int = 2048
    temperature: float = 0.0


@dataclass(frozen=True)
class Proposal:
    """What the model proposed in one call."""

    parsed: Parsed
    explanation: str = ""
    problem: str = ""  # why nothing usable came back (no tool call, cut off ...)


@dataclass(frozen=True)
class Unit:
    """The unit the agent is asked about: both module sources and the entry."""

    before: str
    after: str
    entry: str
    path: str = ""
    param_types: Mapping[str, str] | None = None
    context: PairContext | None = None


def ask_hints(
    llm: LLM, unit: Unit, stopped: Result, feedback: str = "", *,
    limits: HintLimits = HintLimits(),
) -> Proposal:
    """One call: the model's hints for ``unit``, where the engine stopped with ``stopped``.
    Raises ``LLMError`` (budget, unavailable ...) for the caller to report."""
    text = prompts.render(
        "hints_user",
        entry=unit.entry,
        path=prompts.data_block("path", unit.path or "(the module)"),
        reason=stopped.reason,
        detail=prompts.data_block("engine", stopped.detail),
        before=prompts.data_block("before", unit.before[:MAX_MODULE_CHARS]),
        after=prompts.data_block("after", unit.after[:MAX_MODULE_CHARS]),
        feedback=("\nHints tried so far and what the solver made of them:\n"
                  + prompts.data_block("tried", feedback) + "\n") if feedback else "",
    )
    completion = llm.complete(
        prompts.load("hints_system"), [Message.user(text)], [PROPOSE_HINTS],
        max_tokens=limits.max_tokens, temperature=limits.temperature,
    )
    if completion.stop_reason == "max_tokens":
        return Proposal(Parsed(()), problem="the answer was cut off (max_tokens)")
    calls = [u for u in completion.tool_uses if u.name == TOOL_NAME]
    if not calls:
        return Proposal(Parsed(()), problem=f"the model did not call {TOOL_NAME}")
    raw = calls[-1].input
    explanation = raw.get("explanation", "")
    try:
        parsed = parse_hints(raw.get("hints", []))
    except HintError as err:
        return Proposal(Parsed(()), problem=str(err))
    return Proposal(parsed, explanation if isinstance(explanation, str) else "")


@dataclass(frozen=True)
class Improved:
    """The unit after asking for hints: the checked result (None if nothing was tried),
    model calls made, and what went wrong, if anything."""

    checked: Checked | None
    model_calls: int = 0
    problems: tuple[str, ...] = ()


def improve(
    unit: Unit,
    result: Result,
    *,
    llm: LLM | None,
    archive: Archive | None = None,
    repo: str = "",
    budget: Budget | None = None,
    limits: HintLimits = HintLimits(),
) -> Improved:
    """Hints for a unit the engine left ``result`` on: from the archive, then the model.

    Nothing is tried when the engine did not stop where a hint can help. The verdict
    returned is the engine's with the hints; a wrong hint leaves it as it was.
    """
    execute = budget.execute if budget is not None else True
    if not hint_may_help(result, unit.before, unit.after, unit.entry, unit.context, execute):
        return Improved(None)
    keys = unit_keys(unit.before, unit.after, unit.entry)
    archived = archive.lookup(repo, keys.all()) if archive is not None and keys else []
    checked: Checked | None = None
    if archived:
        checked = _check(unit, Parsed(tuple(archived)), budget, "archive")
        if checked.proven_with_hints or llm is None:
            return Improved(checked)
    if llm is None:
        return Improved(None)
    problems: list[str] = []
    calls = 0
    feedback = "\n".join(checked.lines()) if checked is not None else ""
    for _ in range(limits.rounds):
        try:
            calls += 1
            proposal = ask_hints(llm, unit, result, feedback, limits=limits)
        except LLMError as err:
            problems.append(f"the agent could not be asked for hints: {err}")
            break
        if proposal.problem:
            problems.append(proposal.problem)
        if not proposal.parsed.hints and not proposal.parsed.rejected:
            break
        hints = Parsed((*archived, *proposal.parsed.hints), proposal.parsed.rejected)
        checked = _check(unit, hints, budget, "archive+agent" if archived else "agent")
        if archive is not None and keys is not None:
            archive.store(repo, keys, checked.archivable())
        if checked.proven_with_hints:
            break
        feedback = "\n".join(checked.lines())
    return Improved(checked, calls, tuple(problems))


def _check(unit: Unit, parsed: Parsed, budget: Budget | None, source: str) -> Checked:
    return check_hints(unit.before, unit.after, unit.entry, parsed,
                       param_types=unit.param_types, budget=budget, context=unit.context,
                       source=source)
