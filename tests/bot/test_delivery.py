"""Delivery to GitHub as GitHub really behaves: size limits, errors mid-review, moving heads.

The real worker and PyGithub client against the fake GitHub (which enforces GitHub's byte
limits and commit-scoped review anchors), on real git repositories in temporary folders.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.gitrepos import GitRepo
from tests.fakes.github_server import (
    CHECK_OUTPUT_MAX_BYTES,
    COMMENT_BODY_MAX_CHARS,
    FakeGitHub,
    pull_files_from_git,
    running_fake,
)
from veribot.bot.config import Settings
from veribot.bot.github import SUMMARY_MARKER, RequestPolicy, connect
from veribot.bot.queue import Command, Job
from veribot.bot.worker import WorkerDeps, run_job

REPO = "octo/demo"
NUMBER = 3


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    yield from running_fake()


def no_sleep_policy() -> RequestPolicy:
    return RequestPolicy(sleep=lambda _s: None)


class Pr:
    """A pull request from ``base`` to ``head`` files, served by the fake."""

    def __init__(
        self,
        tmp_path: Path,
        fake: FakeGitHub,
        base: dict[str, bytes],
        head: dict[str, bytes],
        **deps: Any,
    ) -> None:
        self.fake = fake
        self.repo = GitRepo(tmp_path / "repo")
        self.base = self.repo.commit("base", base)
        self.repo.git("checkout", "-q", "-b", "feature")
        self.head = self.repo.commit("feature", head)
        fake.add_pull(
            REPO,
            NUMBER,
            head_sha=self.head,
            base_sha=self.base,
            files=pull_files_from_git(self.repo.path, self.base, self.head),
        )
        self.deps = WorkerDeps(
            settings=Settings(data_dir=tmp_path / "data"),
            github=lambda _installation: connect(fake.base_url, "token"),
            git_data=lambda _job, _url, _shas: self.repo.path,
            policy=no_sleep_policy,
            **deps,
        )

    def job(self, command: Command = Command.REVIEW, **fields: Any) -> Job:
        head = self.head if command is Command.REVIEW else None
        return Job(REPO, NUMBER, head, 1, command=command, **fields)

    def summary(self) -> str:
        (comment,) = [
            c for c in self.fake.issue_comments(REPO, NUMBER) if SUMMARY_MARKER in c["body"]
        ]
        return str(comment["body"])


def many_functions(count: int, body: str) -> bytes:
    # Non-ASCII names: a character limit is not a byte limit.
    return "".join(
        f"def größe_{i:04d}_berechnung(x: int) -> int:\n    return {body}\n\n\n"
        for i in range(count)
    ).encode()


def test_a_600_function_pull_request_posts_within_githubs_limits(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    files = {f"pkg/modul_{n}.py": many_functions(100, "x + 1") for n in range(6)}
    changed = {f"pkg/modul_{n}.py": many_functions(100, "1 + x") for n in range(6)}
    config = {".veribot.toml": b"[budget]\nunits = 2\n"}
    pr = Pr(tmp_path, fake, files | config, changed)
    outcome = run_job(pr.job(), pr.deps)
    assert outcome is not None and outcome.report is not None
    assert len(outcome.report.items) == 600
    fake.assert_no_violations()
    (run,) = fake.check_runs()
    assert run["status"] == "completed" and run["conclusion"] == "neutral"
    check_summary = run["output"]["summary"]
    assert len(check_summary.encode()) <= CHECK_OUTPUT_MAX_BYTES
    assert len(fake.annotations(run["id"])) == 600  # every unit, in the annotations
    summary = pr.summary()
    assert len(summary) <= COMMENT_BODY_MAX_CHARS
    # What was cut is said, with the count, and where the rest is.
    assert "more units" in summary and run["html_url"] in summary
    assert "more units" in check_summary and "annotations" in check_summary
    assert summary.rstrip().endswith(f"Reviewed at {pr.head[:12]}.</sub>")
