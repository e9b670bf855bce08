"""A local fake of Anthropic's Messages API, speaking real HTTP to the real ``anthropic`` client.

``FakeAnthropic`` listens on 127.0.0.1 (a free port) and answers ``POST /v1/messages``:

- it checks the ``x-api-key`` and ``anthropic-version`` headers (401 / 400 otherwise);
- it validates the body the way the real API does in the parts we rely on: ``model``,
  ``max_tokens``, ``temperature``, ``system``, ``messages`` starting with ``user`` and
  alternating roles, content blocks of known types, ``tool_result`` blocks answering
  exactly the ``tool_use`` ids of the previous assistant turn, tools with a name and an
  object ``input_schema``, ``tool_choice`` (``auto``, ``any``, ``none`` or ``tool`` naming
  a defined tool), ``cache_control`` breakpoints (``ephemeral``, at most four, on tools,
  system blocks and message blocks) (400 ``invalid_request_error`` otherwise, also listed
  in ``problems``);
- like the real API, a request that forces a tool (``tool_choice`` ``tool`` or ``any``)
  gets an answer that calls it: a scripted answer that does not is a broken script, and
  is answered with 400 and listed in ``problems`` as well;
- with ``prompt_cache = True`` it simulates prompt caching: the prefix up to the last
  ``cache_control`` breakpoint is remembered, and a later request with the same prefix reports it as
  ``cache_read_input_tokens`` (the first as ``cache_creation_input_tokens``);
- it replays a script, one entry per valid request: a message in the exact shape of the
  API's response, or an error (429 with ``retry-after``, 529 ``overloaded_error``, 500
  ``api_error`` ...) in the API's error shape; an entry may also delay its answer;
- it records every request (headers and parsed body) in ``requests``.

Scripts are built with ``reply``/``text``/``tool_use``/``error`` or loaded from JSON
recordings in ``tests/fakes/recordings/`` (see ``load_recording``).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).parent / "recordings"
API_VERSION = "2023-06-01"
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BLOCK_TYPES = {"user": {"text", "tool_result", "image"}, "assistant": {"text", "tool_use"}}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_ids = itertools.count(1)


def _fake_id(prefix: str) -> str:
    """An id shaped like the API's (``msg_01...``, ``toolu_01...``), unique per process."""
    digest = hashlib.sha256(f"{prefix}{next(_ids)}".encode()).hexdigest()
    return f"{prefix}_01{digest[:22]}"


# ---- building scripted responses -------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: Mapping[str, Any], id: str | None = None) -> dict[str, Any]:
    """A tool_use content block; the id is generated in the API's format unless given."""
    return {"type": "tool_use", "id": id or _fake_id("toolu"), "name": name, "input": tool_input}


@dataclass(frozen=True)
class Exchange:
    """One scripted answer: HTTP status, extra headers, JSON body, optional delay."""

    status: int
    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def reply(
    *content: Mapping[str, Any],
    stop_reason: str | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    delay_s: float = 0.0,
    model: str = "",
) -> Exchange:
    """A 200 message response; ``stop_reason`` defaults to tool_use when a tool is called."""
    if stop_reason is None:
        calls_tool = any(block.get("type") == "tool_use" for block in content)
        stop_reason = "tool_use" if calls_tool else "end_turn"
    body = {
        "id": _fake_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,  # "": filled in with the requested model
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
    return Exchange(200, body, delay_s=delay_s)


def error(
    status: int,
    message: str = "",
    *,
    type: str | None = None,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Exchange:
    """An error response in the API's shape, e.g. ``error(429, retry_after=2)``."""
    kind = type or ERROR_TYPES.get(status, "api_error")
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = f"{retry_after:g}"
    body = {"type": "error", "error": {"type": kind, "message": message or kind}}
    return Exchange(status, body, all_headers)


def answer_call(verdict: str, explanation: str, **code: str) -> dict[str, Any]:
    """The analyzer's ``submit_answer`` tool call (``code``: original_code, modified_code,
    common_code)."""
    return tool_use("submit_answer", {"answer": verdict, "explanation": explanation, **code})


def analyzer_answer(verdict: str, explanation: str, **code: str) -> Exchange:
    """The analyzer's final answer: one ``submit_answer`` call."""
    return reply(answer_call(verdict, explanation, **code), input_tokens=900, output_tokens=60)


def view_answer(view: str, explanation: str) -> Exchange:
    """The agent's view of a shown difference: one ``judge_difference`` call."""
    return reply(tool_use("judge_difference", {"view": view, "explanation": explanation}),
                 input_tokens=700, output_tokens=40)


def formalizer_facts(entry: str, line: int, var: str = "x", *extra: dict[str, Any]) -> Exchange:
    """The formalizer's one round: entries, their correspondence, ``var`` mapped to itself,
    and ``extra`` facts."""
    recorded = [
        {"pred": "entry", "args": [entry, "before", line]},
        {"pred": "entry", "args": [entry, "after", line]},
        {"pred": "entryMap", "args": ["before", line, "after", line]},
        {"pred": "varMap", "args": [var, "before", line, var, "after", line]},
        *extra,
    ]
    return reply(
        tool_use("record_facts", {"facts": recorded, "complete": True}),
        input_tokens=1200,
        output_tokens=80,
    )


def load_recording(name: str | Path) -> list[Exchange]:
    """Load a JSON recording: ``{"description": ..., "exchanges": [...]}``.

    Each exchange is ``{"response": {...}}`` (status 200) or ``{"status": 429, "headers":
    {...}, "response": {...error body...}}``, optionally with ``"delay_s"``. ``name`` is a
    file in ``tests/fakes/recordings/`` (without ``.json``) or a path.
    """
    path = Path(name)
    if not path.suffix:
        path = RECORDINGS / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Exchange(
            status=int(entry.get("status", 200)),
            body=entry["response"],
            headers=dict(entry.get("headers", {})),
            delay_s=float(entry.get("delay_s", 0.0)),
        )
        for entry in data["exchanges"]
    ]


# ---- validating requests ---------------------------------------------------------------


def validate_request(body: object) -> list[str]:
    """What the real API would reject in this request body (empty when it is acceptable)."""
    if not isinstance(body, dict):
        return ["body: must be a JSON object"]
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append("max_tokens: must be an integer >= 1")
    temperature = body.get("temperature", 1.0)
    if not isinstance(temperature, int | float) or not 0.0 <= temperature <= 1.0:
        problems.append("temperature: must be a number between 0 and 1")
    system = body.get("system", "")
    if not isinstance(system, str | list):
        problems.append("system: must be a string or a list of text blocks")
    problems += _validate_tools(body.get("tools", []))
    problems += _validate_tool_choice(body.get("tool_choice"), body.get("tools", []))
    problems += _validate_messages(body.get("messages"))
    problems += _validate_cache_control(body)
    extra = set(body) - {
        "model", "max_tokens", "messages", "system", "tools", "tool_choice", "temperature",
        "top_p", "top_k", "stop_sequences", "metadata", "stream", "thinking",
    }  # fmt: skip
    problems += [f"{key}: Extra inputs are not permitted" for key in sorted(extra)]
    return problems


def _validate_tools(tools: object) -> list[str]:
    if not isinstance(tools, list):
        return ["tools: must be a list"]
    problems: list[str] = []
    names: set[str] = set()
    for i, tool in enumerate(tools):
        where = f"tools.{i}"
        if not isinstance(tool, dict):
            problems.append(f"{where}: must be an object")
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problems.append(f"{where}.name: must match {TOOL_NAME.pattern}")
        elif name in names:
            problems.append(f"{where}.name: tool names must be unique ({name!r})")
        else:
            names.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(f"{where}.input_schema: must be a JSON Schema with type 'object'")
        if "description" in tool and not isinstance(tool["description"], str):
            problems.append(f"{where}.description: must be a string")
    return problems


def _validate_tool_choice(choice: object, tools: object) -> list[str]:
    if choice is None:
        return []
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return ["tool_choice: type must be one of 'auto', 'any', 'tool', 'none'"]
    listed = tools if isinstance(tools, list) else []
    names = {t.get("name") for t in listed if isinstance(t, dict)}
    if choice["type"] == "tool":
        if not isinstance(choice.get("name"), str):
            return ["tool_choice.name: Field required"]
        if choice["name"] not in names:
            return [f"tool_choice: tool {choice['name']!r} is not among the request's tools"]
    if choice["type"] in ("any", "tool") and not names:
        return ["tool_choice: forcing a tool requires tools"]
    return []


def _cache_marks(body: dict[str, Any]) -> list[tuple[str, object]]:
    """Every ``cache_control`` value in the request, with where it is."""
    marks: list[tuple[str, object]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            marks.append((f"tools.{i}", tool["cache_control"]))
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, dict) and "cache_control" in block:
                marks.append((f"system.{i}", block["cache_control"]))
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and "cache_control" in block:
                marks.append((f"messages.{i}.content.{j}", block["cache_control"]))
    return marks


def _validate_cache_control(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    marks = _cache_marks(body)
    for where, value in marks:
        ok = isinstance(value, dict) and value.get("type") == "ephemeral"
        if not ok or set(value) - {"type", "ttl"} or value.get("ttl", "5m") not in ("5m", "1h"):
            problems.append(f"{where}.cache_control: must be {{'type': 'ephemeral'}}")
    if len(marks) > 4:
        problems.append(
            f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."
        )
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                problems.append(f"system.{i}: must be a text block")
    return problems


def _cached_prefix(body: dict[str, Any]) -> str:
    """The canonical text of the request up to its last cache breakpoint ("" if none)."""
    parts: list[object] = []
    prefix = ""
    for tool in body.get("tools") or []:
        parts.append(tool)
        if isinstance(tool, dict) and "cache_control" in tool:
            prefix = json.dumps(parts, sort_keys=True)
    system = body.get("system")
    for block in system if isinstance(system, list) else [system]:
        parts.append(block)
        if isinstance(block, dict) and "cache_control" in block:
            prefix = json.dumps(parts, sort_keys=True)
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [content]:
            parts.append(block)
            if isinstance(block, dict) and "cache_control" in block:
                prefix = json.dumps(parts, sort_keys=True)
    return prefix


def _complies(choice: object, answer: Mapping[str, Any]) -> bool:
    """Whether a scripted answer obeys a forcing ``tool_choice``, as the real API's would."""
    if not isinstance(choice, dict) or choice.get("type") not in ("tool", "any"):
        return True
    if answer.get("stop_reason") in ("max_tokens", "refusal"):
        return True  # the real API may still cut an answer short or refuse
    uses = [b for b in answer.get("content", []) if b.get("type") == "tool_use"]
    if choice["type"] == "any":
        return bool(uses)
    return any(b.get("name") == choice.get("name") for b in uses)


def _validate_messages(messages: object) -> list[str]:
    if not isinstance(messages, list) or not messages:
        return ["messages: at least one message is required"]
    problems: list[str] = []
    pending_tool_ids: set[str] = set()  # tool_use ids of the previous assistant turn
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict) or message.get("role") not in BLOCK_TYPES:
            problems.append(f"{where}.role: must be 'user' or 'assistant'")
            return problems
        role = message["role"]
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            problems.append(f"{where}: roles must alternate starting with 'user'")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            problems.append(f"{where}.content: must be a string or a non-empty list of blocks")
            continue
        answered: set[str] = set()
        used: set[str] = set()
        for j, block in enumerate(blocks):
            bwhere = f"{where}.content.{j}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in BLOCK_TYPES[role]:
                problems.append(f"{bwhere}: block type {kind!r} is not allowed in a {role} turn")
                continue
            if kind == "text" and not isinstance(block.get("text"), str):
                problems.append(f"{bwhere}.text: must be a string")
            elif kind == "tool_use":
                ok = isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
                if not ok or not isinstance(block.get("input"), dict):
                    problems.append(f"{bwhere}: tool_use needs id, name and an object input")
                else:
                    used.add(block["id"])
            elif kind == "tool_result":
                tool_id = block.get("tool_use_id")
                if tool_id not in pending_tool_ids:
                    problems.append(
                        f"{bwhere}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{tool_id}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message."
                    )
                answered.add(str(tool_id))
        if role == "user" and pending_tool_ids - answered:
            missing = ", ".join(sorted(pending_tool_ids - answered))
            problems.append(
                f"{where}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {missing}"
            )
        pending_tool_ids = used if role == "assistant" else set()
    return problems


# ---- the server -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """A request the fake received: path, headers (lower-case names) and parsed body."""

    path: str
    headers: Mapping[str, str]
    body: Any
    status: int  # what the fake answered


class FakeAnthropic:
    """The fake Messages API server. Use as a context manager or ``start``/``stop``."""

    def __init__(self, api_key: str = "sk-ant-fake-0123456789") -> None:
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []  # validation failures answered with 400
        self._script: list[Exchange] = []
        self.prompt_cache = False  # simulate prompt caching in the usage reported
        self.usages: list[dict[str, Any]] = []  # the usage of each 200 answer, as sent
        self._cached: set[str] = set()  # prompt-cache prefixes seen
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake Anthropic server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *exchanges: Exchange | Sequence[Exchange]) -> FakeAnthropic:
        """Queue answers (single exchanges or lists of them, e.g. a loaded recording)."""
        with self._lock:
            for item in exchanges:
                self._script.extend([item] if isinstance(item, Exchange) else item)
        return self

    @property
    def remaining(self) -> int:
        """Scripted answers not yet served."""
        with self._lock:
            return len(self._script)

    @property
    def bodies(self) -> list[Any]:
        """Parsed bodies of every request received, in order."""
        return [r.body for r in self.requests]

    def start(self) -> FakeAnthropic:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _usage(self, body: dict[str, Any], usage: object) -> dict[str, Any]:
        """The scripted usage, with the simulated prompt cache's reads and writes added."""
        out = dict(usage) if isinstance(usage, Mapping) else {}
        prefix = _cached_prefix(body) if self.prompt_cache else ""
        if prefix and "cache_read_input_tokens" not in out:
            tokens = max(1, len(prefix) // 4)
            seen = prefix in self._cached
            out["cache_read_input_tokens"] = tokens if seen else 0
            out["cache_creation_input_tokens"] = 0 if seen else tokens
            self._cached.add(prefix)
        self.usages.append(out)
        return out

    def _answer(self, path: str, headers: Mapping[str, str], raw: bytes) -> Exchange:
        """Decide the answer to one request and record it (runs on a server thread)."""
        if path != "/v1/messages":
            return error(404, f"Not found: {path}")
        problems: list[str] = []
        if headers.get("x-api-key") != self.api_key:
            answer = error(401, "invalid x-api-key")
        elif not headers.get("anthropic-version"):
            answer = error(400, "anthropic-version: header is required")
        else:
            try:
                body = json.loads(raw)
            except ValueError as exc:
                body, problems = None, [f"body: invalid JSON ({exc})"]
            else:
                problems = validate_request(body)
            if problems:
                answer = error(400, "; ".join(problems))
            else:
                with self._lock:
                    if self._script:
                        answer = self._script.pop(0)
                    else:
                        problems = ["fake server: no scripted answer left for this request"]
                        answer = error(400, problems[0])
                if answer.status == 200 and not _complies(body.get("tool_choice"), answer.body):
                    problems = [
                        "fake server: the scripted answer does not call the tool that "
                        f"tool_choice {body.get('tool_choice')} forces"
                    ]
                    answer = error(400, problems[0])
                if answer.status == 200:
                    answer = Exchange(
                        200,
                        {
                            **answer.body,
                            "model": answer.body.get("model") or body["model"],
                            "usage": self._usage(body, answer.body.get("usage")),
                        },
                        answer.headers,
                        answer.delay_s,
                    )
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        with self._lock:
            self.requests.append(RecordedRequest(path, dict(headers), parsed, answer.status))
            self.problems.extend(problems)
        return answer


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = fake._answer(self.path.split("?")[0], headers, raw)
            if answer.delay_s:
                time.sleep(answer.delay_s)
            payload = json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("request-id", _fake_id("req"))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            # A client that timed out has hung up; there is nobody left to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet; requests are recorded in fake.requests

    return Handler


@contextmanager
def running_fake_anthropic(api_key: str = "sk-ant-fake-0123456789") -> Iterator[FakeAnthropic]:
    """Start a fake server for the duration of a ``with`` block."""
    with FakeAnthropic(api_key) as fake:
        yield fake
