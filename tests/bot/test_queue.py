"""The job queue with a real SQLite huey and a real consumer running worker threads."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from huey import SqliteHuey  # type: ignore[import-untyped]

from veribot.bot.config import Settings
from veribot.bot.queue import Command, Job, JobQueue, Outcome, sqlite_huey

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
from veribot.bot.queue import JobQueue, sqlite_huey

def die(job):
    Path(sys.argv[2]).write_text("started")
    os.kill(os.getpid(), signal.SIGKILL)

queue = JobQueue(sqlite_huey(Path(sys.argv[1])), die, lease=1.0)
consumer = queue.huey.create_consumer(
    workers=1, periodic=False, initial_delay=0.01, backoff=1.0, max_delay=0.05,
    check_worker_health=False,
)
consumer.start()
time.sleep(10)
"""


def test_a_job_whose_worker_is_killed_runs_again(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    JobQueue(sqlite_huey(path)).enqueue(job("a" * 40))
    started = tmp_path / "started"
    worker = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER, str(path), str(started)], timeout=20, check=False
    )
    assert worker.returncode == -signal.SIGKILL and started.exists()
    ran: list[Job] = []
    with consumer(JobQueue(sqlite_huey(path), ran.append, lease=1.0).huey):
        wait_for(lambda: len(ran) == 1)
    assert ran == [job("a" * 40)]


def test_a_finished_job_leaves_no_guard_behind(tmp_path: Path) -> None:
    ran: list[Job] = []
    queue = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"), ran.append, lease=0.5)
    queue.enqueue(job("a" * 40))
    with consumer(queue.huey):
        wait_for(lambda: len(ran) == 1)
        time.sleep(1.6)  # past the lease and a scheduler tick
    assert len(ran) == 1


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

    queue = JobQueue(huey, runner, busy_delay=0.05)
    first = threading.Thread(target=queue.run, args=(job("a" * 40),))
    first.start()
    wait_for(lambda: running == ["review"])
    # A /verify of the same pull request meanwhile waits its turn; another PR does not.
    assert queue.run(job(None, command=Command.VERIFY)) is Outcome.DEFERRED
    assert queue.run(job(None, number=8, command=Command.VERIFY)) is Outcome.RAN
    release.set()
    first.join(30)
    assert ("review", "verify") in overlaps  # the other pull request's ran alongside
    queued = [t for t in huey.pending() if not huey.is_revoked(t)]  # guards are revoked
    assert [(t.args[0].command, t.args[0].pr_number) for t in queued] == [(Command.VERIFY, 7)]
    assert queue.run(job(None, command=Command.VERIFY)) is Outcome.RAN  # its turn now
