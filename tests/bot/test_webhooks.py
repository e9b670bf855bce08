"""Signature check, delivery dedupe and routing, on GitHub's test vector and real payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from veribot.bot.queue import UNKNOWN_PULL, Command, Job
from veribot.bot.webhooks import (
    DeliveryStore,
    Ignored,
    PayloadError,
    parse_verify,
    router,
    signature,
    verify_signature,
)

EXAMPLES = Path(__file__).parents[1] / "fakes" / "webhooks"
BOT = "veribot[bot]"

# GitHub's documented test vector for X-Hub-Signature-256.
VECTOR_SECRET = b"It's a Secret to Everybody"
VECTOR_BODY = b"Hello, World!"
VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return loaded


def test_signature_matches_githubs_test_vector() -> None:
    assert signature(VECTOR_SECRET, VECTOR_BODY) == VECTOR_SIGNATURE
    assert verify_signature(VECTOR_SECRET, VECTOR_BODY, VECTOR_SIGNATURE)


@pytest.mark.parametrize(
    "secret, body, sent",
    [
        (b"another secret", VECTOR_BODY, VECTOR_SIGNATURE),
        (VECTOR_SECRET, b"Hello, World?", VECTOR_SIGNATURE),
        (VECTOR_SECRET, VECTOR_BODY, VECTOR_SIGNATURE.replace("sha256=", "sha1=")),
        (VECTOR_SECRET, VECTOR_BODY, ""),
    ],
)
def test_signature_rejects_any_mismatch(secret: bytes, body: bytes, sent: str) -> None:
    assert not verify_signature(secret, body, sent)


def test_delivery_store_accepts_an_id_once_and_persists(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "d.sqlite3")
    assert store.first_time("abc")
    assert not store.first_time("abc")
    assert not DeliveryStore(tmp_path / "d.sqlite3").first_time("abc")
    store.forget("abc")
    assert store.first_time("abc")


def test_a_delivery_is_seen_only_once_recorded(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "d.sqlite3")
    assert not store.seen("abc")  # checked before its job is queued...
    assert store.record("abc")  # ...recorded after
    assert store.seen("abc") and not store.record("abc")


@pytest.mark.parametrize("name", ["opened.2", "synchronize.1", "reopened.1", "ready_for_review.2"])
def test_pull_request_events_become_review_jobs(name: str) -> None:
    payload = example(f"pull_request.{name}.json")
    job = router.route("pull_request", payload, "d-1", BOT)
    assert job == Job(
        repo=payload["repository"]["full_name"],
        pr_number=payload["pull_request"]["number"],
        head_sha=payload["pull_request"]["head"]["sha"],
        installation_id=payload["installation"]["id"],
        command=Command.REVIEW,
        delivery_id="d-1",
        updated_at=payload["pull_request"]["updated_at"],
    )


def test_a_malformed_updated_at_is_a_bad_payload() -> None:
    payload = example("pull_request.opened.1.json")
    payload["pull_request"]["updated_at"] = "yesterday"
    with pytest.raises(PayloadError, match="updated_at"):
        router.route("pull_request", payload, "d", BOT)


def test_draft_pull_request_waits_for_ready_for_review() -> None:
    payload = example("pull_request.opened.2.json")
    payload["pull_request"]["draft"] = True
    assert isinstance(router.route("pull_request", payload, "d", BOT), Ignored)


def test_closed_pull_request_is_ignored() -> None:
    route = router.route("pull_request", example("pull_request.closed.1.json"), "d", BOT)
    assert route == Ignored("event pull_request.closed is not handled")


def test_check_run_rerequested_reviews_its_pull_request() -> None:
    payload = example("check_run.rerequested.1.json")
    route = router.route("check_run", payload, "d", BOT)
    assert isinstance(route, Job)
    assert route.head_sha == payload["check_run"]["head_sha"]
    assert route.rerun  # asked for again: a review posted for the commit does not stand in
    if payload["check_run"]["pull_requests"]:
        assert route.pr_number == payload["check_run"]["pull_requests"][0]["number"]
    else:  # a fork's, or none: the worker looks for the open pull request with that head
        assert route.pr_number == UNKNOWN_PULL


def _pr_comment(body: str, association: str = "OWNER") -> dict[str, Any]:
    payload = example("issue_comment.created.4.json")
    payload["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/1"}
    payload["comment"]["body"] = body
    payload["comment"]["author_association"] = association
    return payload


def test_issue_comment_without_command_or_on_an_issue_is_ignored() -> None:
    plain = example("issue_comment.created.4.json")
    assert router.route("issue_comment", plain, "d", BOT) == Ignored(
        "comment on an issue, not a pull request"
    )
    route = router.route("issue_comment", _pr_comment("nice change"), "d", BOT)
    assert route == Ignored("comment has no /verify command")


def test_verify_comment_becomes_a_verify_job() -> None:
    payload = _pr_comment("Please check\n/verify src/app.py::total\nthanks")
    job = router.route("issue_comment", payload, "d", BOT)
    assert isinstance(job, Job)
    assert (job.command, job.target, job.head_sha) == (Command.VERIFY, "src/app.py::total", None)
    assert job.comment_id == payload["comment"]["id"]
    assert job.requested_by == payload["comment"]["user"]["login"]
    assert not job.on_review_comment


def test_verify_from_a_reader_is_queued_for_the_worker_to_ask_the_permission_api() -> None:
    job = router.route("issue_comment", _pr_comment("/verify", "CONTRIBUTOR"), "d", BOT)
    assert isinstance(job, Job) and job.requested_by == "Codertocat"


def test_bot_comments_are_ignored() -> None:
    payload = _pr_comment("/verify")
    payload["comment"]["user"]["login"] = BOT
    assert router.route("issue_comment", payload, "d", BOT) == Ignored("comment by a bot")


def test_review_comment_verify_targets_its_line() -> None:
    payload = example("pull_request_review_comment.created.2.json")
    payload["comment"]["body"] = "/verify"
    job = router.route("pull_request_review_comment", payload, "d", BOT)
    assert isinstance(job, Job)
    assert job.on_review_comment
    assert (job.path, job.line) == (payload["comment"]["path"], payload["comment"]["line"])
    assert job.pr_number == payload["pull_request"]["number"]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("/verify", (Command.VERIFY, None)),
        ("/verify help", (Command.HELP, None)),
        ("/verify a/b.py::f", (Command.VERIFY, "a/b.py::f")),
        ("see below\n  /verify a.py  \n", (Command.VERIFY, "a.py")),
        ("please /verify this", None),
        ("/verifyall", None),
    ],
)
def test_parse_verify(body: str, expected: tuple[Command, str | None] | None) -> None:
    assert parse_verify(body) == expected


def test_a_payload_lacking_a_required_field_is_a_payload_error() -> None:
    payload = example("pull_request.opened.2.json")
    del payload["pull_request"]["head"]
    with pytest.raises(PayloadError, match=r"pull_request\.head"):
        router.route("pull_request", payload, "d", BOT)


def test_every_example_routes_or_is_ignored() -> None:
    for path in sorted(EXAMPLES.glob("*.json")):
        event = path.name.split(".")[0]
        route = router.route(event, json.loads(path.read_text(encoding="utf-8")), "d", BOT)
        assert isinstance(route, Job | Ignored), path.name
