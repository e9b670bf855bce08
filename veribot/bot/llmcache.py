"""A persistent LLM response cache in SQLite, which doubles as record/replay.

Entries are keyed by a SHA-256 over the canonical JSON of (model, temperature, max_tokens,
system prompt, messages, tools, tool_choice): seed 001's ``llm_cache``. ``max_tokens`` is in
the key because an answer cut short by a small limit is not the answer to a larger one.

The key also holds the exact model version the API last answered with for the requested
name (a response's ``model``: an alias such as ``claude-sonnet-4-5`` names a dated
snapshot): when the API starts answering with another version, answers of the old one are
no longer served. Entries expire after ``ttl_s`` (replay ignores age: a recording is
meant to last), so an alias that moved is noticed within that time. Only whole answers are
stored: one cut off at ``max_tokens``, refused, or paused is never cached, nor (in
``cache`` mode) one that calls a tool with an input its schema rejects. Modes:

- ``cache``  (read-write): answer from the cache, ask the model on a miss and store;
- ``record``: always ask the model and store (overwriting), building a recording;
- ``replay``: answer only from the recording; a miss raises ``ReplayMiss`` naming the
  request. No model, no key, no network needed.

The command-line form ``--llm replay:PATH | record:PATH | cache:PATH | live | off`` is
parsed by ``from_spec``. SQLite runs in WAL mode with a busy timeout, so several workers
can share one file; each operation opens its own connection.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from veribot.bot.config import private_file
from veribot.checks.agent.llm import (
    LLM,
    Completion,
    LLMError,
    LLMUnavailable,
    Message,
    ReplayMiss,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    UsageMeter,
    completion_from_api,
    request_to_api,
)
from veribot.checks.agent.tools import validate

log = logging.getLogger(__name__)

KEY_VERSION = 2  # bump when the key's canonical form changes
DEFAULT_TTL_S = 7 * 24 * 3600.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_answers (
    key      TEXT PRIMARY KEY,
    model    TEXT NOT NULL,  -- the model requested
    version  TEXT NOT NULL,  -- the exact model that answered (the response's model)
    request  TEXT NOT NULL,  -- canonical request JSON, for people and for miss messages
    response TEXT NOT NULL,  -- the completion in Messages API shape
    created  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_versions (
    model    TEXT PRIMARY KEY,  -- the model requested
    version  TEXT NOT NULL,     -- the exact model the API last answered with
    seen     REAL NOT NULL
)
"""


class Mode(enum.Enum):
    """How the cache treats the model."""

    CACHE = "cache"
    RECORD = "record"
    REPLAY = "replay"


def cache_key(request: dict[str, object], version: str = "") -> str:
    """The stable hash of a canonical request (see ``veribot.checks.agent.llm.request_to_api``)
    and the exact model ``version`` that answers the requested model."""
    canonical = json.dumps(
        {"v": KEY_VERSION, "version": version, **request},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedLLM:
    """An ``LLM`` answering from a SQLite file, asking ``inner`` when the mode allows.

    ``model`` defaults to ``inner.model``; replay (``inner`` is ``None``) needs it given,
    since it is part of the key. Cache hits are counted on ``meter`` and cost nothing; real
    calls are metered by ``inner``. ``meter`` defaults to ``inner.meter`` when it has one, so
    one report covers both.
    """

    def __init__(
        self,
        inner: LLM | None,
        path: str | Path,
        mode: Mode = Mode.CACHE,
        *,
        model: str | None = None,
        meter: UsageMeter | None = None,
        ttl_s: float | None = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if inner is None and mode is not Mode.REPLAY:
            raise ValueError(f"{mode.value} mode needs a model to ask; only replay runs alone")
        if model is None:
            if inner is None:
                raise ValueError("replay needs the model name: it is part of every cache key")
            model = inner.model
        self.inner = inner
        self.path = Path(path)
        self.mode = mode
        self.ttl_s = None if mode is Mode.REPLAY else ttl_s
        self._clock = clock
        self._model = model
        if meter is None:
            inner_meter = getattr(inner, "meter", None)
            meter = inner_meter if isinstance(inner_meter, UsageMeter) else UsageMeter()
        self.meter = meter
        if mode is Mode.REPLAY and not self.path.is_file():
            raise LLMUnavailable(f"replay: recording {self.path} does not exist")
        if mode is not Mode.REPLAY:
            private_file(self.path)  # other tenants' code and the model's answers
        if mode is not Mode.REPLAY:
            self._create()

    def _create(self) -> None:
        # Switching to WAL takes an exclusive lock that SQLite's busy handler does not wait
        # for, so workers opening the same new file at once retry briefly.
        for attempt in range(100):
            try:
                with self._connect() as db:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.executescript(_SCHEMA)
                return
            except LLMError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.02)

    @property
    def model(self) -> str:
        return self._model

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
        """Answer from the cache or, as the mode allows, from ``inner`` (then store)."""
        request = request_to_api(
            self._model,
            system,
            messages,
            tools,
            max_tokens=max_tokens,
            temperature=temperature,
            tool_choice=tool_choice,
        )
        if self.mode is not Mode.RECORD:
            key = cache_key(request, self._version())
            cached = self._lookup(key)
            if cached is not None:
                self.meter.record_cache_hit()
                log.debug("LLM cache hit %s", key[:12])
                return cached
            if self.mode is Mode.REPLAY:
                raise ReplayMiss(self._miss_message(key, request))
        assert self.inner is not None  # guaranteed by the constructor for these modes
        completion = self.inner.complete(
            system,
            messages,
            tools,
            max_tokens=max_tokens,
            temperature=temperature,
            tool_choice=tool_choice,
        )
        # Asked again, the model may answer well: a cache does not keep a bad answer for
        # days (a recording keeps it, to replay the run as it went).
        invalid = _invalid_tool_use(completion, tools) if self.mode is Mode.CACHE else ""
        if completion.final and not invalid:
            self._store(request, completion)
        elif invalid:
            log.info("LLM answer not cached: %s", invalid)
        else:
            log.info("LLM answer not cached: stop_reason %s", completion.stop_reason)
        return completion

    def _version(self) -> str:
        """The exact model the API last answered with for the requested one ("" unknown)."""
        with self._connect() as db:
            try:
                row = db.execute(
                    "SELECT version FROM llm_versions WHERE model = ?", (self._model,)
                ).fetchone()
            except sqlite3.OperationalError as exc:
                if self.mode is Mode.REPLAY and "no such table" in str(exc):
                    raise LLMUnavailable(
                        f"replay: {self.path} is not an LLM recording of this veribot version"
                    ) from exc
                raise
        return "" if row is None else str(row[0])

    def __len__(self) -> int:
        with self._connect() as db:
            row = db.execute("SELECT count(*) FROM llm_answers").fetchone()
        return int(row[0])

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            with closing(sqlite3.connect(self.path, timeout=30.0)) as db, db:
                db.execute("PRAGMA busy_timeout=30000")
                yield db
        except sqlite3.Error as exc:
            raise LLMError(f"LLM cache {self.path}: {exc}") from exc

    def _lookup(self, key: str) -> Completion | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT response, created FROM llm_answers WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        if self.ttl_s is not None and float(row[1]) + self.ttl_s < self._clock():
            log.debug("LLM cache entry %s expired", key[:12])
            return None
        return completion_from_api(json.loads(row[0]))

    def _store(self, request: dict[str, object], completion: Completion) -> None:
        """Store under the exact version that answered, and remember it for the model."""
        version = completion.model or self._model
        now = self._clock()
        with self._connect() as db:
            old = db.execute(
                "SELECT version FROM llm_versions WHERE model = ?", (self._model,)
            ).fetchone()
            if old is not None and old[0] != version:
                log.info("model %s now answers as %s (was %s)", self._model, version, old[0])
            db.execute(
                "INSERT OR REPLACE INTO llm_versions (model, version, seen) VALUES (?, ?, ?)",
                (self._model, version, now),
            )
            db.execute(
                "INSERT OR REPLACE INTO llm_answers "
                "(key, model, version, request, response, created) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    cache_key(request, version),
                    self._model,
                    version,
                    json.dumps(request, sort_keys=True, ensure_ascii=False),
                    json.dumps(completion.to_api(), sort_keys=True, ensure_ascii=False),
                    now,
                ),
            )

    def _miss_message(self, key: str, request: dict[str, object]) -> str:
        with self._connect() as db:
            total, same_model = db.execute(
                "SELECT count(*), coalesce(sum(model = ?), 0) FROM llm_answers", (self._model,)
            ).fetchone()
        messages = request["messages"]
        turns = len(messages) if isinstance(messages, list) else 0
        return (
            f"replay: no recorded answer in {self.path} for this request (key {key[:12]}): "
            f"model {self._model!r}, temperature {request['temperature']}, "
            f"max_tokens {request['max_tokens']}, {turns} message(s), last one: "
            f"{_describe_last(request)}. The recording holds {total} answer(s), "
            f"{same_model} for this model; re-record with --llm record:{self.path}"
        )


def _invalid_tool_use(completion: Completion, tools: Sequence[ToolSpec]) -> str:
    """What makes a tool call of the answer invalid (an unknown tool, or an input its
    schema rejects), or ""."""
    schemas = {t.name: t.input_schema for t in tools}
    for block in completion.content:
        if isinstance(block, ToolUseBlock):
            if block.name not in schemas:
                return f"a call of the unknown tool {block.name!r}"
            problems = validate(schemas[block.name], dict(block.input))
            if problems:
                return f"an input for {block.name} its schema rejects ({problems[0]})"
    return ""


def _describe_last(request: dict[str, object]) -> str:
    """A short, readable summary of the request's last message."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return "(none)"
    last = messages[-1]
    content = last.get("content", []) if isinstance(last, dict) else []
    parts: list[str] = []
    for block in completion_from_api({"content": content}).content:
        if isinstance(block, TextBlock):
            snippet = " ".join(block.text.split())
            parts.append(repr(snippet[:120] + ("..." if len(snippet) > 120 else "")))
        elif isinstance(block, ToolResultBlock):
            parts.append(f"tool_result for {block.tool_use_id}")
        else:
            parts.append(f"tool_use {block.name}")
    return ", ".join(parts) or "(empty)"


def from_spec(
    spec: str,
    inner_factory: Callable[[], LLM],
    *,
    model: str,
    meter: UsageMeter | None = None,
) -> LLM | None:
    """Build the LLM for a ``--llm`` value; ``None`` for ``off`` (the agent is not asked).

    ``replay:PATH`` never calls ``inner_factory``, so it needs no API key. ``live`` uses
    the model with no cache. Raises ``ValueError`` for a malformed spec.
    """
    spec = spec.strip()
    if spec == "off":
        return None
    if spec == "live":
        return inner_factory()
    mode_name, sep, path = spec.partition(":")
    modes = {m.value: m for m in Mode}
    if not sep or mode_name not in modes or not path:
        raise ValueError(
            f"--llm {spec!r}: expected one of replay:PATH, record:PATH, cache:PATH, live, off"
        )
    mode = modes[mode_name]
    inner = None if mode is Mode.REPLAY else inner_factory()
    return CachedLLM(inner, path, mode, model=model, meter=meter)
