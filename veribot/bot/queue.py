"""The job queue between the webhook and the workers: huey on SQLite, or on Redis to scale out.

The webhook only enqueues a :class:`Job` (a plain record); a worker runs it through the
runner it was given (the review pipeline). A newer head commit for the same pull request
supersedes queued jobs for older heads: enqueueing records the newest head in huey's
key-value store (shared by every worker, whichever storage backs it), and a job whose head
is no longer the newest does nothing. A job that raises is retried by huey; posting is
idempotent (hidden markers, see :mod:`veribot.bot.github`), so a rerun posts no duplicate.

GitHub does not promise to deliver webhooks in order, so "newest" is decided by the pull
request's ``updated_at`` carried in the payload (:attr:`Job.updated_at`), not by arrival: a
delivery for an older head that arrives late neither replaces the record nor supersedes the
newer job. Equal timestamps (one-second resolution) go to the later arrival. A job without
``updated_at`` (a check run's rerequest) neither records nor is superseded; the worker's own
comparison with the pull request's current head (from the API) leaves a stale one idle. The
compare-and-record is atomic within one webhook process; two webhook processes receiving
two heads of one pull request in the same instant, out of order, could still race.

Jobs of one pull request run one at a time, whichever worker or machine takes them: a run
holds the pull request's token in huey's store, and a job that finds it held is queued
again ``busy_delay`` seconds later.

Huey removes a task from the queue when a worker takes it, so a worker killed mid-job
would lose it. Each run therefore first schedules a guard copy of its job ``lease``
seconds ahead and revokes it when the run ends, well or badly: only a run that never ends
(a killed worker) lets its guard run the job again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

from huey import Huey, RedisHuey, SqliteHuey  # type: ignore[import-untyped]

from veribot.bot.config import Settings, private_file

log = logging.getLogger(__name__)

TASK_NAME = "veribot.run_job"
UNKNOWN_PULL = 0  # Job.pr_number of a re-run on a fork's head: found by the head commit


class Command(Enum):
    """What a job asks for."""

    REVIEW = "review"
    VERIFY = "verify"
    HELP = "help"


@dataclass(frozen=True)
class Job:
    """One unit of work for a worker; everything a worker needs to fetch the rest.

    ``head_sha`` is None when the event did not carry it (a comment): the worker reviews the
    pull request's current head. ``target`` is ``path`` or ``path::function`` for `/verify`
    on a part of the pull request; ``path`` and ``line`` locate a review comment's line.
    ``trusted`` says the author association already grants write access; otherwise the
    worker asks the permission API before honouring a command. ``updated_at`` is the pull
    request's ``updated_at`` (ISO 8601) at the delivery: it orders heads that arrive out of
    order.
    """

    repo: str
    pr_number: int
    head_sha: str | None
    installation_id: int | None
    command: Command = Command.REVIEW
    delivery_id: str = ""
    target: str | None = None
    path: str | None = None
    line: int | None = None
    comment_id: int | None = None
    on_review_comment: bool = False
    requested_by: str | None = None
    updated_at: str | None = None

    @property
    def pr_key(self) -> str:
        """Identifies the pull request across jobs."""
        return f"{self.repo}#{self.pr_number}"


class Outcome(Enum):
    """What became of a job when a worker took it."""

    RAN = "ran"
    SUPERSEDED = "superseded"
    DEFERRED = "deferred"  # another job of the pull request was running: queued again


Runner = Callable[[Job], None]


def _no_runner(job: Job) -> None:
    raise RuntimeError(f"this process only enqueues; no runner to run {job.pr_key}")


class JobQueue:
    """Enqueue jobs and, in a worker, run them with ``runner``."""

    def __init__(
        self,
        huey: Huey,
        runner: Runner = _no_runner,
        *,
        retries: int = 3,
        retry_delay: float = 10.0,
        lease: float = 1800.0,
        busy_delay: float = 15.0,
    ) -> None:
        self.huey = huey
        self.lease = lease
        self.busy_delay = busy_delay
        self._runner = runner
        self._record_lock = threading.Lock()
        self._task = huey.task(retries=retries, retry_delay=retry_delay, name=TASK_NAME)(self.run)

    @classmethod
    def from_settings(cls, settings: Settings, runner: Runner = _no_runner) -> JobQueue:
        """Redis when ``settings.redis_url`` is set, otherwise SQLite in the data directory."""
        if settings.redis_url:
            return cls(RedisHuey("veribot", url=settings.redis_url), runner)
        return cls(sqlite_huey(settings.queue_path), runner)

    @staticmethod
    def _head_key(pr_key: str) -> str:
        return f"veribot:head:{pr_key}"

    def _newest(self, pr_key: str) -> tuple[str, str] | None:
        value = self.huey.get(self._head_key(pr_key), peek=True)
        if isinstance(value, tuple) and len(value) == 2:
            return (str(value[0]), str(value[1]))
        return None

    def latest_head(self, pr_key: str) -> str | None:
        """The newest head commit enqueued for the pull request, if any."""
        newest = self._newest(pr_key)
        return newest[0] if newest is not None else None

    def _record_head(self, job: Job) -> None:
        """Record ``job``'s head as the newest unless a newer one is recorded already."""
        if job.head_sha is None or job.updated_at is None:
            return
        with self._record_lock:
            newest = self._newest(job.pr_key)
            if newest is not None and _instant(job.updated_at) < _instant(newest[1]):
                log.info(
                    "older head delivered late: the newer one stays",
                    extra={"pr": job.pr_key, "head": job.head_sha, "newest": newest[0]},
                )
                return
            self.huey.put(self._head_key(job.pr_key), (job.head_sha, job.updated_at))

    def enqueue(self, job: Job) -> None:
        """Queue ``job``; a newer head (by ``updated_at``) supersedes jobs for older heads."""
        self._record_head(job)
        self._task(job)
        log.info(
            "job queued",
            extra={"delivery": job.delivery_id, "pr": job.pr_key, "command": job.command.value},
        )

    def run(self, job: Job) -> Outcome:
        """Run ``job`` unless a newer head superseded it (called by the worker's task)."""
        latest = self.latest_head(job.pr_key)
        dated = job.head_sha is not None and job.updated_at is not None
        if dated and latest is not None and latest != job.head_sha:
            log.info(
                "job superseded", extra={"pr": job.pr_key, "head": job.head_sha, "latest": latest}
            )
            return Outcome.SUPERSEDED
        running = f"veribot:running:{job.pr_key}"
        if not self._claim(running):
            log.info(
                "another job of the pull request is running: queued again", extra={"pr": job.pr_key}
            )
            self._task.schedule(args=(job,), delay=self.busy_delay)
            return Outcome.DEFERRED
        try:
            guard = self._task.schedule(args=(job,), delay=self.lease)
            try:
                self._runner(job)
            finally:
                guard.revoke()
        finally:
            self.huey.delete(running)
        return Outcome.RAN

    def _claim(self, key: str) -> bool:
        """Take the pull request's run token in the shared store; one older than the lease
        (its worker was killed) is taken over."""
        if self.huey.put_if_empty(key, time.time()):
            return True
        since = self.huey.get(key, peek=True)
        if isinstance(since, float) and time.time() - since > self.lease:
            self.huey.delete(key)
            return bool(self.huey.put_if_empty(key, time.time()))
        return False


def _instant(timestamp: str) -> datetime:
    """GitHub's ``2019-05-15T15:20:33Z`` (a time without a zone is taken as UTC)."""
    instant = datetime.fromisoformat(timestamp)
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)


def sqlite_huey(path: Path, *, immediate: bool = False) -> SqliteHuey:
    """The embedded queue: a SQLite file (its folder is created)."""
    return SqliteHuey("veribot", filename=str(private_file(path)), immediate=immediate)
