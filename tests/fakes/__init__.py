"""Test doubles for the real boundaries: GitHub REST, webhooks, the Anthropic API.

Defined once and shared by every test. For the Anthropic Messages API:

- ``fake_anthropic``: a pytest fixture yielding a running ``FakeAnthropic`` (a local HTTP
  server speaking the Messages API); use it from a conftest (``from tests.fakes import
  fake_anthropic``) or register this module as a plugin.
- ``anthropic_llm(fake, ...)``: the real ``AnthropicLLM`` pointed at a fake, with fast
  backoff and a recorder instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.anthropic_server import (
    Exchange,
    FakeAnthropic,
    RecordedRequest,
    analyzer_answer,
    answer_call,
    error,
    formalizer_facts,
    load_recording,
    reply,
    running_fake_anthropic,
    text,
    tool_use,
    validate_request,
    view_answer,
)
from veribot.bot.llm import AnthropicLLM, AnthropicSettings
from veribot.checks.agent.llm import UsageMeter

__all__ = [
    "Exchange",
    "FakeAnthropic",
    "RecordedRequest",
    "analyzer_answer",
    "answer_call",
    "anthropic_llm",
    "error",
    "fake_anthropic",
    "formalizer_facts",
    "load_recording",
    "reply",
    "running_fake_anthropic",
    "text",
    "tool_use",
    "validate_request",
    "view_answer",
]


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running fake Messages API server; its ``url`` and ``api_key`` reach it."""
    with running_fake_anthropic() as fake:
        yield fake


def anthropic_llm(
    fake: FakeAnthropic,
    *,
    meter: UsageMeter | None = None,
    sleeps: list[float] | None = None,
    **settings: Any,
) -> AnthropicLLM:
    """An ``AnthropicLLM`` talking to ``fake``. Backoff waits are appended to ``sleeps``
    (when given) instead of slept; ``settings`` override ``AnthropicSettings`` fields."""
    options: dict[str, Any] = {
        "api_key": fake.api_key,
        "base_url": fake.url,
        "model": "claude-test",
        "timeout_s": 5.0,
        "max_retries": 2,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
    }
    options.update(settings)
    if sleeps is None:
        return AnthropicLLM(AnthropicSettings(**options), meter=meter)
    return AnthropicLLM(AnthropicSettings(**options), meter=meter, sleep=sleeps.append)
