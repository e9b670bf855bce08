"""The GitHub App's webhook: a Flask app that verifies, dedupes, enqueues and answers at once.

``POST /webhook`` checks ``X-Hub-Signature-256`` over the raw body before anything parses
it, drops deliveries already accepted (``X-GitHub-Delivery``), routes the event to a job
and answers 202 (queued) or 200 (ping, ignored, duplicate). A bad request gets a 400 or
401 with a clear message; only a queue that cannot take the job gives a 503, so that
GitHub's redelivery can try again. ``GET /healthz`` answers 200.

A delivery counts as accepted only once its job is stored in the queue: the webhook checks
the id, queues the job, and then records the id. If it dies in between, the redelivery is
queued (a job queued twice reviews its commit once). The steps ``before-enqueue`` and
``after-enqueue`` are where ``VERIBOT_TEST_PAUSE_AT`` can hold a request (test scaffolding).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from typing import Any, Protocol

from flask import Flask, Response, jsonify, request

from veribot.bot.config import ConfigError, Settings
from veribot.bot.purge import purge_installation
from veribot.bot.queue import Job, Stopping, pause_here
from veribot.bot.webhooks import (
    DeliveryStore,
    Ignored,
    PayloadError,
    router,
    verify_signature,
)

log = logging.getLogger(__name__)

# GitHub caps webhook payloads at 25 MB.
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024


class JobSink(Protocol):
    """Where accepted jobs go (a :class:`veribot.bot.queue.JobQueue`)."""

    def enqueue(self, job: Job) -> None: ...


def _answer(status: int, outcome: str, detail: str = "") -> tuple[Response, int]:
    body: dict[str, Any] = {"status": outcome}
    if detail:
        body["detail"] = detail
    return jsonify(body), status


def _payload(raw: bytes, content_type: str) -> Any:
    """The JSON document; GitHub's form encoding wraps it in a ``payload`` field."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        fields = urllib.parse.parse_qs(raw.decode("utf-8"), strict_parsing=True)
        if "payload" not in fields:
            raise ValueError("form body has no payload field")
        return json.loads(fields["payload"][0])
    return json.loads(raw)


def create_app(settings: Settings, queue: JobSink) -> Flask:
    """The webhook app; raises :class:`ConfigError` when no webhook secret is configured."""
    if not settings.webhook_secret:
        raise ConfigError(
            "no webhook secret configured (set VERIBOT_WEBHOOK_SECRET or "
            "VERIBOT_WEBHOOK_SECRET_FILE): refusing to accept unsigned deliveries"
        )
    secret = settings.webhook_secret.encode("utf-8")
    deliveries = DeliveryStore(settings.deliveries_path)
    never = Stopping()  # a paused request waits until the process is killed

    def pause(step: str) -> None:
        pause_here(step, settings.pause_at, settings.pause_file, never)

    app = Flask("veribot")
    app.config["MAX_CONTENT_LENGTH"] = MAX_PAYLOAD_BYTES

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        return _answer(200, "ok")

    @app.post("/webhook")
    def webhook() -> tuple[Response, int]:
        event = request.headers.get("X-GitHub-Event")
        delivery = request.headers.get("X-GitHub-Delivery")
        sent_signature = request.headers.get("X-Hub-Signature-256")
        missing = [
            name
            for name, value in (
                ("X-GitHub-Event", event),
                ("X-GitHub-Delivery", delivery),
                ("X-Hub-Signature-256", sent_signature),
            )
            if not value
        ]
        if missing or event is None or delivery is None or sent_signature is None:
            return _answer(400, "bad request", f"missing header(s): {', '.join(missing)}")
        raw = request.get_data(cache=False)
        if not verify_signature(secret, raw, sent_signature):
            log.warning("bad signature", extra={"delivery": delivery, "event": event})
            return _answer(401, "bad signature", "X-Hub-Signature-256 does not match the body")
        try:
            payload = _payload(raw, request.content_type or "")
        except (ValueError, UnicodeDecodeError) as error:
            return _answer(400, "bad request", f"body is not a JSON document: {error}")
        if not isinstance(payload, dict):
            return _answer(400, "bad request", "body is not a JSON object")
        if event == "ping":
            return _answer(200, "pong")
        try:
            route = router.route(event, payload, delivery, settings.bot_login)
        except PayloadError as error:
            return _answer(400, "bad request", str(error))
        if deliveries.seen(delivery):
            return _answer(200, "duplicate", f"delivery {delivery} was already accepted")
        if event == "installation" and payload.get("action") == "deleted":
            purge_installation(settings, payload)
        if isinstance(route, Ignored):
            deliveries.record(delivery)
            log.info("ignored", extra={"delivery": delivery, "event": event})
            return _answer(200, "ignored", route.reason)
        pause("before-enqueue")
        try:
            queue.enqueue(route)
        except Exception:
            # The one broad catch of this boundary: GitHub redelivers on a 5xx.
            log.exception("could not queue", extra={"delivery": delivery, "pr": route.pr_key})
            return _answer(503, "unavailable", "the job queue could not take the job")
        pause("after-enqueue")
        deliveries.record(delivery)  # only now: the job is stored
        return _answer(202, "queued", f"{route.command.value} {route.pr_key}")

    return app
