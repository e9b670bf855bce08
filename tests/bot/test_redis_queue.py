"""The job queue on Redis (several workers on several machines): a real redis-server.

The server runs on a free loopback port in a temporary folder, without persistence, and
is stopped after the module. Without the ``redis-server`` binary these tests skip; on
Debian it comes from ``apt-get install -y redis-server``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from huey import RedisHuey  # type: ignore[import-untyped]

from tests.bot.test_queue import REPO, consumer, job, wait_for
from veribot.bot.config import Settings
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


def redis_queue(url: str, runner: Runner | None = None, **options: float) -> JobQueue:
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
