"""The LLM protocol on the official ``anthropic`` client (Messages API with tool use).

``AnthropicLLM`` adds what the engine should not have to think about: retries with
exponential backoff and jitter on 429, 5xx and 529 (honouring ``retry-after``), a request
timeout (never past the review's deadline), the per-review budget (checked before every
call, see ``UsageMeter``), prompt caching of the repeated context (``cache_control`` on the
tools, the system prompt and the first user turn, which every step of a conversation
repeats), and the translation of the SDK's exceptions into ``veribot.checks.agent.llm``'s error
hierarchy.
The API key is never logged and never appears in an error message.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from veribot.checks.agent.llm import (
    Completion,
    LLMBudget,
    LLMError,
    LLMRequestRejected,
    LLMUnavailable,
    Message,
    ToolSpec,
    UsageMeter,
    completion_from_api,
    estimate_input_tokens,
    forced_tool,
)

if TYPE_CHECKING:
    # The SDK is imported where it is used, not when this module loads: the import takes
    # about half of a `veribot` process's start-up (0.7 s on a quiet machine, 1.8 s on a
    # loaded one), and most runs (no API key) never ask the model.
    import anthropic

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class AnthropicSettings:
    """How to reach the model. Built once by the configuration layer, never from here."""

    api_key: str = field(repr=False)
    model: str = DEFAULT_MODEL
    base_url: str = DEFAULT_BASE_URL
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    max_retry_after_s: float = 60.0  # a longer retry-after is capped, not obeyed blindly
    budget: LLMBudget = field(default_factory=LLMBudget)


class AnthropicLLM:
    """``veribot.checks.agent.llm.LLM`` on Anthropic's Messages API.

    ``meter`` collects the review's usage and enforces its budget; by default a fresh one
    with ``settings.budget``. ``sleep`` is how backoff waits (tests pass a recorder).
    """

    def __init__(
        self,
        settings: AnthropicSettings,
        *,
        meter: UsageMeter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.meter = meter if meter is not None else UsageMeter(settings.budget)
        self._sleep = sleep
        self._rng = rng or random.Random()
        import anthropic  # not at the top: see the note there

        self._client = anthropic.Anthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,  # retries are ours: budget-aware, logged, with our error types
        )

    @property
    def model(self) -> str:
        return self.settings.model

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

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
        """Send one request, retrying transient failures; raise an ``LLMError`` otherwise."""
        worst_case = estimate_input_tokens(system, messages, tools) + max_tokens
        with self.meter.reserve(worst_case) as reservation:
            kwargs = cached_request(
                self.settings.model,
                system,
                messages,
                tools,
                max_tokens=max_tokens,
                temperature=temperature,
            )
            if tool_choice is not None:
                kwargs["tool_choice"] = forced_tool(tool_choice)
            raw = self._send(kwargs)
            completion = completion_from_api(raw)
            reservation.settle(completion.usage)
        dropped = len(_list(raw.get("content"))) - len(completion.content)
        if dropped:
            log.warning("dropped %d content block(s) of unsupported types", dropped)
        log.debug(
            "model %s answered: stop_reason=%s, %d input / %d output tokens",
            completion.model,
            completion.stop_reason,
            completion.usage.input_tokens,
            completion.usage.output_tokens,
        )
        return completion

    def _send(self, kwargs: dict[str, Any]) -> dict[str, object]:
        import anthropic  # loaded by __init__ already

        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            left = self.meter.remaining_s()
            if left is not None and left <= 0:
                raise LLMUnavailable("the review's deadline for the agent passed while retrying")
            timeout = self.settings.timeout_s
            if left is not None:
                timeout = min(timeout, left)
            try:
                response: anthropic.types.Message = self._client.messages.create(
                    **kwargs, timeout=timeout
                )
                raw: dict[str, object] = response.model_dump(mode="json")
                return raw
            except anthropic.APIStatusError as exc:
                if not _retryable(exc) or attempt == attempts:
                    raise _translate(exc, attempt, self.settings.timeout_s) from None
                delay = self._delay(attempt, exc.response.headers)
                reason = f"HTTP {exc.status_code} {_error_type(exc)}"
            except anthropic.APIConnectionError as exc:  # includes APITimeoutError
                if attempt == attempts:
                    raise _translate(exc, attempt, self.settings.timeout_s) from None
                delay = self._delay(attempt, None)
                reason = _connection_problem(exc, self.settings.timeout_s)
            except anthropic.APIError as exc:  # e.g. a response that fails validation
                raise _translate(exc, attempt, self.settings.timeout_s) from None
            self.meter.record_retry()
            log.warning(
                "Anthropic API: %s; retry %d of %d in %.2f s",
                reason,
                attempt,
                attempts - 1,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, headers: httpx.Headers | None) -> float:
        """Seconds to wait before retry ``attempt``: the server's word, else backoff."""
        s = self.settings
        hinted = _retry_after(headers) if headers is not None else None
        if hinted is not None and hinted >= 0:
            return min(hinted, s.max_retry_after_s)
        ceiling = min(s.backoff_max_s, s.backoff_base_s * 2.0 ** (attempt - 1))
        return ceiling * self._rng.uniform(0.5, 1.0)  # "equal jitter"


EPHEMERAL = {"type": "ephemeral"}


def cached_request(
    model: str,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
    temperature: float,
) -> dict[str, Any]:
    """The request's keyword arguments, with prompt-cache breakpoints on the repeated context.

    Three of the API's four breakpoints: the last tool (caches the tool definitions), the
    system prompt, and the first user turn (the question, which every later step and
    formalizer round of a conversation repeats).
    """
    kwargs: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "messages": [m.to_api() for m in messages],
    }
    if system:
        kwargs["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    if tools:
        specs = [t.to_api() for t in tools]
        specs[-1] = {**specs[-1], "cache_control": EPHEMERAL}
        kwargs["tools"] = specs
    first = kwargs["messages"][0] if kwargs["messages"] else None
    if isinstance(first, dict) and isinstance(first.get("content"), list) and first["content"]:
        blocks = list(first["content"])
        blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
        kwargs["messages"][0] = {**first, "content": blocks}
    return kwargs


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _retryable(exc: anthropic.APIStatusError) -> bool:
    should = exc.response.headers.get("x-should-retry")
    if should in ("true", "false"):
        return bool(should == "true")
    status: int = exc.status_code
    return status in RETRYABLE_STATUS or status >= 500


def _retry_after(headers: httpx.Headers) -> float | None:
    """``retry-after-ms``, else ``retry-after`` in seconds or as an HTTP date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return float(email.utils.mktime_tz(parsed) - time.time())
    return None


def _error_type(exc: anthropic.APIStatusError) -> str:
    """The API's error type (``rate_limit_error``, ``overloaded_error`` ...) if it sent one."""
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("type"), str):
            return str(error["type"])
    return "error"


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
    return exc.response.reason_phrase or "no message"


def _connection_problem(exc: anthropic.APIConnectionError, timeout_s: float) -> str:
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return f"no answer within the {timeout_s:g} s timeout"
    return f"could not connect ({type(exc.__cause__ or exc).__name__})"


def _translate(exc: anthropic.APIError, attempts: int, timeout_s: float) -> LLMError:
    """The SDK's exception as ours, with a message a reviewer can act on."""
    import anthropic

    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if isinstance(exc, anthropic.APIStatusError):
        status, kind, message = exc.status_code, _error_type(exc), _error_message(exc)
        request_id = exc.response.headers.get("request-id")
        where = f" (request-id {request_id})" if request_id else ""
        detail = f"HTTP {status} {kind}: {message}{where}"
        if status in (401, 403):
            return LLMUnavailable(
                f"Anthropic API refused the credentials{tries}: {detail}; check the API key"
            )
        if _retryable(exc):
            return LLMUnavailable(f"Anthropic API gave up{tries}: {detail}")
        return LLMRequestRejected(f"Anthropic API rejected the request: {detail}")
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMUnavailable(
            f"Anthropic API unreachable{tries}: {_connection_problem(exc, timeout_s)}"
        )
    return LLMError(f"Anthropic API error: {type(exc).__name__}")
