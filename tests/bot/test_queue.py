"""The job queue with a real SQLite huey and a real consumer running worker threads."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from huey import SqliteHuey  # type: ignore[import-untyped]

from veribot.bot.config import ConfigError, QueueTiming, Settings
from veribot.bot.jobstate import SqliteJobState
from veribot.bot.queue import (
    Command,
    HandBack,
    Job,
    JobQueue,
    Outcome,
    PostLater,
    checkpoint,
    sqlite_huey,
)
from veribot.bot.webhooks import DeliveryStore

REPO = "octo/demo"


def job(
    sha: str | None,
    number: int = 7,
    command: Command = Command.REVIEW,
    at: str | None = "2026-05-15T15:20:33Z",
) -> Job:
    """A job; ``at`` is the pull request's ``updated_at`` (only for a job with a head)."""
    return Job(
        repo=REPO,
        pr_number=number,
        head_sha=sha,
        installation_id=1,
        command=command,
        updated_at=at if sha is not None else None,
    )


@contextmanager
def consumer(huey: SqliteHuey) -> Iterator[None]:
    running = huey.create_consumer(
        workers=1,
        periodic=False,
        initial_delay=0.01,
        backoff=1.0,
        max_delay=0.05,
        check_worker_health=False,
    )
    running.start()
    try:
        yield
    finally:
        running.stop(graceful=True)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the worker"
        time.sleep(0.02)


def test_a_worker_runs_the_queued_job(tmp_path: Path) -> None:
    ran: list[Job] = []
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), ran.append)
    queue.enqueue(job("a" * 40))
    with consumer(queue.huey):
        wait_for(lambda: len(ran) == 1)
    assert ran == [job("a" * 40)]


def test_the_job_survives_a_restart_of_the_process_side(tmp_path: Path) -> None:
    """The webhook's queue object enqueues; a separate worker queue object runs it."""
    path = tmp_path / "q.sqlite3"
    JobQueue(sqlite_huey(path)).enqueue(job("a" * 40))
    ran: list[Job] = []
    worker = JobQueue(sqlite_huey(path), ran.append)
    with consumer(worker.huey):
        wait_for(lambda: len(ran) == 1)


def test_a_newer_head_supersedes_queued_jobs_for_older_heads(tmp_path: Path) -> None:
    ran: list[Job] = []
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), ran.append)
    queue.enqueue(job("1" * 40))
    queue.enqueue(job("1" * 40, number=8))
    queue.enqueue(job(None, command=Command.VERIFY))
    queue.enqueue(job("2" * 40))
    with consumer(queue.huey):
        wait_for(lambda: len(ran) == 3)
        time.sleep(0.2)
    assert sorted((j.pr_number, j.head_sha or "-") for j in ran) == [
        (7, "-"),
        (7, "2" * 40),
        (8, "1" * 40),
    ]
    assert queue.run(job("1" * 40)) is Outcome.SUPERSEDED


def test_an_older_head_delivered_late_does_not_supersede_the_newer(tmp_path: Path) -> None:
    ran: list[Job] = []
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), ran.append)
    newer, older = (
        job("2" * 40, at="2026-05-15T15:21:00Z"),
        job("1" * 40, at="2026-05-15T15:20:00Z"),
    )
    queue.enqueue(newer)
    queue.enqueue(older)  # GitHub delivered the first push's event after the second's
    assert queue.latest_head(f"{REPO}#7") == "2" * 40
    same_second = job("3" * 40, at="2026-05-15T15:21:00Z")
    with consumer(queue.huey):
        wait_for(lambda: len(ran) == 1)
        time.sleep(0.2)
    assert ran == [newer]
    queue.enqueue(same_second)  # a tie goes to the later arrival
    assert queue.latest_head(f"{REPO}#7") == "3" * 40


def test_a_job_without_updated_at_is_never_superseded(tmp_path: Path) -> None:
    """A check run's rerequest names a head but no time: the worker checks it against the API."""
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), lambda _job: None)
    queue.enqueue(job("2" * 40))
    rerequest = job("1" * 40, at=None)
    queue.enqueue(rerequest)
    assert queue.latest_head(f"{REPO}#7") == "2" * 40
    assert queue.run(rerequest) is Outcome.RAN


def test_a_failed_job_is_retried(tmp_path: Path) -> None:
    attempts: list[Job] = []
    done = threading.Event()

    def flaky(received: Job) -> None:
        attempts.append(received)
        if len(attempts) == 1:
            raise ConnectionError("worker lost GitHub mid-job")
        done.set()

    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), flaky, retries=2, retry_delay=0)
    queue.enqueue(job("a" * 40))
    with consumer(queue.huey):
        assert done.wait(5)
    assert attempts == [job("a" * 40)] * 2


def test_from_settings_uses_sqlite_in_the_data_directory(tmp_path: Path) -> None:
    queue = JobQueue.from_settings(Settings(data_dir=tmp_path / "data"))
    assert isinstance(queue.huey, SqliteHuey)
    queue.enqueue(job("a" * 40))
    assert (tmp_path / "data" / "queue.sqlite3").exists()
    assert queue.latest_head(f"{REPO}#7") == "a" * 40


KILLED_WORKER = """
import os, signal, sys, time
from pathlib import Path
from veribot.bot.config import QueueTiming
from veribot.bot.queue import JobQueue, sqlite_huey

def die(job):
    Path(sys.argv[2]).write_text("started")
    os.kill(os.getpid(), signal.SIGKILL)

timing = QueueTiming(heartbeat=0.2, lease=1.0)
queue = JobQueue(sqlite_huey(Path(sys.argv[1])), die, timing=timing)
consumer = queue.huey.create_consumer(
    workers=1, periodic=False, initial_delay=0.01, backoff=1.0, max_delay=0.05,
    check_worker_health=False,
)
consumer.start()
time.sleep(10)
"""
SHORT = QueueTiming(heartbeat=0.1, lease=0.5, busy_delay=0.05)


def test_a_job_whose_worker_is_killed_runs_again_once_its_lease_lapses(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    JobQueue(sqlite_huey(path)).enqueue(job("a" * 40))
    started = tmp_path / "started"
    worker = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER, str(path), str(started)], timeout=20, check=False
    )
    assert worker.returncode == -signal.SIGKILL and started.exists()
    ran: list[Job] = []
    survivor = JobQueue(sqlite_huey(path), ran.append, timing=SHORT)
    (lease,) = survivor.state.leases()  # the dead worker's, with its job
    assert lease.name == f"{REPO}#7"
    wait_for(lambda: survivor.sweep() == 1)  # within a second (the lease), not 30 minutes
    with consumer(survivor.huey):
        wait_for(lambda: len(ran) == 1)
    assert ran == [replace(job("a" * 40), resumed=True)]
    assert survivor.state.leases() == [] and survivor.sweep() == 0


def test_a_running_job_renews_its_lease_and_is_never_swept(tmp_path: Path) -> None:
    sweeps: list[int] = []
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), timing=SHORT)

    def slow(_job: Job) -> None:  # five leases long
        for _ in range(25):
            sweeps.append(queue.sweep())
            checkpoint("progress")
            time.sleep(0.1)

    queue._runner = slow
    assert queue.run(job("a" * 40)) is Outcome.RAN
    assert set(sweeps) == {0} and queue.state.leases() == []


def test_a_job_handed_back_or_postponed_goes_back_to_the_queue(tmp_path: Path) -> None:
    def stop(_job: Job) -> None:
        raise HandBack("stopping")

    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), stop, timing=SHORT)
    assert queue.run(job("a" * 40)) is Outcome.HANDED_BACK
    assert [t.args[0] for t in queue.huey.pending()] == [replace(job("a" * 40), resumed=True)]
    assert queue.state.leases() == []

    def later(_job: Job) -> None:
        raise PostLater("GitHub is down", 30.0)

    queue._runner = later
    queue.huey.flush()
    assert queue.run(job("b" * 40, number=8)) is Outcome.POSTPONED
    (again,) = queue.huey.pending()
    assert again.eta is not None and again.args[0].resumed  # runs again in 30 s
    assert queue.state.leases() == []


def test_a_job_whose_lease_lapsed_stops_and_leaves_it_to_a_sweep(tmp_path: Path) -> None:
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), timing=SHORT)

    def stalled(_job: Job) -> None:
        queue.state.renew = lambda _lease, _ttl: False  # type: ignore[method-assign]
        time.sleep(0.3)
        checkpoint("progress")

    queue._runner = stalled
    assert queue.run(job("a" * 40)) is Outcome.LOST
    time.sleep(0.6)
    assert queue.sweep() == 1  # its job is queued again, by a live worker


def test_the_queue_keeps_only_what_is_read(tmp_path: Path) -> None:
    """No task results (nothing reads them), and each pull request's newest head for the
    retention time only."""
    now = [1_000_000.0]
    path = tmp_path / "q.sqlite3"
    ran: list[Job] = []
    queue = JobQueue(
        sqlite_huey(path),
        ran.append,
        state=SqliteJobState(path, clock=lambda: now[0]),
        timing=QueueTiming(retention=3600.0),
    )
    for n in range(20):
        queue.enqueue(job(f"{n:040d}", number=n % 5, at=f"2026-05-15T15:20:{n:02d}Z"))
    with consumer(queue.huey):
        wait_for(lambda: queue.huey.pending_count() == 0)
        time.sleep(0.2)
    assert queue.huey.result_count() == 0 and queue.huey.scheduled_count() == 0
    assert queue.state.count() == 5  # one head per pull request
    assert queue.latest_head(f"{REPO}#4") == f"{19:040d}"
    now[0] += 3601.0
    assert queue.state.count() == 0 and queue.latest_head(f"{REPO}#4") is None


def test_the_queue_and_the_delivery_ids_are_synced_to_disk(tmp_path: Path) -> None:
    """synchronous=FULL: a job acknowledged with 202 survives a power loss, as its id does."""
    full = 2
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"))
    queue.enqueue(job("a" * 40))
    assert queue.huey.storage.conn.execute("PRAGMA synchronous").fetchone() == (full,)
    state = queue.state
    assert isinstance(state, SqliteJobState)
    with state._db() as db:
        assert db.execute("PRAGMA synchronous").fetchone() == (full,)
    deliveries = DeliveryStore(tmp_path / "d.sqlite3")
    db = deliveries._connect()
    try:
        assert db.execute("PRAGMA synchronous").fetchone() == (full,)
    finally:
        db.close()


def test_two_jobs_for_one_pull_request_never_run_at_once(tmp_path: Path) -> None:
    huey = sqlite_huey(tmp_path / "q.sqlite3")
    release = threading.Event()
    running: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    def runner(j: Job) -> None:
        running.append(str(j.command.value))
        overlaps.append(tuple(running))
        if j.command is Command.REVIEW:
            release.wait(30)
        running.remove(str(j.command.value))

    queue = JobQueue(huey, runner, timing=SHORT)
    first = threading.Thread(target=queue.run, args=(job("a" * 40),))
    first.start()
    wait_for(lambda: running == ["review"])
    # A /verify of the same pull request meanwhile waits its turn; another PR does not.
    assert queue.run(job(None, command=Command.VERIFY)) is Outcome.DEFERRED
    assert queue.run(job(None, number=8, command=Command.VERIFY)) is Outcome.RAN
    release.set()
    first.join(30)
    assert ("review", "verify") in overlaps  # the other pull request's ran alongside
    queued = huey.pending()
    assert [(t.args[0].command, t.args[0].pr_number) for t in queued] == [(Command.VERIFY, 7)]
    assert queue.run(job(None, command=Command.VERIFY)) is Outcome.RAN  # its turn now


def test_the_queue_timing_comes_from_the_environment() -> None:
    timing = Settings.from_env(
        {"HOME": "/h", "VERIBOT_JOB_HEARTBEAT_S": "2", "VERIBOT_JOB_LEASE_S": "9"}
    ).timing
    assert (timing.heartbeat, timing.lease, timing.stop_grace) == (2.0, 9.0, 8.0)
    for bad in ({"VERIBOT_JOB_LEASE_S": "15"}, {"VERIBOT_STOP_GRACE_S": "soon"}):
        with pytest.raises(ConfigError):  # a lease under two heartbeats; not a number
            Settings.from_env({"HOME": "/h", **bad})


def test_every_setting_that_bounds_a_wait_is_in_the_operations_doc() -> None:
    from veribot.bot.config import QUEUE_TIMING_ENV

    doc = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
    if not doc.exists():
        pytest.skip("docs/operations.md is not in this checkout")
    text = doc.read_text(encoding="utf-8")
    # "Operating the App" and its "Throughput", up to "Isolation of the code under review".
    section = text.split("# Operating the App", 1)[1].split("\n## Isolation", 1)[0]
    extra = ("VERIBOT_WRITES_PER_MINUTE", "VERIBOT_PROGRESS_INTERVAL_S")
    missing = [v for v in (*QUEUE_TIMING_ENV.values(), *extra) if f"`{v}`" not in section]
    assert not missing
