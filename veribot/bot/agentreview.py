"""Ask the agent about each compared function of a review and judge its answer.

The review pipeline decides every unit with the engine first; then, when a model is
configured, ``ask_units`` asks the analyzer and formalizer (``veribot.checks.agent.pipeline``) about
each changed function, reading both revisions through a read-only view (git trees, or the
two files of ``veribot compare``), and sets the answer beside the engine's result
(``veribot.checks.agent.verdict``). The agent runs in this process, one unit after another,
so that one ``UsageMeter`` counts the whole review and its budget, its per-unit token cap
and its deadline hold.

The operator's ceilings (``config.AgentCeilings``) bound what a repository's
`.veribot.toml` may ask for: :func:`clamp` lowers a budget above them and replaces a model
outside the allow-list, and says so in ``AgentConfig.notes`` (shown in the summary).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import git

from veribot.bot.config import AgentCeilings
from veribot.bot.llm import AnthropicLLM, AnthropicSettings
from veribot.bot.llmcache import CachedLLM, Mode, from_spec
from veribot.checks.agent.llm import LLM, LLMBudget, UsageMeter, UsageReport
from veribot.checks.agent.pipeline import AgentLimits, AgentRun, Question
from veribot.checks.agent.tools import AgentTool
from veribot.checks.agent.verdict import AgentFinding, ask_and_assess, combine
from veribot.checks.agent.view import MemoryRevision, Revision, SourceView
from veribot.checks.project.units import ChangedUnit, UnitKind
from veribot.checks.verdict import Result

log = logging.getLogger(__name__)

MAX_BLOB_BYTES = 1_000_000


@dataclass(frozen=True)
class AgentConfig:
    """The model to ask and the limits; ``meter`` is the review's (its usage is reported)."""

    llm: LLM = field(hash=False)
    meter: UsageMeter | None = field(default=None, hash=False)
    limits: AgentLimits = field(default_factory=AgentLimits)
    pr_text: str = ""
    condition_timeout_s: float = 10.0  # the relative check in the agent's judgement
    notes: tuple[str, ...] = ()  # e.g. what the operator's ceilings clamped; for the summary
    tools: tuple[AgentTool, ...] = ()  # more tools for the analyzer (agent.tools.AgentTool)


class GitRevision:
    """A read-only ``Revision`` over one commit's tree; blobs are read on demand."""

    def __init__(self, repo_path: Path, rev: str) -> None:
        self._repo = git.Repo(repo_path, search_parent_directories=True)
        self._tree = self._repo.commit(rev).tree
        self._paths: list[str] | None = None

    def paths(self) -> Sequence[str]:
        if self._paths is None:
            self._paths = sorted(
                str(item.path)
                for item in self._tree.traverse()
                if isinstance(item, git.Blob) and item.size <= MAX_BLOB_BYTES
            )
        return self._paths

    def read(self, path: str) -> str | None:
        try:
            blob = self._tree / path
        except KeyError:
            return None
        if not isinstance(blob, git.Blob) or blob.size > MAX_BLOB_BYTES:
            return None
        data: bytes = blob.data_stream.read()
        if b"\0" in data[:8000]:
            return None
        return data.decode("utf-8", errors="replace")


def files_view(before: Path, after: Path, name: str) -> SourceView:
    """The view of ``veribot compare``: each file under the after file's name."""
    return SourceView(
        MemoryRevision({name: before.read_text(encoding="utf-8", errors="replace")}),
        MemoryRevision({name: after.read_text(encoding="utf-8", errors="replace")}),
    )


def git_view(repo: Path, base: str, head: str) -> SourceView:
    """The view of a git range: the base and head trees."""
    original: Revision = GitRevision(repo, base)
    modified: Revision = GitRevision(repo, head)
    return SourceView(original, modified)


def question_for(unit: ChangedUnit, pr_text: str = "") -> Question | None:
    """The question about a changed function, or ``None`` for a unit not compared."""
    if unit.kind is not UnitKind.CHANGED or not unit.is_function:
        return None
    if unit.before_source is None or unit.after_source is None:
        return None
    if unit.before_lines is None or unit.after_lines is None:
        return None
    return Question(
        path=unit.path,
        entry=unit.entry,
        before_code=_lines(unit.before_source, unit.before_lines),
        after_code=_lines(unit.after_source, unit.after_lines),
        before_path=unit.before_path or unit.path,
        before_lines=unit.before_lines,
        after_lines=unit.after_lines,
        pr_text=pr_text,
    )


def ask_units(
    units: Sequence[ChangedUnit],
    results: Sequence[Result],
    config: AgentConfig,
    view: SourceView,
    *,
    execute: bool,
) -> list[AgentFinding | None]:
    """A finding per unit (``None`` where the agent has nothing to answer).

    ``execute``: whether checking the agent's claims may run the code (in the sandbox);
    off in a proof-only review, where no code of the pull request may run at all.
    """
    findings: list[AgentFinding | None] = []
    for unit, result in zip(units, results, strict=True):
        question = question_for(unit, config.pr_text)
        if question is None:
            findings.append(None)
            continue
        assert unit.before_source is not None and unit.after_source is not None
        if config.meter is not None and config.meter.expired():
            why = "BudgetExceeded: the review's deadline for the agent has passed"
            findings.append(combine(result, AgentRun(None, None, why, budget_spent=True)))
            continue
        findings.append(
            ask_and_assess(
                config.llm,
                question,
                view,
                result,
                unit.before_source,
                unit.after_source,
                unit.entry,
                config.limits,
                meter=config.meter,
                tools=config.tools,
                timeout_s=config.condition_timeout_s,
                execute=execute,
            )
        )
        log.info(
            "agent on %s: %s", unit.qualname, findings[-1].outcome.value if findings[-1] else ""
        )
    return findings


def usage(config: AgentConfig | None) -> UsageReport | None:
    """The review's model usage, when a meter was kept."""
    if config is None or config.meter is None:
        return None
    return config.meter.report()


def _lines(source: str, span: tuple[int, int]) -> str:
    return "\n".join(source.splitlines()[span[0] - 1 : span[1]])


def agent_config(
    spec: str | None,
    model: str,
    api_key: str | None,
    *,
    pr_text: str = "",
    budget: LLMBudget | None = None,
    ceilings: AgentCeilings | None = None,
) -> AgentConfig | None:
    """The agent for ``--llm SPEC --model NAME``; ``None`` when it is not to be asked.

    No ``spec`` means ``live`` with an API key and ``off`` without one. ``replay:PATH``
    needs no key; ``live``, ``record:`` and ``cache:`` do (``ValueError`` otherwise, as for a
    malformed spec). ``ceilings`` (default ``AgentCeilings()``, as the App's) give the
    review's wall-clock deadline for the agent, which starts now, and each unit's tokens.
    """
    chosen = spec if spec is not None else ("live" if api_key else "off")
    ceilings = ceilings or AgentCeilings()
    meter = UsageMeter(budget or LLMBudget(), deadline_s=ceilings.deadline_s)

    def inner() -> LLM:
        if not api_key:
            raise ValueError(f"--llm {chosen} needs ANTHROPIC_API_KEY (replay:PATH does not)")
        return AnthropicLLM(AnthropicSettings(api_key=api_key, model=model), meter=meter)

    llm = from_spec(chosen, inner, model=model, meter=meter)
    if llm is None:
        return None
    return AgentConfig(llm=llm, meter=meter, pr_text=pr_text,
                       limits=AgentLimits(unit_tokens=ceilings.unit_tokens))


def clamp(
    model: str, budget: LLMBudget, ceilings: AgentCeilings, default_model: str
) -> tuple[str, LLMBudget, tuple[str, ...]]:
    """The model and budget a review may use under the operator's ``ceilings``, and notes
    saying what was lowered or replaced (empty when the request was within them)."""
    notes: list[str] = []
    calls, tokens = budget.max_calls, budget.max_tokens
    if calls > ceilings.llm_calls:
        notes.append(
            f"`.veribot.toml` asks for {calls} model calls; the operator allows "
            f"{ceilings.llm_calls}, which apply"
        )
        calls = ceilings.llm_calls
    if tokens > ceilings.tokens:
        notes.append(
            f"`.veribot.toml` asks for {tokens} tokens; the operator allows "
            f"{ceilings.tokens}, which apply"
        )
        tokens = ceilings.tokens
    allowed = ceilings.models
    if allowed and model not in allowed:
        fallback = default_model if default_model in allowed else allowed[0]
        notes.append(
            f"the model `{model}` is not among the operator's allowed models "
            f"({', '.join(f'`{m}`' for m in allowed)}); `{fallback}` was asked instead"
        )
        model = fallback
    return model, LLMBudget(max_calls=calls, max_tokens=tokens), tuple(notes)


@contextmanager
def anthropic_agent(
    api_key: str,
    *,
    model: str,
    base_url: str,
    budget: LLMBudget,
    temperature: float = 0.0,
    pr_text: str = "",
    cache: Path | None = None,
    ceilings: AgentCeilings | None = None,
    default_model: str | None = None,
) -> Iterator[AgentConfig]:
    """The agent of a pull-request review on the Anthropic API; its connection is closed after.

    ``pr_text`` (the pull request's title and description) reaches the model only as
    delimited data. ``cache``: a SQLite file answering repeated questions (a job run again
    after a crash costs nothing). ``budget`` holds for the whole review: a call that would
    go over it is not made, and the units it leaves unasked say so. ``ceilings`` (the
    operator's, default ``AgentCeilings()``) clamp ``model`` and ``budget`` (see
    :func:`clamp`), cap each unit's tokens and set the review's deadline, which starts now.
    """
    ceilings = ceilings or AgentCeilings()
    model, budget, notes = clamp(model, budget, ceilings, default_model or model)
    meter = UsageMeter(budget, deadline_s=ceilings.deadline_s)
    inner = AnthropicLLM(
        AnthropicSettings(api_key=api_key, model=model, base_url=base_url, budget=budget),
        meter=meter,
    )
    llm: LLM = inner if cache is None else CachedLLM(inner, cache, Mode.CACHE, meter=meter)
    limits = AgentLimits(temperature=temperature, unit_tokens=ceilings.unit_tokens)
    try:
        yield AgentConfig(llm=llm, meter=meter, limits=limits, pr_text=pr_text, notes=notes)
    finally:
        inner.close()
