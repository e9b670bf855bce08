"""The LLM protocol the engine talks to: messages, tools, completions, budget and errors.

Pure: no network, no vendor SDK. ``veribot.bot.llm`` adapts the Anthropic Messages API to
this protocol and ``veribot.bot.llmcache`` puts a persistent cache (record/replay) in front.
Values use the Messages API JSON shape as their neutral encoding (``to_api`` /
``completion_from_api``), so recordings, cache entries and wire requests agree.

Errors::

    LLMError                 base; every failure of the LLM layer is one of these
    ├── LLMUnavailable       the model could not be reached or gave up (network, timeout,
    │                        authentication, rate limit or overload after all retries)
    ├── LLMRequestRejected   the API refused the request itself (HTTP 400/404/413/422):
    │                        a bug on our side, retrying will not help
    ├── BudgetExceeded       a call would go over the per-review budget; it was NOT made
    └── ReplayMiss           replay mode: the recording holds no answer for this request

Accounting: a ``UsageMeter`` is created per review with an ``LLMBudget``. Every real call
is reserved with ``meter.reserve(...)`` *before* it is made (raising ``BudgetExceeded`` when
the worst case would go over), then settled with the usage the API reported; cache hits
are counted separately and cost nothing. ``meter.report()`` gives a ``UsageReport``.
The meter also refuses calls past the review's deadline (``deadline_s``) and, within
``meter.unit(tokens)``, calls that could take one unit over its own token cap.

A request may force the model to call one tool (``tool_choice``, the tool's name): the
agent uses it to make the model answer with a tool call, never in prose.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant"]


class LLMError(Exception):
    """Base of every error raised by the LLM layer."""


class LLMUnavailable(LLMError):
    """The model could not be reached or refused to serve us, after any retries."""


class LLMRequestRejected(LLMError):
    """The API rejected the request as malformed or too large; retrying will not help."""


class BudgetExceeded(LLMError):
    """A call would exceed the review's LLM budget; the call was not made."""


class ReplayMiss(LLMError):
    """Replay mode found no recorded answer for the request."""


@dataclass(frozen=True)
class TextBlock:
    """Plain text from either side of the conversation."""

    text: str
    type: Literal["text"] = field(default="text", init=False)

    def to_api(self) -> dict[str, object]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUseBlock:
    """The model asks to call tool ``name`` with ``input`` (a JSON object)."""

    id: str
    name: str
    input: Mapping[str, object] = field(hash=False)
    type: Literal["tool_use"] = field(default="tool_use", init=False)

    def to_api(self) -> dict[str, object]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}


@dataclass(frozen=True)
class ToolResultBlock:
    """Our answer to the tool call ``tool_use_id``; sent in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = field(default="tool_result", init=False)

    def to_api(self) -> dict[str, object]:
        out: dict[str, object] = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
        }
        if self.is_error:
            out["is_error"] = True
        return out


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock


@dataclass(frozen=True)
class Message:
    """One turn of the conversation. Roles must alternate, starting with ``user``."""

    role: Role
    content: tuple[ContentBlock, ...]

    @classmethod
    def user(cls, text: str) -> Message:
        """A user turn holding only ``text``."""
        return cls("user", (TextBlock(text),))

    @classmethod
    def tool_results(cls, results: Sequence[ToolResultBlock]) -> Message:
        """The user turn answering the tool calls of the previous assistant turn."""
        return cls("user", tuple(results))

    def to_api(self) -> dict[str, object]:
        return {"role": self.role, "content": [block.to_api() for block in self.content]}


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON Schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, object] = field(hash=False)

    def to_api(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.input_schema),
        }


@dataclass(frozen=True)
class Usage:
    """Tokens one call consumed, as reported by the API."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


FINAL_STOP_REASONS = frozenset({"end_turn", "tool_use", "stop_sequence"})


@dataclass(frozen=True)
class Completion:
    """The model's answer: content blocks, why it stopped, and what it cost."""

    content: tuple[ContentBlock, ...]
    stop_reason: str
    usage: Usage = Usage()
    model: str = ""

    @property
    def text(self) -> str:
        """All text blocks joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def cut_off(self) -> bool:
        """The answer stopped at ``max_tokens``: it is incomplete."""
        return self.stop_reason == "max_tokens"

    @property
    def refused(self) -> bool:
        """The model declined to answer (``stop_reason`` "refusal")."""
        return self.stop_reason == "refusal"

    @property
    def final(self) -> bool:
        """A whole answer, fit to be cached: not cut off, not refused, not paused."""
        return self.stop_reason in FINAL_STOP_REASONS

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls the model asked for, in order."""
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    def as_message(self) -> Message:
        """This completion as the assistant turn to append to the conversation."""
        return Message("assistant", self.content)

    def to_api(self) -> dict[str, object]:
        """The Messages API response shape (without ``id``), used by caches and recordings."""
        return {
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [block.to_api() for block in self.content],
            "stop_reason": self.stop_reason,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
        }


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def block_from_api(raw: Mapping[str, object]) -> ContentBlock | None:
    """Decode one content block; ``None`` for block types this protocol does not model."""
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(str(raw.get("text", "")))
    if kind == "tool_use":
        tool_input = raw.get("input")
        if not isinstance(tool_input, Mapping):
            raise LLMError(f"tool_use block {raw.get('id')!r} has a non-object input")
        return ToolUseBlock(str(raw["id"]), str(raw["name"]), dict(tool_input))
    if kind == "tool_result":
        content = raw.get("content", "")
        if isinstance(content, list):
            content = "\n".join(
                str(part.get("text", "")) for part in content if isinstance(part, Mapping)
            )
        return ToolResultBlock(str(raw["tool_use_id"]), str(content), bool(raw.get("is_error")))
    return None


def completion_from_api(raw: Mapping[str, object]) -> Completion:
    """Decode a Messages API response body (or a cached one) into a ``Completion``.

    Input tokens include prompt-cache reads and writes, since they count against the budget.
    Unknown block types (e.g. ``thinking``) are dropped; callers log them if they care.
    """
    blocks_raw = raw.get("content")
    if not isinstance(blocks_raw, list):
        raise LLMError("response has no content list")
    blocks = tuple(
        b for b in (block_from_api(x) for x in blocks_raw if isinstance(x, Mapping)) if b
    )
    usage_raw = raw.get("usage")
    usage = Usage()
    if isinstance(usage_raw, Mapping):
        usage = Usage(
            input_tokens=_int(usage_raw.get("input_tokens"))
            + _int(usage_raw.get("cache_creation_input_tokens"))
            + _int(usage_raw.get("cache_read_input_tokens")),
            output_tokens=_int(usage_raw.get("output_tokens")),
        )
    return Completion(
        content=blocks,
        stop_reason=str(raw.get("stop_reason") or ""),
        usage=usage,
        model=str(raw.get("model") or ""),
    )


def request_to_api(
    model: str,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
    temperature: float,
    tool_choice: str | None = None,
) -> dict[str, object]:
    """The canonical JSON of a request: what is sent, hashed for caches, and recorded.

    ``tool_choice`` names a tool the model must call (``None``: the model chooses).
    """
    request: dict[str, object] = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": float(temperature),
        "system": system,
        "messages": [m.to_api() for m in messages],
        "tools": [t.to_api() for t in tools],
    }
    if tool_choice is not None:
        request["tool_choice"] = forced_tool(tool_choice)
    return request


def forced_tool(name: str) -> dict[str, object]:
    """The Messages API ``tool_choice`` that makes the model call tool ``name``."""
    return {"type": "tool", "name": name}


def estimate_input_tokens(
    system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]
) -> int:
    """A deliberately generous estimate of a request's input tokens (one per 3 characters).

    Used only to refuse calls that could overrun the budget; the real count comes back in
    the response's ``usage``.
    """
    parts = [m.to_api() for m in messages] + [t.to_api() for t in tools]
    chars = len(system) + sum(len(json.dumps(p, ensure_ascii=False)) for p in parts)
    return math.ceil(chars / 3)


@runtime_checkable
class LLM(Protocol):
    """A chat model with tool use. Implementations raise only ``LLMError`` subclasses."""

    @property
    def model(self) -> str:
        """The model identifier; part of every cache key."""
        ...

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
        temperature: float,
        tool_choice: str | None = None,
    ) -> Completion:
        """Send one request and return the model's answer; ``tool_choice`` forces a tool."""
        ...


@dataclass(frozen=True)
class LLMBudget:
    """Per-review limits on real model calls and on tokens (input plus output)."""

    max_calls: int = 60
    max_tokens: int = 600_000


@dataclass(frozen=True)
class UsageReport:
    """What a review (or a unit, by difference of two reports) spent on the model."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_hits: int = 0
    retries: int = 0
    refused: int = 0  # calls refused by the budget

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def minus(self, earlier: UsageReport) -> UsageReport:
        """The usage between ``earlier`` and this report (e.g. one unit's share)."""
        return UsageReport(
            calls=self.calls - earlier.calls,
            input_tokens=self.input_tokens - earlier.input_tokens,
            output_tokens=self.output_tokens - earlier.output_tokens,
            cache_hits=self.cache_hits - earlier.cache_hits,
            retries=self.retries - earlier.retries,
            refused=self.refused - earlier.refused,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "refused": self.refused,
        }


class Reservation:
    """One reserved call; settle it with the real usage once the response is in."""

    def __init__(self, meter: UsageMeter, tokens: int) -> None:
        self._meter = meter
        self.tokens = tokens
        self.settled = False

    def settle(self, usage: Usage) -> None:
        """Record what the call really cost and release the reservation."""
        self._meter._settle(self, usage)


class UsageMeter:
    """Counts a review's model usage and enforces its ``LLMBudget``. Thread-safe.

    Shared by every LLM wrapper of one review, so that calls, tokens and cache hits end up
    in one report.
    """

    def __init__(
        self,
        budget: LLMBudget | None = None,
        *,
        deadline_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget or LLMBudget()
        self._clock = clock
        self._deadline = None if deadline_s is None else clock() + deadline_s
        self._lock = threading.Lock()
        self._report = UsageReport()
        self._pending_calls = 0
        self._pending_tokens = 0
        self._unit_base = 0  # tokens spent before the current unit began
        self._unit_cap: int | None = None

    def remaining_s(self) -> float | None:
        """Seconds left before the review's deadline (``None``: no deadline)."""
        return None if self._deadline is None else self._deadline - self._clock()

    def expired(self) -> bool:
        """Whether the review's deadline for the agent has passed."""
        left = self.remaining_s()
        return left is not None and left <= 0

    def tokens_left(self) -> int:
        """Tokens a next call may still reserve: the least of what the review's budget and,
        within a unit, the unit's cap leave."""
        with self._lock:
            tokens = self._report.total_tokens + self._pending_tokens
            left = self.budget.max_tokens - tokens
            if self._unit_cap is not None:
                left = min(left, self._unit_cap - (tokens - self._unit_base))
            return left

    @contextmanager
    def unit(self, max_tokens: int | None) -> Iterator[None]:
        """Within the block, calls are also capped at ``max_tokens`` in all (one unit's cap)."""
        with self._lock:
            self._unit_base = self._report.total_tokens + self._pending_tokens
            self._unit_cap = max_tokens
        try:
            yield
        finally:
            with self._lock:
                self._unit_cap = None

    @contextmanager
    def reserve(self, worst_case_tokens: int) -> Iterator[Reservation]:
        """Reserve one call that may use up to ``worst_case_tokens``; raise if over budget.

        The block must call ``settle`` on success; leaving it without settling (an error)
        releases the reservation without charging the call.
        """
        reservation = Reservation(self, worst_case_tokens)
        with self._lock:
            r, b = self._report, self.budget
            calls = r.calls + self._pending_calls
            tokens = r.total_tokens + self._pending_tokens
            problem = ""
            unit_tokens = tokens - self._unit_base
            if self.expired():
                problem = "the review's deadline for the agent has passed"
            elif calls + 1 > b.max_calls:
                problem = f"all {b.max_calls} model calls allowed per review are spent"
            elif tokens + worst_case_tokens > b.max_tokens:
                problem = (
                    f"this call could use up to {worst_case_tokens} tokens and {tokens} of the "
                    f"{b.max_tokens} allowed per review are already spent or reserved"
                )
            elif self._unit_cap is not None and unit_tokens + worst_case_tokens > self._unit_cap:
                problem = (
                    f"this call could use up to {worst_case_tokens} tokens and {unit_tokens} of "
                    f"the {self._unit_cap} allowed per function are already spent or reserved"
                )
            if problem:
                self._report = _bump(r, refused=1)
                raise BudgetExceeded(f"LLM budget exceeded, call not made: {problem}")
            self._pending_calls += 1
            self._pending_tokens += worst_case_tokens
        try:
            yield reservation
        finally:
            if not reservation.settled:
                self._release(reservation)

    def record_cache_hit(self) -> None:
        with self._lock:
            self._report = _bump(self._report, cache_hits=1)

    def record_retry(self) -> None:
        with self._lock:
            self._report = _bump(self._report, retries=1)

    def report(self) -> UsageReport:
        with self._lock:
            return self._report

    def _release(self, reservation: Reservation) -> None:
        with self._lock:
            self._pending_calls -= 1
            self._pending_tokens -= reservation.tokens
            reservation.settled = True

    def _settle(self, reservation: Reservation, usage: Usage) -> None:
        if reservation.settled:
            raise RuntimeError("reservation settled twice")
        self._release(reservation)
        with self._lock:
            self._report = _bump(
                self._report,
                calls=1,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
            )


def _bump(r: UsageReport, **delta: int) -> UsageReport:
    values = r.as_dict()
    for key, value in delta.items():
        values[key] += value
    return UsageReport(**values)
