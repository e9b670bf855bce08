"""The job queue on Redis (several workers on several machines): a real redis-server.

The server runs on a free loopback port in a temporary folder, without persistence, and
is stopped after the module. Without the ``redis-server`` binary these tests skip; on
Debian it comes from ``apt-get install -y redis-server``. The leases and expiring entries
beside the queue (:mod:`veribot.bot.jobstate`) are checked here on both stores.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from huey import RedisHuey  # type: ignore[import-untyped]

from tests.bot.test_queue import REPO, consumer, job, wait_for
from veribot.bot.config import QueueTiming, Settings
from veribot.bot.jobstate import JobState, Lease, RedisJobState, SqliteJobState
from veribot.bot.queue import Command, Job, JobQueue, Outcome, Runner


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    folder = tmp_path_factory.mktemp("redis")
    port = _free_port()
    server = subprocess.Popen(
        [
            *(binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)),
            *("--save", "", "--appendonly", "no", "--logfile", str(folder / "redis.log")),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log = (folder / "redis.log").read_text(errors="replace")
                    pytest.fail(f"redis-server did not start: {log[-2000:]}")
                time.sleep(0.05)
        yield url
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def url(redis_url: str) -> str:
    """The server, emptied for each test."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.close()
    return redis_url


def redis_queue(url: str, runner: Runner | None = None, **options: Any) -> JobQueue:
    huey = RedisHuey("veribot", url=url)
    return JobQueue(huey, **options) if runner is None else JobQueue(huey, runner, **options)


def test_from_settings_uses_redis_when_a_url_is_set(url: str, tmp_path: Path) -> None:
    queue = JobQueue.from_settings(Settings(data_dir=tmp_path, redis_url=url))
    assert isinstance(queue.huey, RedisHuey)
    queue.enqueue(job("a" * 40))
    assert not (tmp_path / "queue.sqlite3").exists()
    other_machine = JobQueue.from_settings(Settings(data_dir=tmp_path / "elsewhere", redis_url=url))
    assert other_machine.latest_head(f"{REPO}#7") == "a" * 40
    assert [task.args[0] for task in other_machine.huey.pending()] == [job("a" * 40)]


def test_a_newer_head_supersedes_queued_jobs_for_older_heads(url: str) -> None:
    ran: list[Job] = []
    webhook = redis_queue(url)
    webhook.enqueue(job("1" * 40, at="2026-05-15T15:20:00Z"))
    webhook.enqueue(job("1" * 40, number=8))
    webhook.enqueue(job(None, command=Command.VERIFY))
    webhook.enqueue(job("2" * 40, at="2026-05-15T15:21:00Z"))
    webhook.enqueue(job("0" * 40, at="2026-05-15T15:19:00Z"))  # delivered late: stays stale
    worker = redis_queue(url, ran.append)
    with consumer(worker.huey):
        wait_for(lambda: len(ran) == 3)
        time.sleep(0.3)
    assert sorted((j.pr_number, j.head_sha or "-") for j in ran) == [
        (7, "-"),
        (7, "2" * 40),
        (8, "1" * 40),
    ]
    assert worker.run(job("1" * 40)) is Outcome.SUPERSEDED


def test_a_failed_job_is_retried(url: str) -> None:
    attempts: list[Job] = []
    done = threading.Event()

    def flaky(received: Job) -> None:
        attempts.append(received)
        if len(attempts) == 1:
            raise ConnectionError("worker lost GitHub mid-job")
        done.set()

    queue = redis_queue(url, flaky, retries=2, retry_delay=0)
    queue.enqueue(job("a" * 40))
    with consumer(queue.huey):
        assert done.wait(10)
    assert attempts == [job("a" * 40)] * 2


# -- leases and what the storage keeps -------------------------------------------------------

KILLED_WORKER = """
import os, signal, sys, time
from pathlib import Path
from huey import RedisHuey
from veribot.bot.config import QueueTiming
from veribot.bot.queue import JobQueue

def die(job):
    Path(sys.argv[2]).write_text("started")
    os.kill(os.getpid(), signal.SIGKILL)

timing = QueueTiming(heartbeat=0.2, lease=1.0)
queue = JobQueue(RedisHuey("veribot", url=sys.argv[1]), die, timing=timing)
consumer = queue.huey.create_consumer(workers=1, periodic=False, check_worker_health=False)
consumer.start()
time.sleep(10)
"""
SHORT = QueueTiming(heartbeat=0.1, lease=0.5, busy_delay=0.05)


def test_a_job_whose_worker_is_killed_runs_again_on_another_machine(
    url: str, tmp_path: Path
) -> None:
    redis_queue(url).enqueue(job("a" * 40))
    started = tmp_path / "started"
    worker = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER, url, str(started)], timeout=20, check=False
    )
    assert worker.returncode == -signal.SIGKILL and started.exists()
    ran: list[Job] = []
    survivor = redis_queue(url, ran.append, timing=SHORT)
    (lease,) = survivor.state.leases()  # the dead worker's, with its job
    assert lease.name == f"{REPO}#7"
    wait_for(lambda: survivor.sweep() == 1)  # once the lease lapses: a second, not 30 minutes
    with consumer(survivor.huey):
        wait_for(lambda: len(ran) == 1)
    assert ran == [replace(job("a" * 40), resumed=True)]
    assert survivor.state.leases() == [] and survivor.sweep() == 0


def test_the_queue_keeps_only_what_is_read(url: str, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, redis_url=url, timing=QueueTiming(retention=1.0))
    ran: list[Job] = []
    queue = JobQueue.from_settings(settings, ran.append)
    for n in range(12):
        queue.enqueue(job(f"{n:040d}", number=n % 3, at=f"2026-05-15T15:20:{n:02d}Z"))
    assert queue.state.count() == 3  # one head per pull request
    with consumer(queue.huey):
        wait_for(lambda: queue.huey.pending_count() == 0)
        time.sleep(0.2)
    assert queue.huey.result_count() == 0  # no task results: nothing reads them
    wait_for(lambda: queue.state.count() == 0)  # kept for the retention time only


@pytest.fixture(params=["sqlite", "redis"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> JobState:
    if request.param == "sqlite":
        return SqliteJobState(tmp_path / "q.sqlite3")
    server = request.getfixturevalue("url")
    return RedisJobState(redis.Redis.from_url(server))


def test_a_lease_is_one_at_a_time_renewed_while_alive_and_taken_once_lapsed(
    state: JobState,
) -> None:
    first = Lease("octo/demo#7", "holder-1", "host:1", b"job one")
    second = Lease("octo/demo#7", "holder-2", "host:2", b"job two")
    other = Lease("octo/demo#8", "holder-3", "host:1", b"job three")
    assert state.claim(first, 0.4)
    assert not state.claim(second, 0.4)  # one job of a pull request at a time
    assert state.claim(other, 0.4)
    state.release(other)
    for _ in range(4):  # renewed: alive past its first lease time
        time.sleep(0.2)
        assert state.renew(first, 0.4)
    assert state.lapsed() == []
    time.sleep(0.5)  # first's holder stops renewing
    assert not state.renew(first, 0.4)  # too late: it may be taken
    assert state.lapsed() == [first]
    assert state.claim(second, 5.0)  # the pull request is free for a new job...
    assert state.lapsed() == [first]  # ...and the lapsed job is still to be queued again
    assert state.take(first, 0.3) and not state.take(first, 0.3)  # by one worker only
    assert state.lapsed() == []  # taken: held while its job is queued again
    time.sleep(0.4)  # the taker stopped before queueing it: it lapses again, not lost
    assert state.lapsed() == [first]
    assert state.take(first, 5.0)
    state.release(first)  # queued again
    assert state.leases() == [second]
    state.release(second)
    assert state.leases() == []


def test_entries_expire(state: JobState) -> None:
    state.put("head:a", b"1", 0.3)
    state.put("head:b", b"2", 30.0)
    assert (state.get("head:a"), state.count()) == (b"1", 2)
    time.sleep(0.4)
    assert state.get("head:a") is None and state.count() == 1
    state.delete("head:b")
    assert state.get("head:b") is None and state.count() == 0
