"""The agent: the analyzer's ReAct loop and the formalizer's rounds, against the LLM protocol.

Seed 000, section 5.2: the **analyzer** is asked "is this change behaviour-preserving?"
about one changed function. It may read more code with ``cat`` and ``code_search`` over the
two revisions (``agent.view``), and any tools another module registers
(``agent.tools.AgentTool``), for at most ``AgentLimits.max_steps`` model calls, and ends by
calling ``submit_answer``: its answer (equivalent / not equivalent / unknown), explanation
and the relevant original, modified and common code, as JSON checked against the tool's
schema. The last step forces that call. The **formalizer** (section 5.4) turns the answer
into facts of the predicate vocabulary (``facts``), as a forced ``record_facts`` call checked
against the schema, in up to ``AgentLimits.formalizer_rounds`` rounds, each asking only for
the facts still missing given those recorded so far; the union is kept. An answer of
"unknown", a refusal or a cut-off answer is not formalized: there is no argument to check.
``refine`` runs one more round when the verifier finds the facts leave code out.

Pull-request text and code reach the model inside DATA fences (``prompts.data_block``),
never as instructions. Nothing here decides a verdict: the agent's answer is a claim that
``agent.verdict`` sets against the engine's proof or counterexample and the code's facts.

Pure: no network of its own (the ``LLM`` is injected), no files, no environment.
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from veribot.checks.agent import prompts
from veribot.checks.agent.facts import (
    TABLE_2,
    Fact,
    FactSet,
    fact_schema,
    parse_facts,
    vocabulary_text,
)
from veribot.checks.agent.llm import (
    LLM,
    BudgetExceeded,
    LLMError,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    UsageMeter,
    UsageReport,
    estimate_input_tokens,
)
from veribot.checks.agent.tools import ANSWER_TOOL, SUBMIT_ANSWER, AgentTool, validate
from veribot.checks.agent.view import TOOLS, SourceView, ToolError, ViewLimits

log = logging.getLogger(__name__)


class Answer(enum.Enum):
    """What the analyzer concluded."""

    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not equivalent"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class AgentLimits:
    """How much the agent may do for one unit."""

    max_steps: int = 10  # analyzer model calls
    max_tokens: int = 4096  # per analyzer answer
    formalizer_rounds: int = 5
    formalizer_max_tokens: int = 8192
    temperature: float = 0.0
    max_facts: int = 2000  # a formalizer flooding facts is cut off here
    max_invalid_answers: int = 2  # invalid submit_answer calls sent back before giving up
    omission_rounds: int = 1  # extra formalizer rounds when the facts leave code out
    unit_tokens: int | None = 200_000  # tokens one unit may use (None: only the review's cap)
    max_prover_checks: int = 8  # claims sent to the prover per unit


@dataclass(frozen=True)
class Question:
    """One changed function, as the agent is asked about it."""

    path: str  # the file, relative to the repository root (after the change)
    entry: str  # qualified name inside the module
    before_code: str  # the function's original text
    after_code: str  # the function's modified text
    before_path: str = ""  # defaults to ``path``
    before_lines: tuple[int, int] = (1, 1)
    after_lines: tuple[int, int] = (1, 1)
    pr_text: str = ""  # the pull request's title and description, if any

    @property
    def original_path(self) -> str:
        return self.before_path or self.path


@dataclass(frozen=True)
class ToolCall:
    """One tool call the analyzer made and whether the view refused it."""

    name: str
    input: Mapping[str, object] = field(hash=False)
    error: str = ""


@dataclass(frozen=True)
class Analysis:
    """The analyzer's final answer for one unit."""

    answer: Answer
    explanation: str
    original_code: str = ""
    modified_code: str = ""
    common_code: str = ""
    steps: int = 0  # model calls
    tool_calls: tuple[ToolCall, ...] = ()
    # "answered", "no answer", "invalid answer", "cut off", "refused"
    stopped: str = "answered"


@dataclass(frozen=True)
class Formalization:
    """The facts the formalizer gave, the union over its rounds."""

    facts: FactSet
    rounds: int
    complete: bool  # the formalizer said the facts suffice (before running out of rounds)
    problems: tuple[str, ...] = ()  # rejected answers: invalid JSON, unknown predicates ...


@dataclass(frozen=True)
class AgentRun:
    """Everything the agent said about one unit, and what it cost."""

    analysis: Analysis | None
    formalization: Formalization | None = None
    error: str = ""  # the model could not be asked (unavailable, budget, replay miss)
    usage: UsageReport = field(default_factory=UsageReport)
    budget_spent: bool = False  # ``error`` is the review's LLM budget refusing a call

    @property
    def answer(self) -> Answer:
        return self.analysis.answer if self.analysis is not None else Answer.UNKNOWN


def ask(
    llm: LLM,
    question: Question,
    view: SourceView,
    limits: AgentLimits = AgentLimits(),
    *,
    meter: UsageMeter | None = None,
    tools: Sequence[AgentTool] = (),
) -> AgentRun:
    """Analyze and formalize one unit; an ``LLMError`` becomes ``AgentRun.error``.

    ``meter`` (the review's, when it has one) gives this unit's share of the usage.
    Without an argument to check (an "unknown" answer, a refusal, a cut-off answer) there
    is no formalizing. ``tools``: more tools for the analyzer (``agent.tools.AgentTool``).
    """
    before = meter.report() if meter is not None else UsageReport()

    def spent() -> UsageReport:
        return meter.report().minus(before) if meter is not None else UsageReport()

    analysis: Analysis | None = None
    formalization: Formalization | None = None
    try:
        analysis = analyze(llm, question, view, limits, tools=tools, meter=meter)
        if analysis.answer is not Answer.UNKNOWN:
            formalization = formalize(llm, question, analysis, limits)
    except LLMError as exc:
        log.warning("agent for %s::%s: %s", question.path, question.entry, exc)
        return AgentRun(
            analysis,
            None,
            f"{type(exc).__name__}: {exc}",
            spent(),
            budget_spent=isinstance(exc, BudgetExceeded),
        )
    return AgentRun(analysis, formalization, "", spent())


# --- the analyzer ---------------------------------------------------------------------


def analyzer_prompt(question: Question) -> tuple[str, str]:
    """The analyzer's system prompt and first user message.

    Everything taken from the pull request (paths, names, code, its title and description)
    is inside DATA fences.
    """
    q = question
    where = (
        f"function: {q.entry}\n"
        f"original: original/{q.original_path} lines {_span(q.before_lines)}\n"
        f"modified: modified/{q.path} lines {_span(q.after_lines)}"
    )
    user = prompts.render(
        "analyzer_user",
        unit=prompts.data_block("unit", where),
        before_code=prompts.data_block(
            "original_code", _numbered(q.before_code, q.before_lines[0])
        ),
        after_code=prompts.data_block("modified_code", _numbered(q.after_code, q.after_lines[0])),
        pr_text=prompts.data_block("pull_request", q.pr_text or "(none)"),
    )
    return prompts.load("analyzer_system"), user


ANSWER_NOW = (
    "Give your final answer now: call submit_answer with the answer, the explanation and "
    "the relevant code."
)


# What one step's tool results may add to the conversation, in tokens (two results of
# the most a tool returns, at the estimate's 3 characters a token): kept in reserve for
# the answer forced after it.
_TOOL_OUTPUT_TOKENS = 2 * ViewLimits().max_result_chars // 3


def analyze(
    llm: LLM,
    question: Question,
    view: SourceView,
    limits: AgentLimits = AgentLimits(),
    *,
    tools: Sequence[AgentTool] = (),
    meter: UsageMeter | None = None,
) -> Analysis:
    """The ReAct loop: call tools while the model asks for them, up to ``max_steps`` calls.

    The answer is the input of a ``submit_answer`` call, validated against its schema; prose
    is never read for it. The last step, and any step after a turn that ended without an
    answer or with an invalid one, forces that call (``tool_choice``), and so does a step
    after which ``meter``'s tokens would no longer allow one more (a token cap must not
    refuse the answer after the tools spent it). ``tools`` are offered beside ``cat`` and
    ``code_search`` (``agent.tools.AgentTool``).
    """
    system, user = analyzer_prompt(question)
    extra = {t.spec.name: t for t in tools}
    specs = [*TOOLS, *(t.spec for t in tools), ANSWER_TOOL]
    names = [t.name for t in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"two agent tools share a name: {names}")
    messages: list[Message] = [Message.user(user)]
    calls: list[ToolCall] = []
    force = False
    invalid = 0
    for step in range(1, limits.max_steps + 1):
        problems: list[str] = []
        if meter is not None and not force:
            # This call, and a forced answer after it that reads what this one adds.
            worst = estimate_input_tokens(system, messages, specs) + limits.max_tokens
            force = meter.tokens_left() < 2 * worst + limits.max_tokens + _TOOL_OUTPUT_TOKENS
        forced = SUBMIT_ANSWER if force or step == limits.max_steps else None
        completion = llm.complete(
            system,
            messages,
            specs,
            max_tokens=limits.max_tokens,
            temperature=limits.temperature,
            tool_choice=forced,
        )
        turn = completion.as_message()
        # The API refuses an empty assistant turn; an empty answer is kept as a word.
        messages.append(turn if turn.content else Message("assistant", (TextBlock("..."),)))
        if completion.refused or completion.cut_off:
            stopped = "refused" if completion.refused else "cut off"
            return _no_answer(stopped, step, calls)
        uses = completion.tool_uses
        answers = [u for u in uses if u.name == SUBMIT_ANSWER]
        if len(answers) == 1:
            problems = validate(ANSWER_TOOL.input_schema, dict(answers[0].input))
            if not problems:
                return _analysis(answers[0].input, step, tuple(calls))
        elif answers:
            problems = [f"call {SUBMIT_ANSWER} once, not {len(answers)} times"]
        if not uses:
            if forced is not None or step == limits.max_steps:
                break
            force = True
            messages.append(Message.user(ANSWER_NOW))
            continue
        results: list[ToolResultBlock] = []
        for use in uses:
            if use.name == SUBMIT_ANSWER:
                text = "; ".join(problems[:8])
                results.append(ToolResultBlock(use.id, f"invalid answer: {text}", is_error=True))
                continue
            try:
                output = _call_tool(view, extra, use)
                calls.append(ToolCall(use.name, dict(use.input)))
                results.append(ToolResultBlock(use.id, output))
            except ToolError as exc:
                calls.append(ToolCall(use.name, dict(use.input), str(exc)))
                results.append(ToolResultBlock(use.id, str(exc), is_error=True))
        messages.append(Message.tool_results(results))
        if answers:
            invalid += 1
            if invalid > limits.max_invalid_answers:
                log.info("analyzer for %s: %d invalid answers", question.entry, invalid)
                stopped = "invalid answer"
                return _no_answer(stopped, step, calls)
            force = True
    log.info("analyzer for %s gave no answer in %d steps", question.entry, limits.max_steps)
    return _no_answer("no answer", limits.max_steps, calls)


def _no_answer(stopped: str, steps: int, calls: Sequence[ToolCall]) -> Analysis:
    return Analysis(Answer.UNKNOWN, "", steps=steps, tool_calls=tuple(calls), stopped=stopped)


def _call_tool(view: SourceView, extra: Mapping[str, AgentTool], use: ToolUseBlock) -> str:
    """Run one tool call after checking its input against the tool's schema."""
    tool = extra.get(use.name)
    schema = tool.spec.input_schema if tool is not None else _VIEW_SCHEMAS.get(use.name)
    if schema is not None:
        problems = validate(schema, dict(use.input))
        if problems:
            raise ToolError(f"invalid input for {use.name}: " + "; ".join(problems[:8]))
    if tool is not None:
        return tool.run(use.input)
    return view.call(use.name, use.input)


_VIEW_SCHEMAS = {t.name: t.input_schema for t in TOOLS}


def _analysis(raw: Mapping[str, object], steps: int, calls: tuple[ToolCall, ...]) -> Analysis:
    """The analysis from a valid ``submit_answer`` input."""

    def text(key: str) -> str:
        value = raw.get(key)
        return value.strip() if isinstance(value, str) else ""

    return Analysis(
        answer=Answer(text("answer")),
        explanation=text("explanation"),
        original_code=text("original_code"),
        modified_code=text("modified_code"),
        common_code=text("common_code"),
        steps=steps,
        tool_calls=calls,
        stopped="answered",
    )


# --- the formalizer -------------------------------------------------------------------

RECORD_FACTS = "record_facts"
# What the formalizer may state: the paper's Table 2, named results of functions, and
# claims about helper or library functions as expression equalities.
FORMALIZER_PREDICATES = (*TABLE_2, "unaryFunDef", "binaryFunDef", "exprEquiv")
BEFORE, AFTER = "before", "after"  # the version labels of facts (the ``file`` arguments)


def record_facts_tool() -> ToolSpec:
    """The tool the formalizer answers with: its input is checked against ``fact_schema()``."""
    schema = {
        k: v for k, v in fact_schema(FORMALIZER_PREDICATES).items() if k not in ("$schema", "title")
    }
    properties = dict(_mapping(schema.get("properties")))
    properties["complete"] = {
        "type": "boolean",
        "description": "true when the facts so far and these suffice to decide the question",
    }
    schema["properties"] = properties
    schema["required"] = ["facts", "complete"]
    return ToolSpec(
        name=RECORD_FACTS,
        description=(
            "Record facts of the predicate vocabulary about the before and after versions, "
            "and say whether the facts recorded so far plus these are complete."
        ),
        input_schema=schema,
    )


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def formalizer_prompt(
    question: Question, analysis: Analysis, so_far: FactSet, round_no: int, note: str
) -> tuple[str, str]:
    """The formalizer's system prompt and the user message of round ``round_no``."""
    q = question
    snippets = "\n\n".join(
        f"{title}:\n{body}"
        for title, body in (
            ("Original code", analysis.original_code),
            ("Modified code", analysis.modified_code),
            ("Common code", analysis.common_code),
        )
        if body
    )
    facts_text = so_far.to_lines() if len(so_far) else "(none yet)"
    if not note:
        note = (
            "Record the facts for both versions and the correspondences."
            if round_no == 1
            else "Are these facts sufficient to decide the equivalence? Record only the "
            "facts that are missing (none if nothing is missing) and set complete."
        )
    where = (
        f"function: {q.entry}\n"
        f"Code1: {q.original_path} lines {_span(q.before_lines)}\n"
        f"Code2: {q.path} lines {_span(q.after_lines)}"
    )
    user = prompts.render(
        "formalizer_user",
        unit=prompts.data_block("unit", where),
        before_code=prompts.data_block("code1", _numbered(q.before_code, q.before_lines[0])),
        after_code=prompts.data_block("code2", _numbered(q.after_code, q.after_lines[0])),
        snippets=prompts.data_block("analyzer_code", snippets or "(none)"),
        answer=analysis.answer.value,
        explanation=prompts.data_block("analyzer_explanation", analysis.explanation or "(none)"),
        fact_count=str(len(so_far)),
        facts_so_far=prompts.data_block("facts_so_far", facts_text),
        round_note=note,
    )
    vocabulary = "\n".join(
        f"* {line}" for line in vocabulary_text(FORMALIZER_PREDICATES).splitlines()
    )
    return prompts.render("formalizer_system", vocabulary=vocabulary), user


def formalize(
    llm: LLM, question: Question, analysis: Analysis, limits: AgentLimits = AgentLimits()
) -> Formalization:
    """Up to ``formalizer_rounds`` rounds; stop when a round adds nothing or says complete."""
    tool = record_facts_tool()
    facts: list[Fact] = []
    seen: set[Fact] = set()
    problems: list[str] = []
    note = ""
    complete = False
    rounds = 0
    for round_no in range(1, limits.formalizer_rounds + 1):
        rounds = round_no
        system, user = formalizer_prompt(question, analysis, FactSet(facts), round_no, note)
        completion = llm.complete(
            system,
            [Message.user(user)],
            [tool],
            max_tokens=limits.formalizer_max_tokens,
            temperature=limits.temperature,
            tool_choice=RECORD_FACTS,
        )
        if completion.refused:
            problems.append(f"round {round_no}: the model refused")
            break
        new: list[Fact]
        if completion.cut_off:
            new, said_complete, rejected = [], False, ["the answer was cut off at max_tokens"]
        else:
            new, said_complete, rejected = _read_facts(completion.tool_uses, completion.text)
        problems += [f"round {round_no}: {p}" for p in rejected]
        note = (
            "Part of your previous answer was rejected: " + "; ".join(rejected[:5]) + ". Call "
            f"{RECORD_FACTS} again with valid facts for what is missing."
            if rejected
            else ""
        )
        if rejected and not new:
            continue
        added = [f for f in new if f not in seen]
        for f in added:
            if len(facts) >= limits.max_facts:
                problems.append(f"round {round_no}: more than {limits.max_facts} facts; cut off")
                break
            seen.add(f)
            facts.append(f)
        if (said_complete or not added) and not rejected:
            complete = True
            break
    return Formalization(FactSet(facts), rounds, complete, tuple(problems))


def refine(
    llm: LLM,
    question: Question,
    analysis: Analysis,
    done: Formalization,
    missing: Sequence[str],
    limits: AgentLimits = AgentLimits(),
) -> Formalization:
    """One more formalizer round, told where the verifier found the facts leave code out.

    ``missing`` says where (e.g. "controldep at before line 4, for y"), not the facts
    themselves; the round's valid facts are added to ``done``'s.
    """
    note = (
        "The verifier found that the facts recorded so far leave out facts of the code "
        "that the equivalence depends on: " + "; ".join(missing[:12]) + ". Record the "
        f"missing facts (only those) with {RECORD_FACTS} and set complete."
    )
    system, user = formalizer_prompt(question, analysis, done.facts, done.rounds + 1, note)
    completion = llm.complete(
        system,
        [Message.user(user)],
        [record_facts_tool()],
        max_tokens=limits.formalizer_max_tokens,
        temperature=limits.temperature,
        tool_choice=RECORD_FACTS,
    )
    if completion.refused or completion.cut_off:
        why = "refused" if completion.refused else "was cut off at max_tokens"
        problems = (*done.problems, f"round {done.rounds + 1}: the model {why}")
        return Formalization(done.facts, done.rounds + 1, done.complete, problems)
    new, said_complete, rejected = _read_facts(completion.tool_uses, completion.text)
    room = max(0, limits.max_facts - len(done.facts))
    added = [f for f in new if f not in done.facts][:room]
    problems = (*done.problems, *(f"round {done.rounds + 1}: {p}" for p in rejected))
    return Formalization(
        done.facts | FactSet(added), done.rounds + 1, said_complete and not rejected, problems
    )


def _read_facts(uses: Sequence[ToolUseBlock], text: str) -> tuple[list[Fact], bool, list[str]]:
    """The valid facts of a ``record_facts`` call, whether it said complete, the problems.

    A call with some invalid items keeps the valid ones; a missing call or a malformed
    input gives no facts.
    """
    calls = [u for u in uses if u.name == RECORD_FACTS]
    if not calls:
        hint = " (facts given as text are not read)" if text.strip() else ""
        return [], False, [f"no {RECORD_FACTS} call{hint}"]
    raw = calls[-1].input
    complete = raw.get("complete")
    problems: list[str] = []
    if not isinstance(complete, bool):
        problems.append("'complete' must be true or false")
        complete = False
    parsed, errors = parse_facts({"facts": raw.get("facts")})
    problems += [e for e in errors[:10]]
    if len(errors) > 10:
        problems.append(f"... and {len(errors) - 10} more rejected facts")
    allowed = set(FORMALIZER_PREDICATES)
    facts = [f for f in parsed if f.pred in allowed]
    for f in parsed:
        if f.pred not in allowed:
            problems.append(f"{f.pred} is for code facts only, not for claims")
    return facts, complete, problems


# --- helpers --------------------------------------------------------------------------


def _span(lines: tuple[int, int]) -> str:
    return f"{lines[0]}-{lines[1]}"


def _numbered(code: str, first: int) -> str:
    """The code with its file line numbers, ``12: x = 1``."""
    return "\n".join(f"{n}: {line}" for n, line in enumerate(code.splitlines(), start=first))


def describe(run: AgentRun) -> str:
    """A one-line account of the run for logs."""
    if run.analysis is None:
        return f"agent not answered: {run.error}"
    a = run.analysis
    rounds = run.formalization.rounds if run.formalization is not None else 0
    return json.dumps(
        {"answer": a.answer.value, "steps": a.steps, "tools": len(a.tool_calls), "rounds": rounds}
    )
