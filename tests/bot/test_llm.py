"""The LLM layer: the real ``anthropic`` client against the fake Messages API server."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes import (
    FakeAnthropic,
    error,
    load_recording,
    reply,
    text,
    tool_use,
)
from tests.fakes import anthropic_llm as _anthropic_llm
from veribot.bot.llm import AnthropicLLM
from veribot.bot.llmcache import CachedLLM, Mode, from_spec
from veribot.checks.agent.llm import (
    LLM,
    BudgetExceeded,
    Completion,
    LLMBudget,
    LLMRequestRejected,
    LLMUnavailable,
    Message,
    ReplayMiss,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    UsageMeter,
)

SYSTEM = "You decide whether a code change preserves behaviour."
CAT = ToolSpec(
    name="cat",
    description="Print lines start..end of a file of the repository.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "start": {"type": "integer"},
            "end": {"type": "integer"},
        },
        "required": ["path"],
    },
)
QUESTION = Message.user("Is `if not s.is_empty()` equivalent to `if s.has_value()`?")
_OPEN: list[AnthropicLLM] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Every client a test made is closed after it: a connection left open is closed by the
    garbage collector, whose ResourceWarning (an error here) then fails whichever later
    test it happens to run in."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def anthropic_llm(fake: FakeAnthropic, **options: Any) -> AnthropicLLM:
    client = _anthropic_llm(fake, **options)
    _OPEN.append(client)
    return client


def ask(llm: LLM) -> Completion:
    return llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.0)


def ask_text(llm: LLM) -> str:
    return ask(llm).text


def test_tool_use_round_trip(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(load_recording("tool_use_round_trip"))
    llm = anthropic_llm(fake_anthropic)

    first = llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.0)
    assert first.stop_reason == "tool_use"
    assert first.model == "claude-test"
    (call,) = first.tool_uses
    assert call == ToolUseBlock(
        "toolu_01A09q90qw90lq917835lq9", "cat", {"path": "src/store.py", "start": 1, "end": 40}
    )
    assert first.usage.input_tokens == 412 and first.usage.output_tokens == 61

    conversation = [
        QUESTION,
        first.as_message(),
        Message.tool_results([ToolResultBlock(call.id, "def has_value(self):\n    ...")]),
    ]
    second = llm.complete(SYSTEM, conversation, [CAT], max_tokens=512, temperature=0.0)
    assert second.stop_reason == "end_turn"
    assert second.text.startswith("ANSWER: equivalent")
    assert second.tool_uses == ()

    assert fake_anthropic.problems == []
    first_request, second_request = fake_anthropic.requests
    assert first_request.headers["x-api-key"] == fake_anthropic.api_key
    assert first_request.headers["anthropic-version"]
    body = second_request.body
    assert body["model"] == "claude-test"
    ephemeral = {"type": "ephemeral"}  # the repeated context is marked for prompt caching
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": ephemeral}]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 512
    assert body["tools"] == [{**CAT.to_api(), "cache_control": ephemeral}]
    assert body["messages"][0]["content"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in json.dumps(body["messages"][1:])
    assert "tool_choice" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == call.id

    assert llm.meter.report().calls == 2
    assert llm.meter.report().input_tokens == 412 + 655
    assert llm.meter.report().output_tokens == 61 + 38


def test_fake_server_rejects_malformed_requests(fake_anthropic: FakeAnthropic) -> None:
    """Other tests rely on the fake to catch bad conversations as the real API would."""
    fake_anthropic.script(reply(text("unused")))
    headers = {"x-api-key": fake_anthropic.api_key, "anthropic-version": "2023-06-01"}
    bad = {
        "model": "claude-test",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x"}]},
        ],
        "tools": [{"name": "cat", "input_schema": {"type": "string"}}],
    }
    url = f"{fake_anthropic.url}/v1/messages"
    response = httpx.post(url, json=bad, headers=headers)
    assert response.status_code == 400
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "invalid_request_error"
    message = response.json()["error"]["message"]
    assert "roles must alternate" in message
    assert "tool_use_id" in message and "input_schema" in message

    unanswered = {
        "model": "claude-test",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [tool_use("cat", {"path": "a"}, id="toolu_1")]},
            {"role": "user", "content": "go on"},
        ],
    }
    response = httpx.post(url, json=unanswered, headers=headers)
    assert response.status_code == 400
    assert "without `tool_result`" in response.json()["error"]["message"]

    response = httpx.post(url, json=bad, headers={"anthropic-version": "2023-06-01"})
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
    assert fake_anthropic.remaining == 1  # nothing invalid consumed the script


def test_rate_limit_honours_retry_after(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(error(429, retry_after=3), reply(text("ok")))
    sleeps: list[float] = []
    llm = anthropic_llm(fake_anthropic, sleeps=sleeps)

    assert ask_text(llm) == "ok"
    assert sleeps == [3.0]  # the server's retry-after, not our (tiny) backoff
    assert len(fake_anthropic.requests) == 2
    assert llm.meter.report().retries == 1 and llm.meter.report().calls == 1


def test_retry_after_is_capped(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(error(429, retry_after=3600), reply(text("ok")))
    sleeps: list[float] = []
    llm = anthropic_llm(fake_anthropic, sleeps=sleeps, max_retry_after_s=20.0)
    assert ask_text(llm) == "ok"
    assert sleeps == [20.0]


def test_real_wait_between_retries(fake_anthropic: FakeAnthropic) -> None:
    """With real sleeping, the retry arrives no earlier than retry-after-ms says."""
    fake_anthropic.script(error(429, headers={"retry-after-ms": "150"}), reply(text("ok")))
    llm = anthropic_llm(fake_anthropic)
    t0 = time.monotonic()
    assert ask_text(llm) == "ok"
    assert time.monotonic() - t0 >= 0.15


def test_overloaded_then_rate_limited_then_ok(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(load_recording("overloaded_then_ok"))
    sleeps: list[float] = []
    llm = anthropic_llm(fake_anthropic, sleeps=sleeps, backoff_base_s=0.5, backoff_max_s=5.0)

    assert ask_text(llm) == "ANSWER: not equivalent"
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] <= 0.5  # backoff with jitter after the 529
    assert sleeps[1] == 3.0  # retry-after of the 429
    assert [r.status for r in fake_anthropic.requests] == [529, 429, 200]


def test_gives_up_after_max_retries(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script([error(500, "Internal server error")] * 4)
    sleeps: list[float] = []
    llm = anthropic_llm(fake_anthropic, sleeps=sleeps, max_retries=3)

    with pytest.raises(LLMUnavailable) as caught:
        ask(llm)
    message = str(caught.value)
    assert "gave up after 4 attempts" in message
    assert "HTTP 500 api_error: Internal server error" in message
    assert "request-id req_" in message
    assert len(fake_anthropic.requests) == 4 and len(sleeps) == 3
    # Exponential backoff from backoff_base_s=0.01, capped at backoff_max_s=0.05, jittered.
    assert all(0 < s <= min(0.05, 0.01 * 2**i) for i, s in enumerate(sleeps))
    report = llm.meter.report()
    assert report.calls == 0 and report.retries == 3


def test_timeout_is_unavailable(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(reply(text("late"), delay_s=1.0))
    llm = anthropic_llm(fake_anthropic, timeout_s=0.2, max_retries=0)
    with pytest.raises(LLMUnavailable, match=r"no answer within the 0\.2 s timeout"):
        ask(llm)


def test_bad_request_is_rejected_without_retry(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(error(400, "prompt is too long: 210000 tokens > 200000 maximum"))
    llm = anthropic_llm(fake_anthropic, sleeps=[])
    with pytest.raises(LLMRequestRejected, match="prompt is too long"):
        ask(llm)
    assert len(fake_anthropic.requests) == 1


def test_call_budget_is_enforced_before_the_call(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(reply(text("one")), reply(text("two")))
    llm = anthropic_llm(fake_anthropic, budget=LLMBudget(max_calls=1))
    assert ask_text(llm) == "one"
    with pytest.raises(BudgetExceeded, match="all 1 model calls allowed per review"):
        ask(llm)
    assert len(fake_anthropic.requests) == 1  # the refused call never reached the server
    report = llm.meter.report()
    assert report.calls == 1 and report.refused == 1


def test_token_budget_counts_the_worst_case(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(reply(text("unused")))
    llm = anthropic_llm(fake_anthropic, budget=LLMBudget(max_tokens=600))
    with pytest.raises(BudgetExceeded, match="could use up to"):
        ask(llm)  # max_tokens=512 plus the prompt exceeds 600
    assert fake_anthropic.requests == []


def test_meter_is_shared_and_diffable(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(reply(text("a"), input_tokens=10, output_tokens=2))
    fake_anthropic.script(reply(text("b"), input_tokens=30, output_tokens=4))
    meter = UsageMeter(LLMBudget(max_calls=5))
    llm = anthropic_llm(fake_anthropic, meter=meter)
    ask(llm)
    before_unit = meter.report()
    ask(llm)
    unit = meter.report().minus(before_unit)
    assert unit.as_dict() == {
        "calls": 1,
        "input_tokens": 30,
        "output_tokens": 4,
        "cache_hits": 0,
        "retries": 0,
        "refused": 0,
    }


def test_cache_answers_identical_requests_without_http(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.script(reply(text("first")), reply(text("second")))
    inner = anthropic_llm(fake_anthropic)
    llm = CachedLLM(inner, tmp_path / "llm.sqlite3", Mode.CACHE)

    assert ask_text(llm) == "first"
    assert ask_text(llm) == "first"
    assert len(fake_anthropic.requests) == 1
    report = llm.meter.report()
    assert report.calls == 1 and report.cache_hits == 1  # one meter for both layers

    # Anything in the key changing is a miss: here the temperature.
    hotter = llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.7)
    assert hotter.text == "second"
    assert len(fake_anthropic.requests) == 2

    # A second process (another worker) sees the same entries.
    again = CachedLLM(inner, tmp_path / "llm.sqlite3", Mode.CACHE)
    assert ask_text(again) == "first"
    assert len(again) == 2
    assert len(fake_anthropic.requests) == 2


def test_record_then_replay_offline(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    fake_anthropic.script(load_recording("tool_use_round_trip"))
    path = tmp_path / "recording.sqlite3"
    recorder = CachedLLM(anthropic_llm(fake_anthropic), path, Mode.RECORD)
    first = recorder.complete(SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.0)

    replay = from_spec(f"replay:{path}", _no_model, model="claude-test")
    assert replay is not None
    replayed = replay.complete(SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.0)
    assert replayed == first
    assert isinstance(replayed.content[0], TextBlock)

    with pytest.raises(ReplayMiss) as caught:
        replay.complete(
            SYSTEM, [Message.user("Is `foo` equivalent to `bar`?")], [CAT], max_tokens=512,
            temperature=0.0,
        )  # fmt: skip
    message = str(caught.value)
    assert str(path) in message
    assert "'Is `foo` equivalent to `bar`?'" in message
    assert "model 'claude-test'" in message and "holds 1 answer(s), 1 for this model" in message
    assert len(fake_anthropic.requests) == 1


def test_replay_of_missing_or_foreign_file(tmp_path: Path) -> None:
    with pytest.raises(LLMUnavailable, match="does not exist"):
        from_spec(f"replay:{tmp_path / 'nope.sqlite3'}", _no_model, model="m")
    foreign = tmp_path / "other.sqlite3"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE t (x)")
    replay = from_spec(f"replay:{foreign}", _no_model, model="m")
    assert replay is not None
    with pytest.raises(LLMUnavailable, match="is not an LLM recording"):
        ask(replay)


def test_from_spec_forms(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    def factory() -> LLM:
        return anthropic_llm(fake_anthropic)

    assert from_spec("off", factory, model="claude-test") is None
    live = from_spec("live", factory, model="claude-test")
    assert live is not None and not isinstance(live, CachedLLM)
    cached = from_spec(f"cache:{tmp_path / 'c.sqlite3'}", factory, model="claude-test")
    assert isinstance(cached, CachedLLM) and cached.mode is Mode.CACHE
    recorder = from_spec(f"record:{tmp_path / 'r' / 'r.sqlite3'}", factory, model="claude-test")
    assert isinstance(recorder, CachedLLM) and recorder.mode is Mode.RECORD
    for bad in ("replay", "replay:", "tape:x.sqlite3", ""):
        with pytest.raises(ValueError, match="expected one of replay:PATH"):
            from_spec(bad, factory, model="claude-test")


def test_api_key_never_logged(
    fake_anthropic: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_anthropic.script(error(529), reply(text("ok")))
    llm = anthropic_llm(fake_anthropic, sleeps=[])
    assert ask_text(llm) == "ok"
    assert "overloaded_error" in caplog.text  # the retry was logged ...
    assert repr(llm.settings).count("sk-ant") == 0

    wrong = anthropic_llm(fake_anthropic, api_key="sk-ant-wrong-secret-key")
    with pytest.raises(LLMUnavailable, match="refused the credentials") as caught:
        ask(wrong)
    for secret in (fake_anthropic.api_key, "sk-ant-wrong-secret-key"):
        assert secret not in caplog.text  # ... but never with the key
        assert secret not in str(caught.value)


def _no_model() -> LLM:
    raise AssertionError("replay must not build a model client")


class EchoLLM:
    """A model that repeats the last user text: a stand-in at the protocol boundary."""

    model = "echo-1"

    def __init__(self) -> None:
        self.calls = 0

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
        self.calls += 1
        question = messages[-1].content[0]
        assert isinstance(question, TextBlock)
        return Completion((TextBlock(question.text),), "end_turn")


def test_cache_shared_by_concurrent_workers(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    models = [EchoLLM(), EchoLLM()]
    assert all(isinstance(m, LLM) for m in models)
    failures: list[BaseException] = []

    def worker(inner: EchoLLM) -> None:
        try:
            cache = CachedLLM(inner, path, Mode.CACHE)
            for i in range(25):
                got = cache.complete("", [Message.user(f"q{i}")], [], max_tokens=8, temperature=0)
                assert got.text == f"q{i}"
        except BaseException as exc:  # surfaced below, in the test's own thread
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(CachedLLM(models[0], path)) == 25
    assert 25 <= sum(m.calls for m in models) <= 50  # every question asked at least once


# --- operations: what is cached, for how long, under which model version ------------------


@pytest.mark.parametrize("stop_reason", ["max_tokens", "refusal"])
def test_cut_off_and_refused_answers_are_never_cached(
    fake_anthropic: FakeAnthropic, tmp_path: Path, stop_reason: str
) -> None:
    fake_anthropic.script(reply(text("partial"), stop_reason=stop_reason), reply(text("whole")))
    llm = CachedLLM(anthropic_llm(fake_anthropic), tmp_path / "llm.sqlite3", Mode.CACHE)
    first = ask(llm)
    assert first.stop_reason == stop_reason and (first.cut_off or first.refused)
    assert len(llm) == 0
    assert ask_text(llm) == "whole"  # asked again, not served the broken answer
    assert ask_text(llm) == "whole" and len(fake_anthropic.requests) == 2 and len(llm) == 1


def test_a_tool_call_its_schema_rejects_is_never_cached(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    """A cached schema-invalid answer would be served for days; asked again, the model may
    answer well. A recording keeps it (a run is replayed as it went)."""
    bad = tool_use("cat", {"start": "one"})  # no "path"; "start" not an integer
    good = tool_use("cat", {"path": "src/store.py"})
    fake_anthropic.script(reply(bad, stop_reason="tool_use"), reply(good, stop_reason="tool_use"))
    llm = CachedLLM(anthropic_llm(fake_anthropic), tmp_path / "llm.sqlite3", Mode.CACHE)
    assert ask(llm).tool_uses[0].input == {"start": "one"}
    assert len(llm) == 0
    assert ask(llm).tool_uses[0].input == {"path": "src/store.py"}
    assert ask(llm).tool_uses[0].input == {"path": "src/store.py"}  # now from the cache
    assert len(fake_anthropic.requests) == 2 and len(llm) == 1
    fake_anthropic.script(reply(bad, stop_reason="tool_use"))
    recorder = CachedLLM(anthropic_llm(fake_anthropic), tmp_path / "rec.sqlite3", Mode.RECORD)
    assert ask(recorder).tool_uses[0].input == {"start": "one"}
    assert len(recorder) == 1


def test_cache_entries_expire(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    now = [1_000_000.0]
    fake_anthropic.script(reply(text("old")), reply(text("new")))
    llm = CachedLLM(
        anthropic_llm(fake_anthropic),
        tmp_path / "llm.sqlite3",
        Mode.CACHE,
        ttl_s=3600.0,
        clock=lambda: now[0],
    )
    assert ask_text(llm) == "old"
    now[0] += 3000.0
    assert ask_text(llm) == "old"  # still fresh
    now[0] += 1000.0
    assert ask_text(llm) == "new"  # expired: asked again
    assert len(fake_anthropic.requests) == 2


def test_the_cache_key_follows_the_exact_model_version(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    """The alias answers as one dated snapshot, then (after the entry expired) as a newer
    one: from then on, answers of the old snapshot are not served, even unexpired ones."""
    now = [0.0]
    fake_anthropic.script(
        reply(text("from the old snapshot"), model="claude-test-20250101"),
        reply(text("old, other question"), model="claude-test-20250101"),
        reply(text("from the new snapshot"), model="claude-test-20260101"),
        reply(text("new, other question"), model="claude-test-20260101"),
    )
    inner = anthropic_llm(fake_anthropic)
    path = tmp_path / "llm.sqlite3"
    llm = CachedLLM(inner, path, Mode.CACHE, ttl_s=100.0, clock=lambda: now[0])
    other = [Message.user("Another question?")]
    assert ask_text(llm) == "from the old snapshot"
    now[0] = 60.0
    assert llm.complete(SYSTEM, other, [CAT], max_tokens=512, temperature=0.0).text == (
        "old, other question"
    )
    assert ask_text(llm) == "from the old snapshot"  # hit: same model version
    now[0] = 120.0  # the first entry expired; the second is 60 s old
    assert ask_text(llm) == "from the new snapshot"  # the alias moved
    later = llm.complete(SYSTEM, other, [CAT], max_tokens=512, temperature=0.0)
    assert later.text == "new, other question"  # the old snapshot's fresh entry is not used
    assert later.model == "claude-test-20260101"
    assert len(fake_anthropic.requests) == 4
    with sqlite3.connect(path) as db:
        versions = db.execute("SELECT model, version FROM llm_versions").fetchall()
    assert versions == [("claude-test", "claude-test-20260101")]


def test_a_forced_tool_is_part_of_the_request_and_of_the_key(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.script(reply(tool_use("cat", {"path": "a.py"})), reply(text("free")))
    llm = CachedLLM(anthropic_llm(fake_anthropic), tmp_path / "llm.sqlite3", Mode.CACHE)
    forced = llm.complete(
        SYSTEM, [QUESTION], [CAT], max_tokens=512, temperature=0.0, tool_choice="cat"
    )
    assert forced.tool_uses[0].name == "cat"
    assert fake_anthropic.bodies[0]["tool_choice"] == {"type": "tool", "name": "cat"}
    assert ask_text(llm) == "free"  # not forced: another key
    assert "tool_choice" not in fake_anthropic.bodies[1]


def test_the_fake_holds_a_forced_tool_to_the_api_contract(fake_anthropic: FakeAnthropic) -> None:
    """Like the real API, a forced tool_choice is answered by a call to that tool; a script
    breaking that contract, or naming a tool the request lacks, is a 400."""
    fake_anthropic.script(reply(text("prose")), reply(text("unused")))
    llm = anthropic_llm(fake_anthropic)
    with pytest.raises(LLMRequestRejected, match="does not call the tool"):
        llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=64, temperature=0.0, tool_choice="cat")
    with pytest.raises(LLMRequestRejected, match="not among the request's tools"):
        llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=64, temperature=0.0, tool_choice="ls")
    assert len(fake_anthropic.problems) == 2


def test_the_repeated_context_is_read_from_the_prompt_cache(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.prompt_cache = True
    fake_anthropic.script(reply(tool_use("cat", {"path": "a.py"})), reply(text("done")))
    llm = anthropic_llm(fake_anthropic)
    first = llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=64, temperature=0.0)
    (call,) = first.tool_uses
    conversation = [
        QUESTION,
        first.as_message(),
        Message.tool_results([ToolResultBlock(call.id, "x = 1")]),
    ]
    llm.complete(SYSTEM, conversation, [CAT], max_tokens=64, temperature=0.0)
    assert not fake_anthropic.problems
    marks = [
        json.dumps(body).count('"cache_control"') for body in fake_anthropic.bodies
    ]
    assert marks == [3, 3]  # tools, system, the question; within the API's four
    written, read = fake_anthropic.usages
    # the second step read the shared prefix (tools, system, question) from the cache
    assert written["cache_creation_input_tokens"] > 0 and written["cache_read_input_tokens"] == 0
    assert read["cache_read_input_tokens"] == written["cache_creation_input_tokens"]
    assert read["cache_creation_input_tokens"] == 0
    cached = written["cache_creation_input_tokens"] + read["cache_read_input_tokens"]
    assert llm.meter.report().input_tokens == 200 + cached  # cached tokens count on the budget


def test_the_deadline_stops_calls_and_caps_each_request(fake_anthropic: FakeAnthropic) -> None:
    now = [0.0]
    meter = UsageMeter(LLMBudget(), deadline_s=100.0, clock=lambda: now[0])
    fake_anthropic.script(reply(text("in time")))
    llm = anthropic_llm(fake_anthropic, meter=meter, timeout_s=120.0)
    assert ask_text(llm) == "in time"
    now[0] = 100.0
    with pytest.raises(BudgetExceeded, match="deadline"):
        ask(llm)
    assert meter.report().refused == 1 and len(fake_anthropic.requests) == 1


def test_a_unit_cap_holds_within_the_review_budget(fake_anthropic: FakeAnthropic) -> None:
    meter = UsageMeter(LLMBudget(max_calls=10, max_tokens=1_000_000))
    fake_anthropic.script(reply(text("one"), input_tokens=100, output_tokens=10))
    llm = anthropic_llm(fake_anthropic, meter=meter)
    with meter.unit(5_000):
        assert llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=64, temperature=0.0).text
        with pytest.raises(BudgetExceeded, match="allowed per function"):
            llm.complete(SYSTEM, [QUESTION], [CAT], max_tokens=4_900, temperature=0.0)
    assert len(fake_anthropic.requests) == 1
