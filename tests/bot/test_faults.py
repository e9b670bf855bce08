"""The GitHub App under faults, run as an installation runs it: `veribot serve` and `veribot
worker` processes on a SQLite or Redis queue, against the fake GitHub, killed at chosen steps.

A process is stopped at a named step by ``VERIBOT_TEST_PAUSE_AT`` (it writes the step's name
to ``VERIBOT_TEST_PAUSE_FILE`` and waits there for a stop); the test then sends SIGKILL or
SIGTERM, starts the process again, and checks what is on GitHub: exactly one completed check
run per head commit with the review's conclusion, one review, one summary comment, and a
queue with nothing left in it. Leases, heartbeats and retries are set short, so each test
takes seconds.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.gitrepos import GitRepo
from tests.bot.test_redis_queue import redis_url, url  # noqa: F401  (fixtures)
from tests.fakes.github_server import FakeGitHub, pull_files_from_git, running_fake
from veribot.bot.config import Settings
from veribot.bot.github import SUMMARY_MARKER
from veribot.bot.queue import Job, JobQueue
from veribot.bot.webhooks import signature

REPO = "octo/demo"
NUMBER = 3
SECRET = "fault-injection secret"
BASE = b"def inc(x: int) -> int:\n    return x + 1\n\n\ndef sq(x: int) -> int:\n    return x * x\n"
HEAD = b"def inc(x: int) -> int:\n    return 1 + x\n\n\ndef sq(x: int) -> int:\n    return x * 2\n"
# The steps of a review, in order, at which a worker can be paused (see veribot.bot.worker).
STEPS = ("started", "reviewed", "review-posted", "summary-posted", "completed")
# Each step on each queue is a case of a few seconds (real workers, killed): the default
# run keeps a spread of them, `pytest -m heavy` the rest (tests/conftest.py).
_KEPT = {"test_a_worker_killed_at_any_step_is_recovered_by_the_next":
         {"sqlite-started", "redis-review-posted", "sqlite-completed"},
         "test_sigterm_hands_the_job_back_at_any_step": {"redis-started", "sqlite-summary-posted"}}
HEAVY_CASES = {name: {f"{queue}-{step}" for queue in ("sqlite", "redis") for step in STEPS}
               - kept for name, kept in _KEPT.items()}
# Every other fault runs on both queues under `pytest -m heavy`; the default run keeps it
# on one queue, each queue taking about half of them (both queues' leases, hand-backs and
# retries also have tests of their own in test_queue.py and test_redis_queue.py).
HEAVY_CASES |= {
    "test_sigterm_lets_a_running_review_finish_within_the_grace": {"sqlite"},
    "test_a_killed_workers_pull_request_takes_new_pushes_at_once": {"redis"},
    "test_a_redelivery_after_serve_was_killed_is_reviewed_once":
        {"sqlite-after-enqueue", "redis-before-enqueue"},
    "test_a_completion_during_an_outage_lands_once_github_is_back": {"sqlite"},
    "test_a_completion_left_by_a_killed_worker_lands_at_the_next_start": {"redis"},
    "test_the_same_event_under_new_delivery_ids_is_reviewed_once": {"sqlite"},
}
FAST = {
    "VERIBOT_JOB_HEARTBEAT_S": "0.2",
    "VERIBOT_JOB_LEASE_S": "1.0",
    "VERIBOT_BUSY_DELAY_S": "0.3",
    "VERIBOT_QUEUE_POLL_S": "0.1",
    "VERIBOT_GITHUB_ATTEMPTS": "2",
    "VERIBOT_GITHUB_BACKOFF_S": "0.05",
    "VERIBOT_POSTING_RETRY_S": "0.3",
    "VERIBOT_STOP_GRACE_S": "0",
}
WAIT_S = 60.0


def _app_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


_KEY = _app_key()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Process:
    """A `veribot` command running as a child process, its output in a log file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("ab")
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "veribot.bot.cli", *args],
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    def signal(self, number: int) -> None:
        self.popen.send_signal(number)

    def wait(self, timeout: float = WAIT_S) -> int:
        try:
            return self.popen.wait(timeout)
        finally:
            self._out.close()

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class App:
    """The fake GitHub with one pull request, and the App's processes on one queue."""

    def __init__(self, tmp_path: Path, fake: FakeGitHub, redis: str | None) -> None:
        self.tmp = tmp_path
        self.fake = fake
        self.redis = redis
        self.repo = GitRepo(tmp_path / "repo")
        self.base = self.repo.commit("base", {"m.py": BASE})
        self.repo.git("checkout", "-q", "-b", "feature")
        self.head = self.repo.commit("feature", {"m.py": HEAD})
        self.pull = fake.add_pull(
            REPO,
            NUMBER,
            head_sha=self.head,
            base_sha=self.base,
            files=pull_files_from_git(self.repo.path, self.base, self.head),
        )
        fake.set_clone_url(REPO, str(self.repo.path))
        self.data = tmp_path / "data"
        self.settings = Settings(data_dir=self.data, redis_url=redis, webhook_secret=SECRET)
        self.queue = JobQueue.from_settings(self.settings)
        self.processes: list[Process] = []
        self.pause_file = tmp_path / "paused"
        self.updated = 0

    def env(self, pause_at: str | None = None, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("VERIBOT_") and k != "ANTHROPIC_API_KEY"
        }
        env |= FAST | {
            "VERIBOT_DATA_DIR": str(self.data),
            "VERIBOT_GITHUB_API_URL": self.fake.base_url,
            "VERIBOT_APP_ID": "7",
            "VERIBOT_PRIVATE_KEY": _KEY,
            "VERIBOT_WEBHOOK_SECRET": SECRET,
            "VERIBOT_TEST_PAUSE_FILE": str(self.pause_file),
        }
        if self.redis:
            env["VERIBOT_REDIS_URL"] = self.redis
        if pause_at:
            env["VERIBOT_TEST_PAUSE_AT"] = pause_at
        return env | extra

    def worker(self, pause_at: str | None = None, **extra: str) -> Process:
        self.pause_file.unlink(missing_ok=True)
        n = len(self.processes)
        process = Process(["worker"], self.env(pause_at, **extra), self.tmp / f"worker{n}.log")
        self.processes.append(process)
        return process

    def serve(self, pause_at: str | None = None) -> tuple[Process, int]:
        self.pause_file.unlink(missing_ok=True)
        port = _free_port()
        n = len(self.processes)
        process = Process(
            ["serve", "--port", str(port)], self.env(pause_at), self.tmp / f"serve{n}.log"
        )
        self.processes.append(process)

        def healthy() -> bool:
            assert process.popen.poll() is None, process.output()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            try:
                connection.request("GET", "/healthz")
                return connection.getresponse().status == 200
            except OSError:
                return False
            finally:
                connection.close()

        wait_for(healthy, "serve to answer")
        return process, port

    def paused_at(self, step: str, process: Process) -> None:
        def there() -> bool:
            assert process.popen.poll() is None, f"exited early:\n{process.output()}"
            return self.pause_file.exists() and self.pause_file.read_text() == step

        wait_for(there, f"the pause at {step!r}")

    def job(self, head: str | None = None) -> Job:
        self.updated += 1
        return Job(
            REPO,
            NUMBER,
            head or self.head,
            1,
            delivery_id=str(uuid.uuid4()),
            updated_at=f"2026-05-15T15:20:{self.updated:02d}Z",
        )

    def event(self) -> bytes:
        self.updated += 1
        payload = {
            "action": "synchronize",
            "number": NUMBER,
            "pull_request": {
                "number": NUMBER,
                "draft": False,
                "head": {"sha": self.pull.head_sha},
                "base": {"sha": self.pull.base_sha},
                "updated_at": f"2026-05-15T15:20:{self.updated:02d}Z",
            },
            "repository": {"full_name": REPO},
            "installation": {"id": 1},
        }
        return json.dumps(payload).encode()

    def our_runs(self, head: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.fake.check_runs() if r["head_sha"] == (head or self.head)]

    def completed(self, head: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.our_runs(head) if r["status"] == "completed"]

    def summaries(self) -> list[dict[str, Any]]:
        return [c for c in self.fake.issue_comments(REPO, NUMBER) if SUMMARY_MARKER in c["body"]]

    def idle(self) -> bool:
        """Nothing queued, scheduled or running."""
        huey = self.queue.huey
        return (
            huey.pending_count() == 0
            and huey.scheduled_count() == 0
            and not self.queue.state.leases()
        )

    def reviewed(self, head: str | None = None) -> bool:
        head = head or self.head
        return (
            bool(self.completed(head))
            and any(head[:12] in c["body"] for c in self.summaries())
            and self.idle()
        )

    def assert_reviewed_once(self) -> None:
        """Exactly one completed check run (refuted: failure) on the head, none left running,
        one review, one summary comment, nothing left in the queue."""
        runs = self.our_runs()
        assert [(r["status"], r["conclusion"]) for r in runs] == [("completed", "failure")]
        assert runs[0]["output"]["title"] == "1 refuted, 1 verified, 0 inconclusive"
        (review,) = self.fake.reviews(REPO, NUMBER)
        assert review["commit_id"] == self.head and len(review["comments"]) == 1
        (summary,) = self.summaries()
        assert "**refuted**" in summary["body"] and self.head[:12] in summary["body"]
        assert self.idle()
        self.fake.assert_no_violations()

    def close(self) -> None:
        for process in self.processes:
            process.stop()


def deliver(port: int, body: bytes, delivery: str, timeout: float = 30.0) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(
            "POST",
            "/webhook",
            body=body,
            headers={
                "Content-Type": "application/json",
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": delivery,
                "X-Hub-Signature-256": signature(SECRET.encode(), body),
            },
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read())["status"]
    finally:
        connection.close()


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    yield from running_fake()


@pytest.fixture(params=["sqlite", "redis"])
def app(request: pytest.FixtureRequest, tmp_path: Path, fake: FakeGitHub) -> Iterator[App]:
    redis = request.getfixturevalue("url") if request.param == "redis" else None
    running = App(tmp_path, fake, redis)
    try:
        yield running
    finally:
        running.close()


def finish(app: App, head: str | None = None) -> None:
    """Start a worker, let it finish everything, and stop it (SIGTERM: it exits 0).

    Done is the review posted and the queue idle twice, half a second apart: a job just
    taken off the queue holds no lease yet for an instant, and a stop then would hand it
    back."""

    def settled() -> bool:
        if not app.reviewed(head):
            return False
        time.sleep(0.5)
        return app.reviewed(head)

    worker = app.worker()
    wait_for(settled, "the review to be posted")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.output()


# -- item 1 and 4: a worker killed at each step ------------------------------------------


@pytest.mark.parametrize("step", STEPS)
def test_a_worker_killed_at_any_step_is_recovered_by_the_next(app: App, step: str) -> None:
    """SIGKILL (or an OOM kill) at each step: a restarted worker takes the job back once
    the lease lapses, continues from what is on GitHub, and posts each thing once."""
    app.queue.enqueue(app.job())
    worker = app.worker(pause_at=step)
    app.paused_at(step, worker)
    worker.signal(signal.SIGKILL)
    assert worker.wait() == -signal.SIGKILL
    finish(app)
    app.assert_reviewed_once()
    assert len(app.fake.calls_to("POST", r"/check-runs$")) == 1  # the started run is reused


@pytest.mark.parametrize("step", STEPS)
def test_sigterm_hands_the_job_back_at_any_step(app: App, step: str) -> None:
    """SIGTERM (docker stop) with no grace left: the worker hands the job back and exits 0,
    saying so in the check run if it is still running; the next worker finishes it."""
    app.queue.enqueue(app.job())
    worker = app.worker(pause_at=step)
    app.paused_at(step, worker)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.output()
    (run,) = app.our_runs()
    if run["status"] != "completed":
        assert "handed back" in run["output"]["summary"]
    assert app.queue.huey.pending_count() == 1  # handed back, not lost
    finish(app)
    app.assert_reviewed_once()
    assert len(app.fake.calls_to("POST", r"/check-runs$")) == 1


def test_sigterm_lets_a_running_review_finish_within_the_grace(app: App) -> None:
    app.queue.enqueue(app.job())
    worker = app.worker(pause_at="reviewed", VERIBOT_STOP_GRACE_S="60")
    app.paused_at("reviewed", worker)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.output()
    app.assert_reviewed_once()


def test_a_killed_workers_pull_request_takes_new_pushes_at_once(app: App) -> None:
    """A push after the kill is reviewed as soon as a worker runs (not after 30 minutes),
    and the killed review's check run on the older head is completed, cancelled."""
    app.queue.enqueue(app.job())
    worker = app.worker(pause_at="started")
    app.paused_at("started", worker)
    worker.signal(signal.SIGKILL)
    worker.wait()
    more = HEAD + b"\n\ndef cube(x: int) -> int:\n    return x\n"
    newer = app.repo.commit("more", {"m.py": more})
    app.fake.push(
        REPO, NUMBER, head_sha=newer, files=pull_files_from_git(app.repo.path, app.base, newer)
    )
    app.queue.enqueue(app.job(newer))
    started = time.monotonic()
    finish(app, newer)
    assert time.monotonic() - started < 30
    assert [r["conclusion"] for r in app.completed(newer)] == ["failure"]
    old = app.our_runs()
    assert [(r["status"], r["conclusion"]) for r in old] == [("completed", "cancelled")]
    assert newer[:12] in old[0]["output"]["summary"]


# -- item 2: serve killed between accepting a delivery and queueing its job --------------


@pytest.mark.parametrize("step", ["before-enqueue", "after-enqueue"])
def test_a_redelivery_after_serve_was_killed_is_reviewed_once(app: App, step: str) -> None:
    serve, port = app.serve(pause_at=step)
    body, delivery = app.event(), str(uuid.uuid4())
    answer: list[tuple[int, str]] = []

    def send() -> None:
        with contextlib.suppress(OSError):  # the connection dies with serve
            answer.append(deliver(port, body, delivery))

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    app.paused_at(step, serve)
    serve.signal(signal.SIGKILL)
    serve.wait()
    sender.join(10)
    assert answer == []  # GitHub saw no answer: it marks the delivery failed
    serve, port = app.serve()
    assert deliver(port, body, delivery) == (202, "queued")  # the redelivery is taken
    assert deliver(port, body, delivery) == (200, "duplicate")
    finish(app)
    app.assert_reviewed_once()


# -- item 3: the completion is retried until it lands ------------------------------------


def _completes(body: Any) -> bool:
    return isinstance(body, dict) and body.get("status") == "completed"


def test_a_completion_during_an_outage_lands_once_github_is_back(app: App) -> None:
    app.fake.inject("PATCH", r"/check-runs/\d+$", 502, when=_completes, seconds=3.0)
    app.queue.enqueue(app.job())
    finish(app)
    assert app.fake.outage_over()
    app.assert_reviewed_once()
    (run,) = app.completed()  # with the full results, not only the conclusion
    assert "could not be posted" not in run["output"]["summary"]
    assert len(app.fake.annotations(run["id"])) == 2
    refused = [c for c in app.fake.calls_to("PATCH", r"/check-runs/") if c.status == 502]
    assert len(refused) > 2  # tried in the outage, and later again


def test_a_completion_left_by_a_killed_worker_lands_at_the_next_start(app: App) -> None:
    app.fake.inject("PATCH", r"/check-runs/\d+$", 502, when=_completes, seconds=4.0)
    app.queue.enqueue(app.job())
    worker = app.worker()
    wait_for(
        lambda: any(c.status == 502 for c in app.fake.calls_to("PATCH", r"/check-runs/")),
        "a refused completion",
    )
    worker.signal(signal.SIGKILL)
    worker.wait()
    wait_for(app.fake.outage_over, "the outage to end")
    finish(app)
    app.assert_reviewed_once()


# -- item 5: the same event under new delivery ids ---------------------------------------


def test_the_same_event_under_new_delivery_ids_is_reviewed_once(app: App) -> None:
    _serve, port = app.serve()
    body = app.event()
    for _ in range(3):
        assert deliver(port, body, str(uuid.uuid4()))[0] == 202
    finish(app)
    app.assert_reviewed_once()
    assert len(app.fake.calls_to("POST", r"/check-runs$")) == 1  # the code ran once
