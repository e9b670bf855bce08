"""A fake GitHub REST server, spoken to over HTTP by the real PyGithub client.

It keeps the state the bot reads and writes (pull requests and their files, check runs,
reviews, issue comments, reactions, collaborator permissions), records every call, and
validates every request against GitHub's published OpenAPI description (the request-side
subset committed in ``openapi/``). A request GitHub would reject is answered 422 and recorded
as a violation; :meth:`FakeGitHub.assert_no_violations` fails the test on any. Besides the
schema, it enforces the rules GitHub applies beyond it: each review comment must sit on a
line of the diff of the commit it is posted on; a read-only token (:meth:`FakeGitHub.read_only`)
gets 403 on every write; a comment body holds at most 65,536
characters; a check run's ``output.summary`` and ``output.text`` at most 65,535 bytes (of
UTF-8, whatever GitHub's message says), an annotation's title 255 characters and its
message 64 KiB.

Use it as a context manager::

    with FakeGitHub() as fake:
        fake.add_pull("octo/demo", 7, head_sha=..., base_sha=..., files=[...])
        gh = Github(base_url=fake.base_url, auth=Auth.Token("t"), retry=None)
        ...
        fake.assert_no_violations()
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import referencing
import referencing.jsonschema
import unidiff
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

SPEC_PATH = Path(__file__).parent / "openapi" / "api.github.com.subset.json"
_SPEC_URI = "urn:veribot:github-openapi"
COMMENT_BODY_MAX_CHARS = 65_536
CHECK_OUTPUT_MAX_BYTES = 65_535
ANNOTATION_TITLE_MAX_CHARS = 255
ANNOTATION_MESSAGE_MAX_BYTES = 65_536


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Calls are recorded in :attr:`FakeGitHub.calls`; keep test output clean."""


@dataclass(frozen=True)
class Call:
    """One request the fake received."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int
    operation: str | None
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names


@dataclass(frozen=True)
class PullFile:
    """One changed file of a pull request, with its unified-diff hunks as GitHub serves them."""

    filename: str
    patch: str
    status: str = "modified"


@dataclass
class Pull:
    """A pull request the fake serves."""

    full_name: str
    number: int
    head_sha: str
    base_sha: str
    files: list[PullFile]
    author: str = "octocat"
    draft: bool = False
    title: str = "A change"
    body: str = ""
    # The pull request's files as of each head it had (its diff is commit-scoped).
    files_at: dict[str, list[PullFile]] = field(default_factory=dict)

    def files_of(self, sha: str) -> list[PullFile] | None:
        """The files of the pull request when ``sha`` was its head (None: never was)."""
        if sha == self.head_sha:
            return self.files
        return self.files_at.get(sha)


@dataclass
class _Injected:
    method: str
    path_pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    message: str
    remaining: int
    after: bool = False  # do the request, then answer with the error (the answer is lost)
    when: Callable[[Any], bool] | None = None  # only requests whose JSON body this accepts
    seconds: float | None = None  # an outage: every match for this long after the first
    ends_at: float | None = None  # set at the first match of an outage

    def matches(self, method: str, path: str, body: Any, now: float) -> bool:
        """Whether this injection answers the request (counting it if so)."""
        if self.method != method or not self.path_pattern.search(path):
            return False
        if self.when is not None and not self.when(body):
            return False
        if self.seconds is not None:
            if self.ends_at is None:
                self.ends_at = now + self.seconds
            return now < self.ends_at
        if not self.remaining:
            return False
        self.remaining -= 1
        return True


@dataclass
class _Operation:
    method: str
    template: str
    regex: re.Pattern[str]
    operation_id: str
    path_params: dict[str, dict[str, Any]]
    query_params: dict[str, tuple[dict[str, Any], bool]]
    body_schema: dict[str, Any] | None
    body_required: bool


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _nullable_to_jsonschema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` is not JSON Schema; rewrite it as a null type."""
    if isinstance(node, list):
        return [_nullable_to_jsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _nullable_to_jsonschema(value) for key, value in node.items()}
    if out.pop("nullable", False) is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


class OpenApiValidator:
    """Match requests to the subset's operations and validate their parameters and bodies."""

    def __init__(self, spec_path: Path = SPEC_PATH) -> None:
        self.spec: dict[str, Any] = _nullable_to_jsonschema(
            json.loads(spec_path.read_text(encoding="utf-8"))
        )
        resource = referencing.Resource.from_contents(
            self.spec, default_specification=referencing.jsonschema.DRAFT4
        )
        self._registry: referencing.Registry[Any] = referencing.Registry().with_resource(
            _SPEC_URI, resource
        )
        self.operations: list[_Operation] = []
        for template, methods in self.spec["paths"].items():
            for method, op in methods.items():
                self.operations.append(self._operation(method.upper(), template, op))
        # Literal segments beat parameters: try templates with fewer parameters first.
        self.operations.sort(key=lambda o: o.template.count("{"))

    def _parameter(self, node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            resolved: dict[str, Any] = self.spec["components"]["parameters"][name]
            return resolved
        return node

    def _operation(self, method: str, template: str, op: dict[str, Any]) -> _Operation:
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
        path_params: dict[str, dict[str, Any]] = {}
        query_params: dict[str, tuple[dict[str, Any], bool]] = {}
        for raw in op.get("parameters", []):
            param = self._parameter(raw)
            if param["in"] == "path":
                path_params[param["name"]] = param["schema"]
            elif param["in"] == "query":
                query_params[param["name"]] = (param["schema"], bool(param.get("required")))
        body = op.get("requestBody")
        body_schema = None
        if body is not None:
            body_schema = body["content"]["application/json"]["schema"]
        return _Operation(
            method=method,
            template=template,
            regex=re.compile(f"^{pattern}$"),
            operation_id=op["operationId"],
            path_params=path_params,
            query_params=query_params,
            body_schema=body_schema,
            body_required=bool(body and body.get("required")),
        )

    def match(self, method: str, path: str) -> tuple[_Operation, dict[str, str]] | None:
        for op in self.operations:
            found = op.regex.match(path)
            if op.method == method and found:
                return op, found.groupdict()
        return None

    def _errors(self, schema: dict[str, Any], instance: Any) -> list[str]:
        validator = jsonschema.Draft4Validator(
            schema,
            registry=self._registry,
            format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER,
        )
        messages = []
        for error in validator.iter_errors(instance):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            message = error.message if len(error.message) < 300 else f"fails {error.validator!r}"
            messages.append(f"{where}: {message}")
        return messages

    @staticmethod
    def _coerce(schema: dict[str, Any], raw: str) -> Any:
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "integer" in kinds and re.fullmatch(r"-?\d+", raw):
            return int(raw)
        if "boolean" in kinds and raw in ("true", "false"):
            return raw == "true"
        return raw

    def validate(
        self, op: _Operation, path_values: Mapping[str, str], query: Mapping[str, str], body: Any
    ) -> list[str]:
        """Every way the request breaks the operation's description (empty: it is valid)."""
        problems: list[str] = []
        for name, schema in op.path_params.items():
            value = self._coerce(schema, path_values[name])
            problems += [f"path {name} {m}" for m in self._errors(schema, value)]
        for name, raw in query.items():
            if name not in op.query_params:
                problems.append(f"query parameter {name!r} is not accepted")
                continue
            schema = op.query_params[name][0]
            problems += [
                f"query {name} {m}" for m in self._errors(schema, self._coerce(schema, raw))
            ]
        for name, (_, required) in op.query_params.items():
            if required and name not in query:
                problems.append(f"query parameter {name!r} is required")
        if op.body_schema is None:
            if body is not None and op.method in ("GET", "DELETE"):
                problems.append("this operation takes no body")
        elif body is None:
            if op.body_required:
                problems.append("a JSON body is required")
        else:
            reference = {
                "$ref": f"{_SPEC_URI}#/paths/{op.template.replace('/', '~1')}"
                f"/{op.method.lower()}/requestBody/content/application~1json/schema"
            }
            problems += [f"body {m}" for m in self._errors(reference, body)]
        return problems


def _beyond_limits(operation: str, body: Any) -> str | None:
    """GitHub's 422 message for a text beyond its size limits, or None."""
    if not isinstance(body, dict):
        return None
    bodies: list[Any] = []
    if operation in (
        "issues/create-comment",
        "issues/update-comment",
        "pulls/create-reply-for-review-comment",
        "pulls/create-review",
    ):
        bodies.append(body.get("body"))
        bodies += [c.get("body") for c in body.get("comments", []) if isinstance(c, dict)]
    for text in bodies:
        if isinstance(text, str) and len(text) > COMMENT_BODY_MAX_CHARS:
            return f"Body is too long (maximum is {COMMENT_BODY_MAX_CHARS} characters)"
    output = body.get("output") if operation in ("checks/create", "checks/update") else None
    if not isinstance(output, dict):
        return None
    for key in ("summary", "text"):
        text = output.get(key)
        if isinstance(text, str) and len(text.encode("utf-8")) > CHECK_OUTPUT_MAX_BYTES:
            size = len(text.encode("utf-8"))
            return (
                f"Invalid request.\n\nOnly {CHECK_OUTPUT_MAX_BYTES} characters are allowed; "
                f"{size} were supplied."
            )
    for note in output.get("annotations", []):
        title = note.get("title") if isinstance(note, dict) else None
        if isinstance(title, str) and len(title) > ANNOTATION_TITLE_MAX_CHARS:
            return f"annotation title is longer than {ANNOTATION_TITLE_MAX_CHARS} characters"
        message = note.get("message") if isinstance(note, dict) else None
        if isinstance(message, str) and len(message.encode()) > ANNOTATION_MESSAGE_MAX_BYTES:
            return "annotation message is longer than 64 KB"
    return None


def diff_lines(patch: str) -> set[int]:
    """Lines of the new file that a GitHub review comment may anchor to (side RIGHT)."""
    text = f"--- a/f\n+++ b/f\n{patch}\n"
    lines: set[int] = set()
    for patched in unidiff.PatchSet(text):
        for hunk in patched:
            for line in hunk:
                if line.target_line_no is not None:
                    lines.add(line.target_line_no)
    return lines


def pull_files_from_git(repo_dir: Path, base: str, head: str) -> list[PullFile]:
    """The files of a pull request from ``base`` to ``head`` in a real git repository."""
    diff = subprocess.run(
        ["git", "-C", str(repo_dir), "diff", "--no-color", "--no-renames", base, head],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    files = []
    for patched in unidiff.PatchSet(diff):
        hunks = "".join(str(hunk) for hunk in patched).rstrip("\n")
        status = (
            "added"
            if patched.is_added_file
            else "removed"
            if patched.is_removed_file
            else "modified"
        )
        files.append(PullFile(filename=patched.path, patch=hunks, status=status))
    return files


@dataclass
class _State:
    pulls: dict[tuple[str, int], Pull] = field(default_factory=dict)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    annotations: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    reviews: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    issue_comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    review_comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    reactions: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[tuple[str, str], str] = field(default_factory=dict)


class _Reject(Exception):
    """An error answer; a violation unless it is a plain 404 for something that is not there."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# GitHub's answer to a write with a read-only token (a fork pull request's GITHUB_TOKEN).
READ_ONLY_ANSWER = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest",
    "status": "403",
}


class FakeGitHub:
    """The fake server; see the module docstring."""

    def __init__(
        self,
        *,
        bot_login: str = "veribot[bot]",
        writes_per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``writes_per_minute``: GitHub's secondary rate limit on content-creating requests
        (POST, PATCH, PUT, DELETE); beyond it a write gets 403 with ``retry-after``, counted
        in :attr:`secondary_limited` (``clock`` measures the minute)."""
        self.bot_login = bot_login
        self.writes_per_minute = writes_per_minute
        self.clock = clock
        self.secondary_limited = 0
        self._writes: list[float] = []
        self.validator = OpenApiValidator()
        self.state = _State()
        self.calls: list[Call] = []
        self.violations: list[str] = []
        self._ids = itertools.count(1001)
        self._lock = threading.Lock()
        self._injected: list[_Injected] = []
        self.read_only_tokens: set[str] = set()
        self._hooks: list[tuple[str, re.Pattern[str], Callable[[], None]]] = []
        self.clone_urls: dict[str, str] = {}
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self._server = make_server(
            "127.0.0.1", 0, self._wsgi, threaded=True, request_handler=_QuietHandler
        )
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

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        return f"http://127.0.0.1:{self._server.server_port}"

    # -- test-facing helpers ---------------------------------------------------------------

    def add_pull(
        self,
        full_name: str,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        files: list[PullFile],
        author: str = "octocat",
        draft: bool = False,
    ) -> Pull:
        pull = Pull(full_name, number, head_sha, base_sha, list(files), author, draft)
        pull.files_at[head_sha] = pull.files
        self.state.pulls[(full_name, number)] = pull
        return pull

    def push(self, full_name: str, number: int, *, head_sha: str, files: list[PullFile]) -> None:
        """A new head for the pull request (a push, or a force-push), with its files."""
        with self._lock:
            pull = self.state.pulls[(full_name, number)]
            pull.head_sha, pull.files = head_sha, list(files)
            pull.files_at[head_sha] = pull.files

    def set_clone_url(self, full_name: str, url: str) -> None:
        """Where the repository's git data is fetched from (a local repository's path, say)."""
        self.clone_urls[full_name] = url

    def set_permission(self, full_name: str, login: str, permission: str) -> None:
        self.state.permissions[(full_name, login)] = permission

    def make_read_only(self, token: str) -> None:
        """Requests with ``token`` may read but not write, as a fork pull request's
        ``GITHUB_TOKEN``: every write is answered 403, as GitHub does."""
        self.read_only_tokens.add(token)

    def _read_only(self, request: Request) -> bool:
        credentials = request.headers.get("Authorization", "").split()
        return bool(credentials) and credentials[-1] in self.read_only_tokens

    def inject(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        headers: Mapping[str, str] | None = None,
        message: str = "injected failure",
        times: int = 1,
        after: bool = False,
        when: Callable[[Any], bool] | None = None,
        seconds: float | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` (after validation).

        ``after``: the request is carried out first, and only its answer is the error, as
        when GitHub times out after writing (a 502 on a POST that did create the comment).
        ``when``: only requests whose JSON body it accepts match. ``seconds``: an outage, not
        a count: every matching request is answered with ``status`` for that long after the
        first one.
        """
        self._injected.append(
            _Injected(
                method,
                re.compile(path_pattern),
                status,
                dict(headers or {}),
                message,
                times,
                after,
                when,
                seconds,
            )
        )

    def outage_over(self) -> bool:
        """Whether every timed outage injected has started and ended."""
        now = time.monotonic()
        return all(
            i.ends_at is not None and now >= i.ends_at
            for i in self._injected
            if i.seconds is not None
        )

    def read_only(self, token: str) -> None:
        """Make ``token`` read-only, as a fork pull request's ``GITHUB_TOKEN`` or an App
        without write permissions is: every write with it is answered 403."""
        self.make_read_only(token)

    def before(self, method: str, path_pattern: str, action: Callable[[], None]) -> None:
        """Run ``action`` once, just before the next matching request is answered (a push
        racing with the bot, say)."""
        self._hooks.append((method, re.compile(path_pattern), action))

    def calls_to(self, method: str, pattern: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and re.search(pattern, c.path)]

    def check_runs(self) -> list[dict[str, Any]]:
        return list(self.state.check_runs.values())

    def annotations(self, check_run_id: int) -> list[dict[str, Any]]:
        return list(self.state.annotations.get(check_run_id, []))

    def reviews(self, full_name: str, number: int) -> list[dict[str, Any]]:
        return list(self.state.reviews.get((full_name, number), []))

    def issue_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        url = f"{self.base_url}/repos/{full_name}/issues/{number}"
        return [c for c in self.state.issue_comments.values() if c["issue_url"] == url]

    def reactions(self) -> list[dict[str, Any]]:
        return list(self.state.reactions)

    def assert_no_violations(self) -> None:
        assert not self.violations, "requests GitHub would reject:\n" + "\n".join(self.violations)

    # -- HTTP ------------------------------------------------------------------------------

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        response = self._handle(request)
        return response(environ, start_response)

    def _json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> Response:
        return Response(
            json.dumps(payload),
            status=status,
            headers=dict(headers or {}),
            content_type="application/json; charset=utf-8",
        )

    def _handle(self, request: Request) -> Response:
        method, path = request.method, request.path
        sent = {name.lower(): value for name, value in request.headers.items()}
        query = {k: v for k, v in request.args.items()}
        body: Any = None
        raw = request.get_data()
        for hook in list(self._hooks):
            if hook[0] == method and hook[1].search(path):
                self._hooks.remove(hook)
                hook[2]()
        with self._lock:
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._record_reject(
                        sent, method, path, query, raw, None, 400, "invalid JSON"
                    )
            matched = self.validator.match(method, path)
            if matched is None:
                return self._record_reject(
                    sent,
                    method,
                    path,
                    query,
                    body,
                    None,
                    404,
                    f"no such operation: {method} {path}",
                )
            op, params = matched
            problems = self.validator.validate(op, params, query, body)
            if problems:
                return self._record_reject(
                    sent, method, path, query, body, op.operation_id, 422, "; ".join(problems)
                )
            if method not in ("GET", "HEAD") and self._read_only(request):
                self.calls.append(Call(method, path, query, body, 403, op.operation_id, sent))
                return self._json(403, READ_ONLY_ANSWER)
            if self._secondary_limit(method):
                self.calls.append(Call(method, path, query, body, 403, op.operation_id, sent))
                return self._json(
                    403,
                    {
                        "message": "You have exceeded a secondary rate limit. Please wait a "
                        "few minutes before you try again.",
                        "documentation_url": "https://docs.github.com/rest",
                    },
                    {"retry-after": "60"},
                )
            limit = _beyond_limits(op.operation_id, body)
            if limit is not None:
                return self._record_reject(
                    sent, method, path, query, body, op.operation_id, 422, limit
                )
            now = time.monotonic()
            for injected in self._injected:
                if injected.matches(method, path, body, now):
                    if injected.after:
                        self._dispatch(op.operation_id, params, query, body)
                    self.calls.append(
                        Call(method, path, query, body, injected.status, op.operation_id, sent)
                    )
                    return self._json(
                        injected.status, {"message": injected.message}, injected.headers
                    )
            try:
                status, payload = self._dispatch(op.operation_id, params, query, body)
            except _Reject as reject:
                if reject.status == 404:
                    self.calls.append(Call(method, path, query, body, 404, op.operation_id, sent))
                    return self._json(404, {"message": reject.message})
                return self._record_reject(
                    sent, method, path, query, body, op.operation_id, reject.status, reject.message
                )
            self.calls.append(Call(method, path, query, body, status, op.operation_id, sent))
            return self._json(status, payload)

    def _secondary_limit(self, method: str) -> bool:
        """Whether this write is beyond the secondary rate limit (recorded if not)."""
        if self.writes_per_minute is None or method == "GET":
            return False
        now = self.clock()
        self._writes = [at for at in self._writes if now - at < 60.0]
        if len(self._writes) >= self.writes_per_minute:
            self.secondary_limited += 1
            return True
        self._writes.append(now)
        return False

    def _record_reject(
        self,
        sent: dict[str, str],
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        operation: str | None,
        status: int,
        message: str,
    ) -> Response:
        self.calls.append(Call(method, path, query, body, status, operation, sent))
        self.violations.append(f"{method} {path} -> {status}: {message}")
        return self._json(status, {"message": message, "documentation_url": "fake"})

    # -- operations ------------------------------------------------------------------------

    def _user(self, login: str) -> dict[str, Any]:
        kind = "Bot" if login.endswith("[bot]") else "User"
        return {
            "login": login,
            "id": abs(hash(login)) % 10**6,
            "type": kind,
            "url": f"{self.base_url}/users/{login}",
        }

    def _repo_json(self, full_name: str) -> dict[str, Any]:
        owner, name = full_name.split("/")
        return {
            "id": abs(hash(full_name)) % 10**6,
            "name": name,
            "full_name": full_name,
            "owner": self._user(owner),
            "private": False,
            "default_branch": "main",
            "url": f"{self.base_url}/repos/{full_name}",
            "html_url": f"https://github.com/{full_name}",
            "clone_url": self.clone_urls.get(full_name, f"https://github.com/{full_name}.git"),
        }

    def _pull(self, params: Mapping[str, str]) -> Pull:
        key = (f"{params['owner']}/{params['repo']}", int(params["pull_number"]))
        pull = self.state.pulls.get(key)
        if pull is None:
            raise _Reject(404, "Not Found")
        return pull

    def _pull_json(self, pull: Pull) -> dict[str, Any]:
        repo_url = f"{self.base_url}/repos/{pull.full_name}"
        repo = self._repo_json(pull.full_name)
        return {
            "id": pull.number * 100,
            "number": pull.number,
            "state": "open",
            "title": pull.title,
            "body": pull.body,
            "draft": pull.draft,
            "user": self._user(pull.author),
            "url": f"{repo_url}/pulls/{pull.number}",
            "html_url": f"https://github.com/{pull.full_name}/pull/{pull.number}",
            "issue_url": f"{repo_url}/issues/{pull.number}",
            "comments_url": f"{repo_url}/issues/{pull.number}/comments",
            "review_comments_url": f"{repo_url}/pulls/{pull.number}/comments",
            "commits_url": f"{repo_url}/pulls/{pull.number}/commits",
            "head": {"sha": pull.head_sha, "ref": "feature", "label": "feature", "repo": repo},
            "base": {"sha": pull.base_sha, "ref": "main", "label": "main", "repo": repo},
            "changed_files": len(pull.files),
        }

    def _check_run_json(self, run: dict[str, Any]) -> dict[str, Any]:
        return dict(run)

    def _dispatch(
        self, operation: str, params: Mapping[str, str], query: Mapping[str, str], body: Any
    ) -> tuple[int, Any]:
        full_name = f"{params.get('owner')}/{params.get('repo')}"
        repo_url = f"{self.base_url}/repos/{full_name}"
        if operation == "repos/get":
            return 200, self._repo_json(full_name)
        if operation == "pulls/list":
            state = query.get("state", "open")
            pulls = [p for (name, _), p in self.state.pulls.items() if name == full_name]
            return 200, [self._pull_json(p) for p in pulls if state in ("open", "all")]
        if operation == "repos/list-pull-requests-associated-with-commit":
            sha = params["commit_sha"]
            pulls = [
                p
                for (name, _), p in self.state.pulls.items()
                if name == full_name and sha in p.files_at
            ]
            return 200, [self._pull_json(p) for p in pulls]
        if operation == "pulls/get":
            return 200, self._pull_json(self._pull(params))
        if operation == "pulls/list-files":
            pull = self._pull(params)
            return 200, [self._file_json(full_name, pull, f) for f in pull.files]
        if operation == "pulls/list-commits":
            pull = self._pull(params)
            return 200, [self._commit_json(full_name, pull.head_sha)]
        if operation == "repos/get-commit":
            return 200, self._commit_json(full_name, params["ref"])
        if operation == "pulls/list-reviews":
            return 200, self.reviews(full_name, self._pull(params).number)
        if operation == "pulls/create-review":
            return self._create_review(full_name, self._pull(params), body)
        if operation == "pulls/list-review-comments":
            url = f"{repo_url}/pulls/{self._pull(params).number}"
            found = self.state.review_comments.values()
            return 200, [c for c in found if c["pull_request_url"] == url]
        if operation == "pulls/create-reply-for-review-comment":
            return self._create_reply(
                full_name, self._pull(params), int(params["comment_id"]), body
            )
        if operation == "checks/create":
            return self._create_check_run(full_name, body)
        if operation == "checks/get":
            run = self.state.check_runs.get(int(params["check_run_id"]))
            if run is None:
                raise _Reject(404, "Not Found")
            return 200, run
        if operation == "checks/update":
            return self._update_check_run(int(params["check_run_id"]), body)
        if operation == "checks/list-for-ref":
            runs = [
                r
                for r in self.state.check_runs.values()
                if r["head_sha"] == params["ref"]
                and r["url"].startswith(repo_url + "/")
                and ("check_name" not in query or r["name"] == query["check_name"])
            ]
            return 200, {"total_count": len(runs), "check_runs": runs}
        if operation == "issues/list-comments":
            issue_url = f"{repo_url}/issues/{params['issue_number']}"
            found = [c for c in self.state.issue_comments.values() if c["issue_url"] == issue_url]
            return 200, found
        if operation == "issues/create-comment":
            return 201, self._new_issue_comment(repo_url, int(params["issue_number"]), body["body"])
        if operation == "issues/update-comment":
            comment = self.state.issue_comments.get(int(params["comment_id"]))
            if comment is None:
                raise _Reject(404, "Not Found")
            comment["body"] = body["body"]
            comment["updated_at"] = _now()
            return 200, comment
        if operation in (
            "reactions/create-for-issue-comment",
            "reactions/create-for-pull-request-review-comment",
        ):
            reaction = {
                "id": next(self._ids),
                "content": body["content"],
                "user": self._user(self.bot_login),
                "created_at": _now(),
                "comment_id": int(params["comment_id"]),
                "subject": operation.rsplit("-for-", 1)[1],
            }
            self.state.reactions.append(reaction)
            return 201, reaction
        if operation == "apps/get-authenticated":
            slug = self.bot_login.removesuffix("[bot]")
            return 200, {
                "id": 7,
                "slug": slug,
                "name": slug,
                "owner": self._user("octo"),
                "html_url": f"https://github.com/apps/{slug}",
            }
        if operation == "apps/create-installation-access-token":
            issued = next(self._ids)
            expires = datetime.now(UTC) + timedelta(hours=1)
            narrowed = (body or {}).get("repositories")
            return 201, {
                "token": f"ghs_fake_installation_token_{issued}",
                "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "permissions": {"checks": "write", "pull_requests": "write"},
                "repository_selection": "selected" if narrowed else "all",
            }
        if operation == "repos/get-collaborator-permission-level":
            permission = self.state.permissions.get((full_name, params["username"]), "read")
            return 200, {
                "permission": permission,
                "role_name": permission,
                "user": self._user(params["username"]),
            }
        raise _Reject(501, f"the fake does not implement {operation}")

    def _file_json(self, full_name: str, pull: Pull, f: PullFile) -> dict[str, Any]:
        added = sum(1 for line in f.patch.splitlines() if line.startswith("+"))
        removed = sum(1 for line in f.patch.splitlines() if line.startswith("-"))
        return {
            "sha": "0" * 40,
            "filename": f.filename,
            "status": f.status,
            "additions": added,
            "deletions": removed,
            "changes": added + removed,
            "patch": f.patch,
            "blob_url": f"https://github.com/{full_name}/blob/{pull.head_sha}/{f.filename}",
            "raw_url": f"https://github.com/{full_name}/raw/{pull.head_sha}/{f.filename}",
            "contents_url": f"{self.base_url}/repos/{full_name}/contents/{f.filename}",
        }

    def _commit_json(self, full_name: str, sha: str) -> dict[str, Any]:
        return {
            "sha": sha,
            "url": f"{self.base_url}/repos/{full_name}/commits/{sha}",
            "html_url": f"https://github.com/{full_name}/commit/{sha}",
            "commit": {"message": "change", "author": {"name": "octocat", "date": _now()}},
            "parents": [],
        }

    def _create_check_run(self, full_name: str, body: dict[str, Any]) -> tuple[int, Any]:
        run_id = next(self._ids)
        run_url = f"{self.base_url}/repos/{full_name}/check-runs/{run_id}"
        run: dict[str, Any] = {
            "id": run_id,
            "name": body["name"],
            "head_sha": body["head_sha"],
            "status": body.get("status", "queued"),
            "conclusion": None,
            "started_at": body.get("started_at", _now()),
            "completed_at": None,
            "external_id": body.get("external_id"),
            "details_url": body.get("details_url"),
            "url": f"{self.base_url}/repos/{full_name}/check-runs/{run_id}",
            "html_url": f"https://github.com/{full_name}/runs/{run_id}",
            "output": {
                "title": None,
                "summary": None,
                "text": None,
                "annotations_count": 0,
                "annotations_url": f"{run_url}/annotations",
            },
            "app": {"slug": self.bot_login.removesuffix("[bot]")},
            "pull_requests": [],
        }
        self.state.check_runs[run_id] = run
        self.state.annotations[run_id] = []
        self._apply_check_run(run, body)
        return 201, run

    def _update_check_run(self, run_id: int, body: dict[str, Any]) -> tuple[int, Any]:
        run = self.state.check_runs.get(run_id)
        if run is None:
            raise _Reject(404, "Not Found")
        self._apply_check_run(run, body)
        return 200, run

    def _apply_check_run(self, run: dict[str, Any], body: dict[str, Any]) -> None:
        if body.get("status") == "completed" and "conclusion" not in body:
            raise _Reject(422, "conclusion is required when status is completed")
        for key in ("name", "status", "details_url", "external_id", "started_at"):
            if key in body:
                run[key] = body[key]
        if "conclusion" in body:
            run["conclusion"] = body["conclusion"]
            run["status"] = "completed"
            run["completed_at"] = body.get("completed_at", _now())
        output = body.get("output")
        if output:
            for key in ("title", "summary", "text"):
                if key in output:
                    run["output"][key] = output[key]
            new = output.get("annotations", [])
            self.state.annotations[run["id"]].extend(new)
            run["output"]["annotations_count"] += len(new)

    def _create_review(self, full_name: str, pull: Pull, body: dict[str, Any]) -> tuple[int, Any]:
        commit = body.get("commit_id", pull.head_sha)
        files = pull.files_of(commit)
        if files is None:
            raise _Reject(422, f"commit_id {commit} is not part of the pull request")
        # GitHub places a comment on the diff of the commit it is posted on.
        anchors = {f.filename: diff_lines(f.patch) for f in files}
        for comment in body.get("comments", []):
            line = comment.get("line", comment.get("position"))
            if comment.get("side", "RIGHT") != "RIGHT" or "position" in comment:
                raise _Reject(422, "the fake accepts only side RIGHT comments anchored by line")
            if line not in anchors.get(comment["path"], set()):
                raise _Reject(
                    422,
                    f"Unprocessable Entity: {comment['path']}:{line} "
                    "Pull request review thread line must be part of the diff",
                )
        event = body.get("event")
        if (
            event in ("REQUEST_CHANGES", "COMMENT")
            and not body.get("body")
            and not body.get("comments")
        ):
            raise _Reject(422, f"a {event} review needs a body or comments")
        review_id = next(self._ids)
        review = {
            "id": review_id,
            "node_id": f"R_{review_id}",
            "user": self._user(self.bot_login),
            "body": body.get("body", ""),
            "state": {
                "APPROVE": "APPROVED",
                "REQUEST_CHANGES": "CHANGES_REQUESTED",
                "COMMENT": "COMMENTED",
            }.get(event or "", "PENDING"),
            "commit_id": body.get("commit_id", pull.head_sha),
            "submitted_at": _now(),
            "html_url": f"https://github.com/{full_name}/pull/{pull.number}#review-{review_id}",
            "pull_request_url": f"{self.base_url}/repos/{full_name}/pulls/{pull.number}",
            "author_association": "NONE",
            "comments": list(body.get("comments", [])),
        }
        self.state.reviews.setdefault((full_name, pull.number), []).append(review)
        return 200, review

    def _create_reply(
        self, full_name: str, pull: Pull, comment_id: int, body: dict[str, Any]
    ) -> tuple[int, Any]:
        reply_id = next(self._ids)
        reply = {
            "id": reply_id,
            "body": body["body"],
            "user": self._user(self.bot_login),
            "in_reply_to_id": comment_id,
            "created_at": _now(),
            "updated_at": _now(),
            "url": f"{self.base_url}/repos/{full_name}/pulls/comments/{reply_id}",
            "html_url": f"https://github.com/{full_name}/pull/{pull.number}#discussion_r{reply_id}",
            "pull_request_url": f"{self.base_url}/repos/{full_name}/pulls/{pull.number}",
        }
        self.state.review_comments[reply_id] = reply
        return 201, reply

    def _new_issue_comment(self, repo_url: str, number: int, text: str) -> dict[str, Any]:
        comment_id = next(self._ids)
        comment = {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "body": text,
            "user": self._user(self.bot_login),
            "created_at": _now(),
            "updated_at": _now(),
            "url": f"{repo_url}/issues/comments/{comment_id}",
            "html_url": f"https://github.com/x#issuecomment-{comment_id}",
            "issue_url": f"{repo_url}/issues/{number}",
            "author_association": "NONE",
        }
        self.state.issue_comments[comment_id] = comment
        return comment

    def add_issue_comment(self, full_name: str, number: int, text: str, *, author: str) -> int:
        """Seed a comment written by someone else; returns its id."""
        comment = self._new_issue_comment(f"{self.base_url}/repos/{full_name}", number, text)
        comment["user"] = self._user(author)
        return int(comment["id"])


def running_fake() -> Iterator[FakeGitHub]:
    """Generator for a pytest fixture: a started fake that must see no violations."""
    with FakeGitHub() as fake:
        yield fake
        fake.assert_no_violations()
