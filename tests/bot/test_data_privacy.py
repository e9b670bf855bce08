"""The data directory is private (0700, files 0600), a removed installation is forgotten,
and a worker whose sandbox fails its self-test reviews proof-only and says why."""

from __future__ import annotations

import os
import sqlite3
import stat
import uuid
from pathlib import Path

from veribot.bot import llmcache
from veribot.bot.app import create_app
from veribot.bot.config import Settings, secure_data_dir
from veribot.bot.queue import JobQueue, sqlite_huey
from veribot.bot.webhooks import DeliveryStore, signature
from veribot.bot.worker import NOT_EXECUTED_NOTE, WorkerDeps, sandbox_checked
from veribot.checks.hints.archive import Archive
from veribot.checks.sandbox.selftest import Probe, SelfTest

EXAMPLES = Path(__file__).parents[1] / "fakes" / "webhooks"
SECRET = "It's a Secret to Everybody"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_stores_are_created_private_whatever_the_umask(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = os.umask(0o022)
    try:
        DeliveryStore(data / "deliveries.sqlite3")
        sqlite_huey(data / "queue.sqlite3")
        with sqlite3.connect(data / "deliveries.sqlite3") as db:  # WAL files appear
            db.execute("SELECT 1")
    finally:
        os.umask(old)
    assert _mode(data) == 0o700
    for path in data.iterdir():
        assert _mode(path) == 0o600, path


def test_secure_data_dir_tightens_an_old_installation(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "repos" / "octo__app" / ".git").mkdir(parents=True)
    (data / "repos" / "octo__app" / "app.py").write_text("SECRET = 1\n")
    (data / "llm.sqlite3").write_text("")
    for path in (data, data / "repos", data / "repos" / "octo__app"):
        path.chmod(0o755)
    (data / "llm.sqlite3").chmod(0o644)
    old = os.umask(0o022)
    try:
        secure_data_dir(data)
        new_file = data / "later.sqlite3"
        new_file.write_text("")  # after: the umask keeps new files private
        assert os.umask(0o022) == 0o077
    finally:
        os.umask(old)
    assert _mode(data) == 0o700
    assert _mode(data / "repos") == 0o700
    assert _mode(data / "repos" / "octo__app" / "app.py") == 0o600
    assert _mode(data / "llm.sqlite3") == 0o600
    assert _mode(new_file) == 0o600


def test_a_removed_installation_is_purged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name in ("octocat__Hello-World", "octocat__other", "someone__else"):
        (data / "repos" / name).mkdir(parents=True)
        (data / "repos" / name / "code.py").write_text("x = 1\n")
    with sqlite3.connect(data / "llm.sqlite3") as db:
        db.executescript(llmcache._SCHEMA)
        db.execute("INSERT INTO llm_answers VALUES ('k', 'm', 'm-1', 'octocat code', '{}', 0)")
    Archive(data / "hints.sqlite3")  # its schema
    with sqlite3.connect(data / "hints.sqlite3") as db:
        for repo in ("octocat/Hello-World", "someone/else"):
            db.execute("INSERT INTO hints VALUES (?, 'key', '{}', 0)", (repo,))
    settings = Settings(webhook_secret=SECRET, data_dir=data)
    queue = JobQueue(sqlite_huey(tmp_path / "queue.sqlite3"))
    body = (EXAMPLES / "installation.deleted.1.json").read_bytes()
    with create_app(settings, queue).test_client() as client:
        response = client.post("/webhook", data=body, content_type="application/json", headers={
            "X-GitHub-Event": "installation", "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": signature(SECRET.encode(), body)})
    assert response.status_code == 200
    assert sorted(p.name for p in (data / "repos").iterdir()) == ["someone__else"]
    with sqlite3.connect(data / "llm.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM llm_answers").fetchone() == (0,)
    with sqlite3.connect(data / "hints.sqlite3") as db:
        assert db.execute("SELECT repo FROM hints").fetchall() == [("someone/else",)]


def test_a_failed_self_test_makes_the_worker_proof_only_and_says_why() -> None:
    deps = WorkerDeps(settings=Settings(), github=lambda _i: None,  # type: ignore[arg-type,return-value]
                      git_data=lambda _j, _u, _s: Path("."))
    escaped = SelfTest("bubblewrap", (Probe("read /proc/1/environ", True, "found a token"),))
    gated = sandbox_checked(deps, escaped)
    assert gated.execute is False
    assert gated.notes == (
        "Code execution is off: the sandbox self-test found that the code under review "
        "could read /proc/1/environ.",)
    assert NOT_EXECUTED_NOTE not in gated.notes  # added by the review when it posts
    passed = SelfTest("bubblewrap", (Probe("read /proc/1/environ", False, "held"),))
    assert sandbox_checked(deps, passed) is deps
