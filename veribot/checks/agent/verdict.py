"""Set the agent's answer beside what the engine showed: right, wrong and caught, or open.

DESIGN step 8. The unit's verdict is and stays the engine's ``Result``: a reproduced
counterexample refutes, a solver proof verifies, anything else is inconclusive. The agent
never grants "verified" and never refutes; this module only judges the agent:

- **agent right, verified**: it answered "equivalent" and the solver proved it (the proof's
  assumptions are listed; contradicted claims, if any, are still shown);
- **agent right, refuted**: it answered "not equivalent" and a difference was reproduced;
- **agent wrong, caught**: only when it answered "equivalent" and a difference was
  reproduced, or when a fact it asserted is contradicted by the code's own facts (with
  the line). Facts are compared modulo spelling (``claims.normalise``: literals by value,
  the agent's temporaries renamed to the code's);
- **inconclusive**: anything else; the finding says which claims were unchecked and why,
  which code facts the agent's argument left out, and what the relative check says. An
  omission (a fact of the code on a changed line, e.g. a control dependence, that its
  facts do not state) is not a mistake: it makes the judgement inconclusive, and
  ``ask_and_assess`` runs one more formalizer round, told where the facts fall short
  (``AgentLimits.omission_rounds``). An "unknown" answer is never wrong, and a "not
  equivalent" beside a proof is inconclusive too: the proof holds for its stated domain
  and assumptions, which the agent's objection may lie outside;
- **agent not asked** / **agent unavailable**: no model configured, or it could not answer.

The equivalence condition is the engine's own relative check (``relational.check.plan``
with ``relative``, its static half only: every call to code outside the unit is an
uninterpreted event, and both versions must make the same events on every path). The
judgement never runs code for it: the engine ran the full check (which also loads both
modules in the sandbox) where it could, and only that can verify. It either holds (which
alone is no proof), does not hold (naming the events where the versions part), or is
undecided (with the reason). A mismatch is no counterexample either: code that makes
other calls may still behave the same, so it never makes the agent wrong.

``combine`` is pure and takes the claim statuses and the condition as data; ``assess``
computes them (code facts, claim check, relative check) and calls it.
"""

from __future__ import annotations

import ast
import difflib
import enum
import functools
import json
import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace

from veribot.checks.agent.claims import (
    PROOF_BUDGET,
    ProverAllowance,
    canonical_facts,
    check_claims,
)
from veribot.checks.agent.facts import Fact, FactSet
from veribot.checks.agent.llm import LLM, LLMError, UsageMeter, UsageReport
from veribot.checks.agent.pipeline import (
    AFTER,
    BEFORE,
    AgentLimits,
    AgentRun,
    Answer,
    Question,
    ask,
    refine,
)
from veribot.checks.agent.tools import AgentTool
from veribot.checks.agent.view import SourceView
from veribot.checks.lang.pyfacts import FunctionNotFound, code_facts
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Result, Verdict

log = logging.getLogger(__name__)


class AgentOutcome(enum.Enum):
    """How the agent's answer compares with what was shown."""

    RIGHT_VERIFIED = "agent right, verified"
    RIGHT_REFUTED = "agent right, refuted"
    WRONG_CAUGHT = "agent wrong, caught"
    INCONCLUSIVE = "inconclusive"
    NOT_ASKED = "agent not asked"
    UNAVAILABLE = "agent unavailable"


class Status(enum.Enum):
    """One agent claim against the code's facts (``claims.ClaimStatus``, as data)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class ClaimReport:
    """One claim of the agent, as a reviewer reads it."""

    fact: str  # e.g. controldep("size", "before", 12, "c", "false", "before", 10)
    status: Status
    line: int | None = None
    why: str = ""


@dataclass(frozen=True)
class Condition:
    """The relative check on the two versions: holds, does not hold, or undecided (why)."""

    holds: bool | None
    detail: str = ""
    # Changed functions it holds relative to: calls to them are compared as calls, so it
    # says nothing about whether they, and with them the versions, behave the same.
    relative_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentFinding:
    """What the agent answered about a unit, each claim's status, and the judgement."""

    outcome: AgentOutcome
    summary: str  # one sentence
    answer: Answer | None = None
    explanation: str = ""
    claims: tuple[ClaimReport, ...] = ()
    condition: Condition | None = None  # the relative check on the two versions
    omitted: tuple[str, ...] = ()  # code facts the agent's argument left out
    dropped: str = ""  # the first control dependence on a changed line its facts omit
    assumptions: tuple[str, ...] = ()  # of the engine's proof, when verified
    formalizer_rounds: int = 0
    formalizer_complete: bool = False
    steps: int = 0
    tool_calls: int = 0
    usage: UsageReport = field(default_factory=UsageReport)
    error: str = ""

    def count(self, status: Status) -> int:
        return sum(1 for c in self.claims if c.status is status)


BUDGET_CUT = "inconclusive (budget): the agent was not asked"
NOT_ASKED = AgentFinding(AgentOutcome.NOT_ASKED, "agent not asked (no model configured)")


def combine(
    result: Result,
    run: AgentRun | None,
    claims: Sequence[ClaimReport] = (),
    condition: Condition | None = None,
    omitted: Sequence[str] = (),
    dropped: str = "",
) -> AgentFinding:
    """Judge the agent's run against the engine's ``result`` (see the module docstring).

    ``dropped`` describes a control dependence on a changed line that the agent's facts
    omit ("" for none): shown as a reason the judgement is inconclusive, never as a mistake.
    """
    if run is None:
        return NOT_ASKED
    a, f = run.analysis, run.formalization
    base = AgentFinding(
        outcome=AgentOutcome.INCONCLUSIVE,
        summary="",
        answer=run.answer if a is not None else None,
        explanation=a.explanation if a is not None else "",
        claims=tuple(claims),
        condition=condition,
        omitted=tuple(omitted),
        dropped=dropped,
        assumptions=result.assumptions if result.verdict is Verdict.VERIFIED else (),
        formalizer_rounds=f.rounds if f is not None else 0,
        formalizer_complete=f.complete if f is not None else False,
        steps=a.steps if a is not None else 0,
        tool_calls=len(a.tool_calls) if a is not None else 0,
        usage=run.usage,
        error=run.error,
    )
    if a is None and run.budget_spent:
        return _with(base, AgentOutcome.INCONCLUSIVE, f"{BUDGET_CUT}: {run.error}")
    if a is None:
        return _with(base, AgentOutcome.UNAVAILABLE, f"agent unavailable: {run.error}")
    outcome, summary = _judge(result, run.answer, base)
    return _with(base, outcome, summary)


def _judge(result: Result, answer: Answer, finding: AgentFinding) -> tuple[AgentOutcome, str]:
    contradicted = [c for c in finding.claims if c.status is Status.CONTRADICTED]
    unchecked = [c for c in finding.claims if c.status is Status.UNCHECKED]
    cex = result.counterexample
    if result.verdict is Verdict.REFUTED and cex is not None:
        shown = f"on input ({', '.join(cex.args)}) the versions behave differently"
        if answer is Answer.EQUIVALENT:
            return AgentOutcome.WRONG_CAUGHT, f"the agent said equivalent, but {shown}"
        if answer is Answer.NOT_EQUIVALENT:
            return AgentOutcome.RIGHT_REFUTED, f"the agent said not equivalent, and {shown}"
        return AgentOutcome.INCONCLUSIVE, f"the agent did not decide; {shown}"
    if result.verdict is Verdict.VERIFIED:
        if answer is Answer.NOT_EQUIVALENT:
            return (
                AgentOutcome.INCONCLUSIVE,
                "the agent said not equivalent, but the solver proved equivalence for the "
                "stated domain and assumptions (its objection, if sound, lies outside them)",
            )
        if answer is Answer.EQUIVALENT:
            text = "the agent said equivalent, and the solver proved it"
            if contradicted:
                text += f" (though {len(contradicted)} claim(s) of its reasoning are contradicted)"
            return AgentOutcome.RIGHT_VERIFIED, text
        return AgentOutcome.INCONCLUSIVE, "the agent did not decide; the solver proved equivalence"
    # The engine decided nothing: only the agent's own claims can be judged.
    if contradicted and answer is not Answer.UNKNOWN:
        first = contradicted[0]
        where = f" (line {first.line})" if first.line is not None else ""
        return (
            AgentOutcome.WRONG_CAUGHT,
            f"the agent said {answer.value}, but the code contradicts its claim "
            f"{first.fact}{where}" + (f": {first.why}" if first.why else ""),
        )
    reasons: list[str] = []
    if answer is Answer.UNKNOWN:
        return AgentOutcome.INCONCLUSIVE, "the agent did not decide (it answered unknown)"
    if finding.error:
        reasons.append(f"the formalizer was cut off ({finding.error})")
    if finding.dropped:
        reasons.append(f"its facts {finding.dropped}")
    if unchecked:
        reasons.append(
            f"{len(unchecked)} claim(s) could not be checked against the code "
            f"(e.g. {unchecked[0].fact}: {unchecked[0].why or 'beyond the code facts'})"
        )
    if finding.omitted:
        rounds = f" after {finding.formalizer_rounds} formalizer round(s)"
        reasons.append(
            f"its facts leave out {len(finding.omitted)} code fact(s) that matter{rounds}"
        )
    cond = finding.condition
    if cond is not None and cond.holds is False:
        reasons.append(f"the relative check does not hold: {cond.detail}")
    elif cond is not None and cond.holds is None:
        reasons.append(f"the relative check was not decided ({cond.detail})")
    elif cond is not None and cond.relative_to:
        reasons.append(f"the relative check holds only relative to {_names(cond.relative_to)}, "
                       "whose code changed: it compares the calls, not what they do, so it is "
                       "no agreement with the agent")
    elif cond is not None:
        reasons.append(f"the relative check holds statically ({cond.detail}), but only the "
                       "engine's full check, which also loads both modules, can verify")
    if not reasons:
        reasons.append("its argument is consistent with the code's facts, which is not a proof")
    return (
        AgentOutcome.INCONCLUSIVE,
        f"the agent said {answer.value}; not verified on its word: " + "; ".join(reasons),
    )


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _with(finding: AgentFinding, outcome: AgentOutcome, summary: str) -> AgentFinding:
    return replace(finding, outcome=outcome, summary=summary)


def assess(
    result: Result,
    run: AgentRun | None,
    before_source: str,
    after_source: str,
    entry: str,
    *,
    timeout_s: float = 10.0,
    max_proofs: int | ProverAllowance | None = None,
    execute: bool = True,
) -> AgentFinding:
    """Check the agent's facts against the code's and ``combine``.

    Each agent fact is checked against the code facts of both versions (``claims``); the
    code facts on changed lines that the agent's facts do not state are listed as
    ``omitted``; the condition is the relative check on the two versions (within
    ``timeout_s``). None of this can make the unit verified. ``execute=False`` (a
    proof-only review): claims are proven or left unchecked, never refuted by running the
    code (the relative check never runs it).
    """
    if run is None or run.analysis is None:
        return combine(result, run)
    condition = relative_condition(before_source, after_source, entry, timeout_s)
    if run.formalization is None or not len(run.formalization.facts):
        return combine(result, run, condition=condition)
    agent = run.formalization.facts
    try:
        code = (
            canonical_facts(code_facts(before_source, entry, BEFORE)),
            canonical_facts(code_facts(after_source, entry, AFTER)),
        )
    except (SyntaxError, FunctionNotFound, ValueError) as exc:
        log.info("no code facts for %s: %s", entry, exc)
        claims = [ClaimReport(str(f), Status.UNCHECKED, f.line(), "no code facts") for f in agent]
        return combine(result, run, claims, condition)
    sources = {BEFORE: before_source, AFTER: after_source}
    checked = check_claims(agent, code[0], code[1], sources, max_proofs=max_proofs,
                           budget=replace(PROOF_BUDGET, execute=execute))
    claims = [ClaimReport(str(c.fact), Status(c.status.value), c.line, c.why) for c in checked]
    compared = FactSet(c.checked or c.fact for c in checked)
    changed = changed_lines(before_source, after_source)
    left_out = _left_out(compared, code[0] | code[1], changed)
    ordered = sorted(dict.fromkeys(left_out), key=lambda f: (f.pred != "controldep", str(f)))
    dependences = [f for f in left_out if f.pred == "controldep" and _on(f, changed)]
    dropped = ""
    if dependences:
        dropped = _describe_dependence(dependences[0], sources)
    return combine(
        result,
        run,
        claims,
        condition,
        [str(f) for f in ordered[:OMITTED_LIMIT]],
        dropped,
    )


def ask_and_assess(
    llm: LLM,
    question: Question,
    view: SourceView,
    result: Result,
    before_source: str,
    after_source: str,
    entry: str,
    limits: AgentLimits | None = None,
    *,
    meter: UsageMeter | None = None,
    tools: Sequence[AgentTool] = (),
    timeout_s: float = 10.0,
    execute: bool = True,
) -> AgentFinding:
    """Ask the agent about one unit and judge it; when the engine decided nothing (so the
    judgement rests on the agent's facts) and its facts leave code out, give the formalizer
    up to ``limits.omission_rounds`` more rounds, told where, and judge again.

    Within ``meter`` (when given) the unit's calls are also capped at ``limits.unit_tokens``.
    """
    limits = limits or AgentLimits()
    start = meter.report() if meter is not None else UsageReport()
    prover = ProverAllowance(limits.max_prover_checks)  # for the unit, across judgements

    def judged(run: AgentRun) -> AgentFinding:
        return assess(
            result,
            run,
            before_source,
            after_source,
            entry,
            timeout_s=timeout_s,
            max_proofs=prover,
            execute=execute,
        )

    with _unit_cap(meter, limits.unit_tokens):
        run = ask(llm, question, view, limits, meter=meter, tools=tools)
        finding = judged(run)
        for _ in range(limits.omission_rounds):
            analysis, done = run.analysis, run.formalization
            settled = result.verdict is not Verdict.INCONCLUSIVE or (
                finding.outcome is not AgentOutcome.INCONCLUSIVE
            )
            if settled or not finding.omitted or analysis is None or done is None or run.error:
                break
            try:
                more = refine(llm, question, analysis, done, _where(finding.omitted), limits)
            except LLMError as exc:
                log.warning("formalizer round for %s: %s", entry, exc)
                run = replace(run, error=f"{type(exc).__name__}: {exc}")
                break
            run = replace(run, formalization=more)
            finding = judged(run)
    if meter is not None:
        finding = replace(finding, usage=meter.report().minus(start))
    return finding


def _unit_cap(meter: UsageMeter | None, tokens: int | None) -> AbstractContextManager[None]:
    return meter.unit(tokens) if meter is not None else nullcontext()


def _where(omitted: Sequence[str]) -> list[str]:
    """Where the omitted code facts are (predicate, version, line, variable), not the facts."""
    out: list[str] = []
    for text in omitted:
        pred, _, rest = text.partition("(")
        try:
            args = json.loads(f"[{rest.removesuffix(')')}]")
        except ValueError:
            continue
        if isinstance(args, list) and len(args) >= 3:
            item = f"{pred} at {args[1]} line {args[2]}, for {args[0]}"
            if item not in out:
                out.append(item)
    return out


OMITTED_LIMIT = 8
_OMISSIBLE = ("controldep", "flow", "def")


def changed_lines(before_source: str, after_source: str) -> dict[str, frozenset[int]]:
    """The lines (1-based) of each version that a line diff marks as changed."""
    a, b = before_source.splitlines(), after_source.splitlines()
    before: set[int] = set()
    after: set[int] = set()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            before.update(range(i1 + 1, i2 + 1))
            after.update(range(j1 + 1, j2 + 1))
    return {BEFORE: frozenset(before), AFTER: frozenset(after)}


def _on(fact: Fact, changed: dict[str, frozenset[int]]) -> bool:
    """Whether the fact's own (file, line) is a changed line."""
    file, line = fact.file(), fact.line()
    return file is not None and line is not None and line in changed.get(file, frozenset())


def _is_temporary(name: object) -> bool:
    return isinstance(name, str) and name.startswith("$t")


def _stated(fact: Fact, agent: FactSet) -> bool:
    """Whether the agent states ``fact``; a control dependence counts whatever it names the
    condition (temporaries are the front end's own names), as long as it has the same
    variable, lines and branch."""
    if fact in agent:
        return True
    if fact.pred != "controldep":
        return False
    shape = fact.args[:3] + fact.args[4:]
    return any(f.args[:3] + f.args[4:] == shape for f in agent.by_pred("controldep"))


def _left_out(agent: FactSet, code: FactSet, changed: dict[str, frozenset[int]]) -> list[Fact]:
    """Code facts on the changed lines that the agent's facts do not state.

    Left aside: facts about the front end's temporaries, and the trivial control dependence
    of a function's top-level statements on its entry.
    """
    return [
        f
        for f in code
        if f.pred in _OMISSIBLE
        and _on(f, changed)
        and not _is_temporary(f.args[0])
        and not (f.pred == "controldep" and str(f.args[3]).startswith("Entry:"))
        and not _stated(f, agent)
    ]


def _describe_dependence(fact: Fact, sources: dict[str, str]) -> str:
    """``omitted the control dependence of line 14 (`x = 1`) on line 12 (`if c:`, false)``."""
    variable, file, line, _cond, choice, cond_file, cond_line = fact.args

    def code_at(version: object, number: object) -> str:
        lines = sources.get(str(version), "").splitlines()
        if isinstance(number, int) and 1 <= number <= len(lines):
            return f" (`{lines[number - 1].strip()}`)"
        return ""

    return (
        f"omitted the control dependence of {file} line {line}{code_at(file, line)} "
        f"on {cond_file} line {cond_line}{code_at(cond_file, cond_line)}, "
        f"branch {choice}, for {variable}"
    )


@functools.lru_cache(maxsize=16)  # asked again for each formalizer round of the unit
def relative_condition(
    before_source: str, after_source: str, entry: str, timeout_s: float
) -> Condition:
    """The relative check's static half on the two versions (``relational.check.plan``):
    never runs code, and never verifies (only the engine's full check can)."""
    try:
        found = relational.plan(ast.parse(before_source), ast.parse(after_source), entry,
                                relative=True, seconds=timeout_s)
    except relational.Unmatched as why:
        return Condition(False, str(why))
    except relational.Refused as why:
        return Condition(None, str(why))
    except SyntaxError as exc:
        return Condition(None, f"the code does not parse: {exc.msg} (line {exc.lineno})")
    except (RecursionError, MemoryError):
        return Condition(None, "the code is nested too deeply")
    except Exception as exc:  # the check's boundary, as in ``relational.check.check``
        log.exception("relative check of %s failed", entry)
        return Condition(None, f"the relative check failed ({type(exc).__name__})")
    if found.relative:
        detail = ("both versions make the same calls and operations, with equal arguments, "
                  "in the same order, on every path")
    else:
        detail = "the code is the same up to renaming and resolved names"
    if found.relative_to:
        detail += (f", relative to {_names(found.relative_to)}, whose code changed (the "
                   "versions behave the same only if it does)")
    return Condition(True, detail, found.relative_to)
