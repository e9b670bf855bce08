"""The webhook app end to end over Flask's test client, with a real SQLite job queue."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from veribot.bot.app import create_app
from veribot.bot.config import ConfigError, Settings
from veribot.bot.queue import Command, Job, JobQueue, sqlite_huey
from veribot.bot.webhooks import signature

EXAMPLES = Path(__file__).parents[1] / "fakes" / "webhooks"
SECRET = "It's a Secret to Everybody"


@pytest.fixture
def queue(tmp_path: Path) -> JobQueue:
    return JobQueue(sqlite_huey(tmp_path / "queue.sqlite3"))


@pytest.fixture
def client(tmp_path: Path, queue: JobQueue) -> Iterator[FlaskClient]:
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)
    with create_app(settings, queue).test_client() as test_client:
        yield test_client


def queued(queue: JobQueue) -> list[Job]:
    return [task.args[0] for task in queue.huey.pending()]


def deliver(
    client: FlaskClient,
    event: str,
    body: bytes,
    *,
    delivery: str | None = None,
    sign: bool = True,
    content_type: str = "application/json",
) -> tuple[int, dict[str, Any]]:
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4())}
    if sign:
        headers["X-Hub-Signature-256"] = signature(SECRET.encode(), body)
    response = client.post("/webhook", data=body, headers=headers, content_type=content_type)
    return response.status_code, response.get_json()


def test_no_secret_means_the_server_refuses_to_start(tmp_path: Path, queue: JobQueue) -> None:
    with pytest.raises(ConfigError, match="webhook secret"):
        create_app(Settings(webhook_secret=None, data_dir=tmp_path), queue)


def test_healthz(client: FlaskClient) -> None:
    assert client.get("/healthz").status_code == 200


def test_every_example_payload_is_accepted_or_cleanly_ignored(
    client: FlaskClient, queue: JobQueue
) -> None:
    for path in sorted(EXAMPLES.glob("*.json")):
        status, answer = deliver(client, path.name.split(".")[0], path.read_bytes())
        assert status in (200, 202), (path.name, status, answer)
        assert answer["status"] in ("queued", "ignored", "pong"), (path.name, answer)
    commands = sorted(job.command.value for job in queued(queue))
    assert "review" in commands


def test_opened_pull_request_queues_a_review_job(client: FlaskClient, queue: JobQueue) -> None:
    body = (EXAMPLES / "pull_request.opened.2.json").read_bytes()
    status, answer = deliver(client, "pull_request", body, delivery="d-42")
    payload = json.loads(body)
    assert (status, answer["status"]) == (202, "queued")
    (job,) = queued(queue)
    assert job.command is Command.REVIEW and job.delivery_id == "d-42"
    assert job.head_sha == payload["pull_request"]["head"]["sha"]


def test_a_redelivered_id_is_not_queued_twice(client: FlaskClient, queue: JobQueue) -> None:
    body = (EXAMPLES / "pull_request.synchronize.1.json").read_bytes()
    assert deliver(client, "pull_request", body, delivery="same")[0] == 202
    status, answer = deliver(client, "pull_request", body, delivery="same")
    assert (status, answer["status"]) == (200, "duplicate")
    assert len(queued(queue)) == 1


def test_ping_pongs(client: FlaskClient) -> None:
    body = (EXAMPLES / "ping.1.json").read_bytes()
    assert deliver(client, "ping", body) == (200, {"status": "pong"})


def test_unknown_event_is_ignored(client: FlaskClient, queue: JobQueue) -> None:
    status, answer = deliver(client, "star", b'{"action": "created"}')
    assert (status, answer["status"]) == (200, "ignored")
    assert queued(queue) == []


def test_bad_signature_is_refused_before_the_body_is_parsed(client: FlaskClient) -> None:
    response = client.post(
        "/webhook",
        data=b"{not json",
        headers={
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": "x",
            "X-Hub-Signature-256": signature(b"wrong secret", b"{not json"),
        },
        content_type="application/json",
    )
    assert response.status_code == 401


@pytest.mark.parametrize("drop", ["X-GitHub-Event", "X-GitHub-Delivery", "X-Hub-Signature-256"])
def test_missing_header_is_a_400_naming_it(client: FlaskClient, drop: str) -> None:
    body = b"{}"
    headers = {
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": "x",
        "X-Hub-Signature-256": signature(SECRET.encode(), body),
    }
    del headers[drop]
    response = client.post("/webhook", data=body, headers=headers)
    assert response.status_code == 400
    assert drop in response.get_json()["detail"]


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\xff\xfe", b""])
def test_malformed_body_is_a_400(client: FlaskClient, body: bytes) -> None:
    status, answer = deliver(client, "pull_request", body)
    assert status == 400 and answer["status"] == "bad request"


def test_payload_missing_fields_is_a_400(client: FlaskClient) -> None:
    status, answer = deliver(client, "pull_request", b'{"action": "opened"}')
    assert status == 400 and "pull_request" in answer["detail"]


def test_form_encoded_delivery_is_understood(client: FlaskClient, queue: JobQueue) -> None:
    payload = (EXAMPLES / "pull_request.opened.2.json").read_text(encoding="utf-8")
    body = urllib.parse.urlencode({"payload": payload}).encode()
    status, _ = deliver(
        client, "pull_request", body, content_type="application/x-www-form-urlencoded"
    )
    assert status == 202 and len(queued(queue)) == 1


def test_queue_failure_is_a_503_and_the_delivery_can_be_retried(tmp_path: Path) -> None:
    broken_path = tmp_path / "broken.sqlite3"
    broken = JobQueue(sqlite_huey(broken_path))
    broken.huey.storage.close()
    broken_path.unlink()
    broken_path.mkdir()  # the queue's file is now a folder: SQLite cannot open it
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)
    body = (EXAMPLES / "pull_request.opened.2.json").read_bytes()
    with create_app(settings, broken).test_client() as broken_client:
        assert deliver(broken_client, "pull_request", body, delivery="r")[0] == 503
    working = JobQueue(sqlite_huey(tmp_path / "q.sqlite3"))
    with create_app(settings, working).test_client() as working_client:
        assert deliver(working_client, "pull_request", body, delivery="r")[0] == 202


def test_a_non_ascii_signature_is_refused_not_a_server_error(client: FlaskClient) -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    headers = {
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": "sha256=\u00e9\u00e9",  # sent as latin-1 bytes
    }
    response = client.post("/webhook", data=body, headers=headers, content_type="application/json")
    assert response.status_code == 401


def test_the_deliveries_table_is_pruned(tmp_path: Path) -> None:
    from veribot.bot.webhooks import DeliveryStore

    now = [1_000_000.0]
    store = DeliveryStore(tmp_path / "d.sqlite3", keep_s=3600.0, clock=lambda: now[0])
    assert store.first_time("old")
    now[0] += 7200.0
    assert store.first_time("new")
    assert store.count() == 1  # "old" was pruned
    assert not store.first_time("new")


def test_a_delivery_is_recorded_only_once_its_job_is_queued(tmp_path: Path) -> None:
    """If serve dies before the job is stored, GitHub's redelivery must not be a duplicate:
    so the id is not recorded while the job is being queued."""
    from veribot.bot.webhooks import DeliveryStore

    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)
    seen_while_queueing: list[bool] = []

    class Watching:
        def enqueue(self, job: Job) -> None:
            store = DeliveryStore(settings.deliveries_path)
            seen_while_queueing.append(store.seen(job.delivery_id))

    body = (EXAMPLES / "pull_request.opened.2.json").read_bytes()
    with create_app(settings, Watching()).test_client() as watched:
        assert deliver(watched, "pull_request", body, delivery="d-7")[0] == 202
        assert deliver(watched, "pull_request", body, delivery="d-7")[1]["status"] == "duplicate"
    assert seen_while_queueing == [False]
