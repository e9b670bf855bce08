"""The job queue between the webhook and the workers: huey on SQLite, or on Redis to scale out.

The webhook only enqueues a :class:`Job` (a plain record); a worker runs it through the
runner it was given (the review pipeline). A newer head commit for the same pull request
supersedes queued jobs for older heads: enqueueing records the newest head beside the queue
(:mod:`veribot.bot.jobstate`, shared by every worker), and a job whose head is no longer the
newest does nothing. A job that raises is retried by huey; posting is idempotent (hidden
markers, see :mod:`veribot.bot.github`), so a rerun posts no duplicate.

GitHub does not promise to deliver webhooks in order, so "newest" is decided by the pull
request's ``updated_at`` carried in the payload (:attr:`Job.updated_at`), not by arrival: a
delivery for an older head that arrives late neither replaces the record nor supersedes the
newer job. Equal timestamps (one-second resolution) go to the later arrival. A job without
``updated_at`` (a check run's rerequest) neither records nor is superseded; the worker's own
comparison with the pull request's current head (from the API) leaves a stale one idle. The
compare-and-record is atomic within one webhook process; two webhook processes receiving
two heads of one pull request in the same instant, out of order, could still race.

Jobs of one pull request run one at a time, whichever worker or machine takes them: a run
holds a :class:`~veribot.bot.jobstate.Lease` on the pull request, and a job that finds it
held is queued again ``busy_delay`` seconds later.

Killed workers. huey takes a task off the queue when a worker starts it; the lease carries
the job and is renewed every ``heartbeat`` seconds while the job runs. A lease not renewed
for ``lease`` seconds (its worker was killed, ran out of memory or lost its machine) is
taken by a live worker's sweep (every ``heartbeat``, and at its start), which queues the job
again, marked :attr:`Job.resumed`. A run whose own lease lapsed (its worker stalled) stops at
its next checkpoint (:class:`LeaseLost`), posting nothing more.

Stopping. :meth:`JobQueue.work` runs the worker until SIGTERM or SIGINT, then takes no new
job and lets running ones go on for ``stop_grace`` seconds; after that each stops at its
next :func:`checkpoint` (:class:`HandBack`) and goes back to the queue, to be resumed by the
next worker. A second signal hands back at once. A job that cannot post its results yet
(GitHub down) raises :class:`PostLater` and is queued again after the delay it names.

The storage keeps only what is read: huey stores no task results, and each entry beside the
queue (a pull request's newest head, a review's unposted results) expires after
``retention`` seconds. SQLite writes with synchronous=FULL, so a job acknowledged to GitHub
survives a power loss.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from types import FrameType
from typing import Any

from huey import Huey, RedisHuey, SqliteHuey  # type: ignore[import-untyped]

from veribot.bot.config import QueueTiming, Settings, private_file
from veribot.bot.jobstate import JobState, Lease, RedisJobState, SqliteJobState

log = logging.getLogger(__name__)

TASK_NAME = "veribot.run_job"
UNKNOWN_PULL = 0  # Job.pr_number of a re-run on a fork's head: found by the head commit
HAND_BACK_S = 30.0  # after the grace, how long a worker waits for its jobs to hand back


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
    order. ``rerun``: someone asked for the review again ("Re-run"), so a review already
    posted for the same commit does not stand in for it. ``resumed``: the job went back to
    the queue after it had started (its worker stopped or died, or GitHub was down).
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
    rerun: bool = False
    resumed: bool = False

    @property
    def pr_key(self) -> str:
        """Identifies the pull request across jobs."""
        return f"{self.repo}#{self.pr_number}"


class Outcome(Enum):
    """What became of a job when a worker took it."""

    RAN = "ran"
    SUPERSEDED = "superseded"
    DEFERRED = "deferred"  # another job of the pull request was running: queued again
    HANDED_BACK = "handed back"  # the worker is stopping: queued again, to resume
    POSTPONED = "postponed"  # GitHub did not take the results yet: queued again, later
    LOST = "lost"  # its lease lapsed while it ran: a sweep queues it again


class HandBack(Exception):
    """The worker is stopping: the job stops at this checkpoint and goes back to the queue."""


class LeaseLost(Exception):
    """The job's lease lapsed while it ran (its worker stalled): it stops and posts nothing
    more; a sweep queues it again."""


class PostLater(Exception):
    """What the job must post cannot be posted now (GitHub does not answer): queue the job
    again ``delay`` seconds later; it resumes from what it saved."""

    def __init__(self, reason: str, delay: float) -> None:
        super().__init__(reason)
        self.delay = delay


Runner = Callable[[Job], None]


def _no_runner(job: Job) -> None:
    raise RuntimeError(f"this process only enqueues; no runner to run {job.pr_key}")


class Stopping:
    """A worker process's stop: ``requested`` on the first SIGTERM or SIGINT, ``now`` once
    the grace is over (or on a second signal)."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.now = threading.Event()


def pause_here(
    step: str, pause_at: str | None, pause_file: Path | None, stopping: Stopping
) -> None:
    """Test scaffolding (``VERIBOT_TEST_PAUSE_AT``): at the named step, say so in
    ``pause_file`` and wait until a stop is requested."""
    if pause_at != step:
        return
    log.warning("paused at %s (VERIBOT_TEST_PAUSE_AT)", step)
    if pause_file is not None:
        partial = pause_file.with_name(pause_file.name + ".part")
        partial.write_text(step)
        partial.replace(pause_file)
    stopping.requested.wait()


class _Control:
    """One running job: renews its lease, and answers its checkpoints."""

    def __init__(self, queue: JobQueue, lease: Lease) -> None:
        self.queue = queue
        self.lease = lease
        self.lost = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="veribot-heartbeat", daemon=True)

    def _beat(self) -> None:
        timing = self.queue.timing
        while not self.done.wait(timing.heartbeat):
            try:
                renewed = self.queue.state.renew(self.lease, timing.lease)
            except Exception:  # the store did not answer: try again at the next beat
                log.exception("could not renew the lease", extra={"pr": self.lease.name})
                continue
            if not renewed:
                log.error("the job's lease lapsed", extra={"pr": self.lease.name})
                self.lost.set()
                return

    def check(self, step: str) -> None:
        queue = self.queue
        pause_here(step, queue.pause_at, queue.pause_file, queue.stopping)
        if self.lost.is_set():
            raise LeaseLost(f"the lease on {self.lease.name} lapsed")
        if queue.stopping.now.is_set():
            raise HandBack("the worker is stopping")


_current = threading.local()


def checkpoint(step: str) -> None:
    """Where a running job may stop: raises :class:`HandBack` once the worker's grace is over
    and :class:`LeaseLost` if another worker may have taken the job; a no-op outside a
    queue's run (the Action, the tests that call a job directly)."""
    control: _Control | None = getattr(_current, "control", None)
    if control is not None:
        control.check(step)


class JobQueue:
    """Enqueue jobs and, in a worker, run them with ``runner``."""

    def __init__(
        self,
        huey: Huey,
        runner: Runner = _no_runner,
        *,
        state: JobState | None = None,
        timing: QueueTiming | None = None,
        retries: int = 3,
        retry_delay: float = 10.0,
        pause_at: str | None = None,
        pause_file: Path | None = None,
    ) -> None:
        self.huey = huey
        self.state = state if state is not None else job_state_for(huey)
        self.timing = timing or QueueTiming()
        self.pause_at = pause_at
        self.pause_file = pause_file
        self.stopping = Stopping()
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}"
        self._runner = runner
        self._record_lock = threading.Lock()
        self._task = huey.task(retries=retries, retry_delay=retry_delay, name=TASK_NAME)(self.run)

    @classmethod
    def from_settings(cls, settings: Settings, runner: Runner = _no_runner) -> JobQueue:
        """Redis when ``settings.redis_url`` is set, otherwise SQLite in the data directory."""
        if settings.redis_url:
            huey = RedisHuey("veribot", url=settings.redis_url, results=False)
        else:
            huey = sqlite_huey(settings.queue_path)
        return cls(
            huey,
            runner,
            timing=settings.timing,
            pause_at=settings.pause_at,
            pause_file=settings.pause_file,
        )

    # -- the newest head of each pull request ---------------------------------------------

    @staticmethod
    def _head_key(pr_key: str) -> str:
        return f"head:{pr_key}"

    def _newest(self, pr_key: str) -> tuple[str, str] | None:
        value = self.state.get(self._head_key(pr_key))
        if value is None:
            return None
        head, updated_at = pickle.loads(value)
        return str(head), str(updated_at)

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
            record = pickle.dumps((job.head_sha, job.updated_at))
            self.state.put(self._head_key(job.pr_key), record, self.timing.retention)

    # -- enqueueing and running -----------------------------------------------------------

    def enqueue(self, job: Job) -> None:
        """Queue ``job``; a newer head (by ``updated_at``) supersedes jobs for older heads.
        When this returns, the job is stored (on disk, for SQLite)."""
        self._record_head(job)
        self._task(job)
        log.info(
            "job queued",
            extra={"delivery": job.delivery_id, "pr": job.pr_key, "command": job.command.value},
        )

    def _superseded(self, job: Job) -> bool:
        latest = self.latest_head(job.pr_key)
        dated = job.head_sha is not None and job.updated_at is not None
        return dated and latest is not None and latest != job.head_sha

    def run(self, job: Job) -> Outcome:
        """Run ``job`` unless a newer head superseded it (called by the worker's task).

        A resumed job runs even then: it may have a check run to complete as superseded.
        """
        if self._superseded(job) and not job.resumed:
            log.info("job superseded", extra={"pr": job.pr_key, "head": job.head_sha})
            return Outcome.SUPERSEDED
        lease = Lease(job.pr_key, uuid.uuid4().hex, self.worker_id, pickle.dumps(job))
        if not self.state.claim(lease, self.timing.lease):
            log.info(
                "another job of the pull request is running: queued again", extra={"pr": job.pr_key}
            )
            self._task.schedule(args=(job,), delay=self.timing.busy_delay)
            return Outcome.DEFERRED
        control = _Control(self, lease)
        control.thread.start()
        _current.control = control
        outcome = Outcome.RAN
        try:
            self._runner(job)
        except HandBack:
            outcome = self._again(job, 0.0, Outcome.HANDED_BACK)
            log.warning("worker stopping: job handed back to the queue", extra={"pr": job.pr_key})
        except PostLater as later:
            outcome = self._again(job, later.delay, Outcome.POSTPONED)
            log.warning(
                "results not posted yet (%s): job queued again in %.1f s",
                later,
                later.delay,
                extra={"pr": job.pr_key},
            )
        except LeaseLost:
            log.error("job stopped: its lease lapsed", extra={"pr": job.pr_key})
            outcome = Outcome.LOST  # the lapsed lease stays, for a sweep to queue the job
        finally:
            control.done.set()
            _current.control = None
            if outcome is not Outcome.LOST:
                self.state.release(lease)
        return outcome

    def _again(self, job: Job, delay: float, outcome: Outcome) -> Outcome:
        """Queue ``job`` again, resumed; if the queue cannot take it, its lease is kept, to
        lapse and be swept."""
        try:
            resumed = replace(job, resumed=True)
            if delay > 0:
                self._task.schedule(args=(resumed,), delay=delay)
            else:
                self._task(resumed)
        except Exception:  # the queue's storage: the lapsed lease brings the job back
            log.exception("could not queue the job again", extra={"pr": job.pr_key})
            return Outcome.LOST
        return outcome

    def sweep(self) -> int:
        """Queue again the jobs of leases whose workers stopped renewing them; how many."""
        found = 0
        for lease in self.state.lapsed():
            if not self.state.take(lease, self.timing.lease):
                continue  # another worker took it
            job = replace(pickle.loads(lease.job), resumed=True)
            # Queued before the lease goes: stopped in between, the lease lapses again.
            self._task(job)
            self.state.release(lease)
            found += 1
            log.warning(
                "the worker of a running job is gone: job queued again",
                extra={"pr": job.pr_key, "worker": lease.worker},
            )
        return found

    # -- the worker process -----------------------------------------------------------------

    def work(self, workers: int = 1) -> None:
        """Run jobs in ``workers`` threads until SIGTERM or SIGINT (in the main thread).

        On the signal no new job is taken; running ones have ``stop_grace`` seconds, then
        hand their jobs back at their next checkpoint (a second signal: at once).
        """
        timing = self.timing
        consumer = self.huey.create_consumer(
            workers=workers,
            periodic=False,
            initial_delay=min(0.1, timing.poll),
            backoff=1.5,
            max_delay=max(timing.poll, 0.01),
        )
        consumer.start()
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, self._on_signal)
        while not self.stopping.requested.is_set():
            try:
                self.sweep()
            except Exception:  # the queue's storage did not answer: try at the next beat
                log.exception("could not look for jobs of workers gone")
            self.stopping.requested.wait(timing.heartbeat)
        log.info("stopping: no new job is taken; running ones have %.0f s", timing.stop_grace)
        consumer.stop_flag.set()
        grace = threading.Timer(timing.stop_grace, self.stopping.now.set)
        grace.daemon = True
        grace.start()
        deadline = time.monotonic() + timing.stop_grace + HAND_BACK_S
        for _, thread in consumer.worker_threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        # The scheduler moves due jobs onto the queue: let it finish a move (a second at most).
        consumer.scheduler.join(max(0.0, deadline - time.monotonic()))
        grace.cancel()
        still = [t.name for _, t in consumer.worker_threads if t.is_alive()]
        if still:  # their leases lapse, and another worker's sweep runs their jobs again
            log.error("stopped with jobs still running in %s", ", ".join(still))
        log.info("worker stopped")

    def _on_signal(self, number: int, _frame: FrameType | None) -> None:
        if self.stopping.requested.is_set() or self.timing.stop_grace <= 0:
            self.stopping.now.set()  # before a paused job wakes up to look
        self.stopping.requested.set()
        log.info("received %s", signal.Signals(number).name)


def job_state_for(huey: Huey) -> JobState:
    """The store beside ``huey``'s queue: tables in its SQLite file, or keys on its Redis."""
    storage: Any = huey.storage
    if isinstance(huey, SqliteHuey):
        return SqliteJobState(Path(storage.filename))
    if isinstance(huey, RedisHuey):
        return RedisJobState(storage.conn)
    raise TypeError(f"no job state for a {type(huey).__name__} queue")


def _instant(timestamp: str) -> datetime:
    """GitHub's ``2019-05-15T15:20:33Z`` (a time without a zone is taken as UTC)."""
    instant = datetime.fromisoformat(timestamp)
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)


def sqlite_huey(path: Path, *, immediate: bool = False) -> SqliteHuey:
    """The embedded queue: a SQLite file (its folder is created), synced to disk on each
    commit (``fsync``: synchronous=FULL), keeping no task results (nothing reads them)."""
    return SqliteHuey(
        "veribot",
        filename=str(private_file(path)),
        immediate=immediate,
        fsync=True,
        results=False,
    )
