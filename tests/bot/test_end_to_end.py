"""End to end: signed webhooks into the app, a real SQLite queue, a worker, the fake GitHub.

The worker runs the real review on a real temporary git repository (one equivalent and one
refuted change) and posts through the real PyGithub to the fake server, which validates every
request against GitHub's OpenAPI description.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from huey import SqliteHuey  # type: ignore[import-untyped]

from tests.bot.gitrepos import GitRepo
from tests.fakes.github_server import FakeGitHub, pull_files_from_git, running_fake
from veribot.bot.app import create_app
from veribot.bot.config import Settings
from veribot.bot.github import SUMMARY_MARKER, connect
from veribot.bot.queue import Job, JobQueue, sqlite_huey
from veribot.bot.webhooks import signature
from veribot.bot.worker import WorkerDeps, run_job

EXAMPLES = Path(__file__).parents[1] / "fakes" / "webhooks"
SECRET = "end-to-end secret"
REPO = "octo/demo"
NUMBER = 7

BASE = b"""def add(a: int, b: int) -> int:
    return a + b


def clamp(x: int) -> int:
    if x > 10:
        return 10
    return x
"""
# add: an equivalent rewrite; clamp: differs on 7 only.
FEATURE = b"""def add(a: int, b: int) -> int:
    return b + a


def clamp(x: int) -> int:
    if x > 10:
        return 10
    return 8 if x == 7 else x
"""
SECOND_PUSH = (
    FEATURE
    + b"""

def double(x: int) -> int:
    return x * 2
"""
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


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the worker"
        time.sleep(0.05)


class World:
    """The repository, the fake GitHub, the webhook app and a worker on one queue."""

    def __init__(self, tmp_path: Path, fake: FakeGitHub) -> None:
        self.fake = fake
        self.repo = GitRepo(tmp_path / "repo")
        self.base = self.repo.commit("base", {"pkg/calc.py": BASE})
        self.repo.git("checkout", "-q", "-b", "feature")
        self.head = self.repo.commit("feature", {"pkg/calc.py": FEATURE})
        self.pull = fake.add_pull(
            REPO,
            NUMBER,
            head_sha=self.head,
            base_sha=self.base,
            files=pull_files_from_git(self.repo.path, self.base, self.head),
        )
        settings = Settings(webhook_secret=SECRET, data_dir=tmp_path / "data")
        self.app = create_app(settings, JobQueue(sqlite_huey(settings.queue_path)))
        self.deps = WorkerDeps(
            settings=settings,
            github=lambda _installation: connect(fake.base_url, "installation-token"),
            git_data=lambda _job, _url, _shas: self.repo.path,
            progress_interval=0.0,
        )
        self.worker = JobQueue(
            sqlite_huey(settings.queue_path), lambda job: run_job(job, self.deps), retries=0
        )

    def deliver(self, client: FlaskClient, event: str, payload: dict[str, Any]) -> int:
        body = json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": signature(SECRET.encode(), body),
        }
        response = client.post(
            "/webhook", data=body, headers=headers, content_type="application/json"
        )
        return response.status_code

    def pull_request_event(self, action: str) -> dict[str, Any]:
        payload: dict[str, Any] = json.loads(
            (EXAMPLES / f"pull_request.{action}.1.json").read_text()
        )
        payload["repository"]["full_name"] = REPO
        payload["number"] = payload["pull_request"]["number"] = NUMBER
        payload["pull_request"]["head"]["sha"] = self.pull.head_sha
        payload["pull_request"]["base"]["sha"] = self.pull.base_sha
        payload["pull_request"]["draft"] = False
        return payload

    def completed_runs(self) -> list[dict[str, Any]]:
        return [r for r in self.fake.check_runs() if r["status"] == "completed"]

    def summaries(self) -> list[dict[str, Any]]:
        return [c for c in self.fake.issue_comments(REPO, NUMBER) if SUMMARY_MARKER in c["body"]]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    yield from running_fake()


@pytest.fixture
def world(tmp_path: Path, fake: FakeGitHub) -> World:
    return World(tmp_path, fake)


def test_pull_request_reviewed_then_synchronize_edits_the_summary(world: World) -> None:
    fake = world.fake
    with world.app.test_client() as client, consumer(world.worker.huey):
        assert world.deliver(client, "pull_request", world.pull_request_event("opened")) == 202
        wait_for(lambda: len(world.completed_runs()) == 1)
        wait_for(lambda: len(world.summaries()) == 1)

        (run,) = world.completed_runs()
        assert (run["head_sha"], run["conclusion"]) == (world.head, "failure")
        assert run["output"]["title"] == "1 refuted, 1 verified, 0 inconclusive"
        assert "agent was not asked" in run["output"]["summary"]
        levels = {(a["title"], a["annotation_level"]) for a in fake.annotations(run["id"])}
        assert levels == {("add: verified", "notice"), ("clamp: refuted", "failure")}

        (posted,) = fake.reviews(REPO, NUMBER)
        (comment,) = posted["comments"]
        assert comment["path"] == "pkg/calc.py" and "refuted" in comment["body"]
        assert "clamp(7)" in comment["body"]
        (summary,) = world.summaries()
        assert "**refuted**" in summary["body"] and world.head[:12] in summary["body"]
        first_id = summary["id"]

        world.pull.head_sha = world.repo.commit("second push", {"pkg/calc.py": SECOND_PUSH})
        world.pull.files = pull_files_from_git(world.repo.path, world.base, world.pull.head_sha)
        assert world.deliver(client, "pull_request", world.pull_request_event("synchronize")) == 202
        wait_for(lambda: len(world.completed_runs()) == 2)
        wait_for(lambda: world.pull.head_sha[:12] in world.summaries()[0]["body"])

    (summary,) = world.summaries()
    assert summary["id"] == first_id
    assert "double" in summary["body"]
    second = [r for r in world.completed_runs() if r["head_sha"] == world.pull.head_sha]
    assert [r["conclusion"] for r in second] == ["failure"]
    progress = [
        c.body["output"]["summary"]
        for c in fake.calls_to("PATCH", r"/check-runs/")
        if "status" not in c.body
    ]
    assert "1 of 2 functions checked" in progress


def test_verify_from_a_reader_is_refused_politely(world: World) -> None:
    payload: dict[str, Any] = json.loads((EXAMPLES / "issue_comment.created.1.json").read_text())
    payload["repository"]["full_name"] = REPO
    payload["issue"]["number"] = NUMBER
    payload["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/7"}
    payload["comment"]["body"] = "/verify pkg/calc.py::clamp"
    payload["comment"]["user"]["login"] = "reader"
    payload["comment"]["author_association"] = "NONE"
    with world.app.test_client() as client, consumer(world.worker.huey):
        assert world.deliver(client, "issue_comment", payload) == 202
        wait_for(lambda: len(world.fake.issue_comments(REPO, NUMBER)) == 1)
    (reply,) = world.fake.issue_comments(REPO, NUMBER)
    assert reply["body"].startswith("Sorry @reader")
    assert "write access" in reply["body"]
    assert world.fake.check_runs() == [] and world.fake.reactions() == []
    assert world.fake.calls_to("GET", r"/collaborators/reader/permission")


def test_jobs_run_directly_without_a_queue(world: World) -> None:
    """The job function alone, as the worker's task calls it."""
    job = Job(repo=REPO, pr_number=NUMBER, head_sha=world.head, installation_id=1)
    run_job(job, world.deps)
    again = run_job(job, world.deps)  # without the queue's de-duplication: no duplicate
    assert len(world.fake.reviews(REPO, NUMBER)) == 1
    assert len(world.summaries()) == 1
    # The first run refuted a function: that result stands, and no second check run is made.
    assert again is not None and not again.posted
    assert [r["conclusion"] for r in world.completed_runs()] == ["failure"]
