"""Webhook deliveries: signature check, delivery dedupe, and routing of events to jobs.

Routing follows the CPython bots: handlers register per event and action on a
:class:`Router`, and each returns a :class:`Job` or an :class:`Ignored` with the reason.
Handlers only read the payload; they never call GitHub (that is the worker's job).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from veribot.bot.config import private_file
from veribot.bot.queue import UNKNOWN_PULL, Command, Job

log = logging.getLogger(__name__)

SIGNATURE_PREFIX = "sha256="
DELIVERY_KEEP_S = 7 * 86_400.0
VERIFY_COMMAND = re.compile(r"^\s*/verify(?:[ \t]+(?P<arg>\S+))?[ \t]*$", re.MULTILINE)
PULL_REQUEST_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")


class PayloadError(ValueError):
    """The payload lacks a field its event must carry, or has it of the wrong type."""


def signature(secret: bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    return SIGNATURE_PREFIX + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str) -> bool:
    """Whether ``header`` is the HMAC-SHA256 of the raw ``body`` (constant-time compare;
    a header of any characters is just a mismatch)."""
    sent = header.strip().encode("utf-8", errors="replace")
    return hmac.compare_digest(signature(secret, body).encode("ascii"), sent)


class DeliveryStore:
    """Remembers accepted ``X-GitHub-Delivery`` ids in SQLite, across restarts and processes.

    A delivery is recorded only once its job is stored in the queue (:meth:`seen` first,
    then enqueue, then :meth:`record`), so a webhook that dies in between leaves GitHub's
    redelivery welcome; a delivery recorded twice in that instant queues its job twice,
    which the worker does once (it reviews a commit once, see :func:`veribot.bot.worker.
    review_key`). Writes are synced to disk (synchronous=FULL). Ids older than ``keep_s``
    (a week: GitHub redelivers only what is asked within days) are pruned as new ones come,
    so the table stays small.
    """

    def __init__(
        self,
        path: Path,
        *,
        keep_s: float = DELIVERY_KEEP_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = private_file(path)
        self.keep_s = keep_s
        self.clock = clock
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, seen_at REAL NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS deliveries_seen ON deliveries (seen_at)")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        db.execute("PRAGMA synchronous=FULL")
        return db

    def seen(self, delivery_id: str) -> bool:
        """Whether ``delivery_id`` was accepted already (its job is queued)."""
        with closing(self._connect()) as db:
            found = db.execute("SELECT 1 FROM deliveries WHERE id = ?", (delivery_id,))
            return found.fetchone() is not None

    def record(self, delivery_id: str) -> bool:
        """Record ``delivery_id`` as accepted; False if it was already."""
        now = self.clock()
        with closing(self._connect()) as db:
            db.execute("DELETE FROM deliveries WHERE seen_at < ?", (now - self.keep_s,))
            cursor = db.execute(
                "INSERT OR IGNORE INTO deliveries (id, seen_at) VALUES (?, ?)",
                (delivery_id, now),
            )
            return cursor.rowcount == 1

    def first_time(self, delivery_id: str) -> bool:
        """Record ``delivery_id``; True only the first time it is seen."""
        return self.record(delivery_id)

    def count(self) -> int:
        """How many delivery ids are remembered."""
        with closing(self._connect()) as db:
            (n,) = db.execute("SELECT COUNT(*) FROM deliveries").fetchone()
            return int(n)

    def forget(self, delivery_id: str) -> None:
        """Drop ``delivery_id`` (its job could not be queued: let GitHub redeliver it)."""
        with closing(self._connect()) as db:
            db.execute("DELETE FROM deliveries WHERE id = ?", (delivery_id,))


@dataclass(frozen=True)
class Ignored:
    """A delivery that needs no work, and why."""

    reason: str


Route = Job | Ignored
Handler = Callable[[Mapping[str, Any], str, str], Route]


def lookup(payload: Mapping[str, Any], *path: str) -> Any:
    """``payload[path[0]][path[1]]...``, or :class:`PayloadError` naming what is missing."""
    node: Any = payload
    for depth, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            raise PayloadError(f"payload lacks {'.'.join(path[: depth + 1])}")
        node = node[key]
    return node


def _int(payload: Mapping[str, Any], *path: str) -> int:
    value = lookup(payload, *path)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PayloadError(f"payload field {'.'.join(path)} is not an integer")
    return value


def _mapping(payload: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    value = lookup(payload, *path)
    if not isinstance(value, Mapping):
        raise PayloadError(f"payload field {'.'.join(path)} is not an object")
    return value


def _str(payload: Mapping[str, Any], *path: str) -> str:
    value = lookup(payload, *path)
    if not isinstance(value, str):
        raise PayloadError(f"payload field {'.'.join(path)} is not a string")
    return value


def _timestamp(payload: Mapping[str, Any], *path: str) -> str:
    value = _str(payload, *path)
    try:
        datetime.fromisoformat(value)
    except ValueError as error:
        raise PayloadError(f"payload field {'.'.join(path)} is not an ISO 8601 time") from error
    return value


def _installation(payload: Mapping[str, Any]) -> int | None:
    installation = payload.get("installation")
    if isinstance(installation, Mapping) and isinstance(installation.get("id"), int):
        return int(installation["id"])
    return None


class Router:
    """Handlers by (event, action); ``action`` None matches every action of the event."""

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str | None], Handler] = {}

    def register(self, event: str, action: str | None = None) -> Callable[[Handler], Handler]:
        def add(handler: Handler) -> Handler:
            self._handlers[(event, action)] = handler
            return handler

        return add

    def route(
        self, event: str, payload: Mapping[str, Any], delivery_id: str, bot_login: str
    ) -> Route:
        """The job the delivery asks for, or why it needs none. Raises :class:`PayloadError`."""
        action = payload.get("action")
        handler = self._handlers.get((event, action if isinstance(action, str) else None))
        handler = handler or self._handlers.get((event, None))
        if handler is None:
            suffix = f".{action}" if isinstance(action, str) else ""
            return Ignored(f"event {event}{suffix} is not handled")
        return handler(payload, delivery_id, bot_login)


router = Router()


def _review_job(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    if _mapping(payload, "pull_request").get("draft") is True:
        return Ignored("draft pull request (reviewed when marked ready)")
    return Job(
        repo=_str(payload, "repository", "full_name"),
        pr_number=_int(payload, "pull_request", "number"),
        head_sha=_str(payload, "pull_request", "head", "sha"),
        installation_id=_installation(payload),
        delivery_id=delivery_id,
        updated_at=_timestamp(payload, "pull_request", "updated_at"),
    )


for _action in PULL_REQUEST_ACTIONS:
    router.register("pull_request", _action)(_review_job)


def parse_verify(body: str) -> tuple[Command, str | None] | None:
    """The `/verify` command in a comment body: (VERIFY, target or None), (HELP, None), or None."""
    found = VERIFY_COMMAND.search(body)
    if found is None:
        return None
    arg = found.group("arg")
    if arg == "help":
        return Command.HELP, None
    return Command.VERIFY, arg


def _comment_job(
    payload: Mapping[str, Any], delivery_id: str, bot_login: str, pr_number: int, review: bool
) -> Route:
    author = _str(payload, "comment", "user", "login")
    if author == bot_login or lookup(payload, "comment", "user", "type") == "Bot":
        return Ignored("comment by a bot")
    parsed = parse_verify(_str(payload, "comment", "body"))
    if parsed is None:
        return Ignored("comment has no /verify command")
    command, target = parsed
    comment = _mapping(payload, "comment")
    path = _str(payload, "comment", "path") if review else None
    line = comment.get("line") if review else None
    return Job(
        repo=_str(payload, "repository", "full_name"),
        pr_number=pr_number,
        head_sha=None,
        installation_id=_installation(payload),
        command=command,
        delivery_id=delivery_id,
        target=target,
        path=path,
        line=line if isinstance(line, int) else None,
        comment_id=_int(payload, "comment", "id"),
        on_review_comment=review,
        requested_by=author,
    )


@router.register("issue_comment", "created")
def _issue_comment(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    if not isinstance(_mapping(payload, "issue").get("pull_request"), Mapping):
        return Ignored("comment on an issue, not a pull request")
    number = _int(payload, "issue", "number")
    return _comment_job(payload, delivery_id, bot_login, number, review=False)


@router.register("pull_request_review_comment", "created")
def _review_comment(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    number = _int(payload, "pull_request", "number")
    return _comment_job(payload, delivery_id, bot_login, number, review=True)


def _rerequested(payload: Mapping[str, Any], delivery_id: str, key: str) -> Route:
    """A re-run ("Re-run", "Re-run all checks") of ``payload[key]``, a check run or suite.

    GitHub lists the pull requests of the head only when they come from the same
    repository; a fork's comes with none, and the worker finds it by its head commit.
    """
    pulls = lookup(payload, key, "pull_requests")
    number = UNKNOWN_PULL
    if isinstance(pulls, list) and pulls and isinstance(pulls[0], Mapping):
        number = _int(pulls[0], "number")
    return Job(
        repo=_str(payload, "repository", "full_name"),
        pr_number=number,
        head_sha=_str(payload, key, "head_sha"),
        installation_id=_installation(payload),
        delivery_id=delivery_id,
        rerun=True,
    )


@router.register("check_run", "rerequested")
def _check_run_rerequested(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    return _rerequested(payload, delivery_id, "check_run")


@router.register("check_suite", "rerequested")
def _check_suite_rerequested(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    return _rerequested(payload, delivery_id, "check_suite")


@router.register("installation")
def _installation_event(payload: Mapping[str, Any], delivery_id: str, bot_login: str) -> Route:
    log.info("installation %s (id %s)", payload.get("action"), _installation(payload))
    return Ignored(f"installation {payload.get('action')} noted")
