"""The worker's job function against the fake GitHub and real git repositories.

The queue and the webhook are covered end to end in test_end_to_end.py; here each job kind
runs directly: `/verify` (help, a named function, a review comment's line), a bad
`.veribot.toml`, a review that cannot finish, progress throttling, and the App's tokens;
and the App's review once per commit, resumed from its saved results (real processes
killed at each step: test_faults.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.gitrepos import GitRepo
from tests.bot.processes import could_run_code, started_processes
from tests.fakes.github_server import FakeGitHub, pull_files_from_git, running_fake
from veribot.bot.config import QueueTiming, RepoConfig, Settings
from veribot.bot.github import SUMMARY_MARKER, CheckOutput, GitHubClient, connect
from veribot.bot.jobstate import SqliteJobState
from veribot.bot.posting import Journal
from veribot.bot.queue import Command, Job, JobQueue, Outcome, sqlite_huey
from veribot.bot.review import GitSource, ReviewRequest, review
from veribot.bot.worker import (
    HELP_TEXT,
    NOT_EXECUTED_NOTE,
    GitCache,
    InstallationTokens,
    ProgressReporter,
    WorkerDeps,
    config_filter,
    run_job,
    target_filter,
)

REPO = "octo/demo"
NUMBER = 3
BASE = b"def inc(x: int) -> int:\n    return x + 1\n\n\ndef sq(x: int) -> int:\n    return x * x\n"
HEAD = b"def inc(x: int) -> int:\n    return 1 + x\n\n\ndef sq(x: int) -> int:\n    return x * 2\n"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    yield from running_fake()


class Setup:
    def __init__(self, tmp_path: Path, fake: FakeGitHub, base_extra: dict[str, bytes]) -> None:
        self.fake = fake
        self.repo = GitRepo(tmp_path / "repo")
        self.base = self.repo.commit("base", {"m.py": BASE, **base_extra})
        self.repo.git("checkout", "-q", "-b", "feature")
        self.head = self.repo.commit("feature", {"m.py": HEAD})
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
        )
        for login in ("dev", "maintainer"):
            fake.set_permission(REPO, login, "write")

    def job(self, command: Command = Command.REVIEW, **fields: Any) -> Job:
        head = self.head if command is Command.REVIEW else None
        return Job(REPO, NUMBER, head, 1, command=command, **fields)

    def replies(self) -> list[str]:
        comments = self.fake.issue_comments(REPO, NUMBER)
        return [str(c["body"]) for c in comments if SUMMARY_MARKER not in c["body"]]


@pytest.fixture
def setup(tmp_path: Path, fake: FakeGitHub) -> Setup:
    return Setup(tmp_path, fake, {})


def test_verify_help_reacts_and_replies(setup: Setup) -> None:
    run_job(setup.job(Command.HELP, comment_id=55, requested_by="maintainer"), setup.deps)
    (reply,) = setup.replies()
    assert reply.startswith(HELP_TEXT) and reply.endswith("<!-- veribot:reply 55 -->")
    assert [(r["content"], r["comment_id"]) for r in setup.fake.reactions()] == [("+1", 55)]


def test_verify_one_function_replies_with_its_verdict_only(setup: Setup) -> None:
    job = setup.job(Command.VERIFY, target="m.py::sq", comment_id=9, requested_by="dev")
    run_job(job, setup.deps)
    (reply,) = setup.replies()
    assert "`m.py::sq`" in reply and "**refuted**" in reply
    assert "m.py::inc" not in reply
    assert [r["content"] for r in setup.fake.reactions()] == ["eyes"]
    assert setup.fake.check_runs() == []  # a targeted check leaves the PR's check run alone


def test_verify_on_a_review_comment_checks_the_function_on_that_line(setup: Setup) -> None:
    job = setup.job(
        Command.VERIFY,
        path="m.py",
        line=2,
        comment_id=77,
        on_review_comment=True,
        requested_by="someone",
    )
    setup.fake.set_permission(REPO, "someone", "write")
    run_job(job, setup.deps)
    (reply,) = setup.fake.state.review_comments.values()
    assert reply["in_reply_to_id"] == 77
    assert "m.py::inc" in reply["body"] and "**verified**" in reply["body"]
    assert setup.fake.reactions()[0]["subject"] == "pull-request-review-comment"


def test_verify_names_the_changed_units_when_the_target_matches_none(setup: Setup) -> None:
    run_job(setup.job(Command.VERIFY, target="m.py::nope", requested_by="dev"), setup.deps)
    (reply,) = setup.replies()
    assert reply.startswith("No changed function matches `m.py::nope`")
    assert "`m.py::sq`" in reply


def test_verify_whole_pull_request_reviews_and_answers(setup: Setup) -> None:
    run_job(setup.job(Command.VERIFY, comment_id=5, requested_by="dev"), setup.deps)
    (run,) = setup.fake.check_runs()
    assert run["conclusion"] == "failure"
    assert any(
        r.startswith("The pull request was reviewed again: 2 units") for r in setup.replies()
    )


def test_bad_config_on_the_base_is_reported_neutral(tmp_path: Path, fake: FakeGitHub) -> None:
    setup = Setup(tmp_path, fake, {".veribot.toml": b"inconclusive_conclusion = 'maybe'\n"})
    run_job(setup.job(), setup.deps)
    (run,) = fake.check_runs()
    assert (run["conclusion"], run["output"]["title"]) == ("neutral", "Invalid .veribot.toml")
    assert "inconclusive_conclusion must be one of" in run["output"]["summary"]


def test_config_excludes_and_sets_the_inconclusive_conclusion(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    setup = Setup(tmp_path, fake, {".veribot.toml": b'exclude = ["m.py"]\n'})
    run_job(setup.job(), setup.deps)
    (run,) = fake.check_runs()
    assert (run["conclusion"], run["output"]["title"]) == ("success", "No changed Python functions")


def test_a_review_that_cannot_run_fails_the_check_with_the_reason(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    setup = Setup(tmp_path, fake, {})
    missing = tmp_path / "not-a-repo"
    missing.mkdir()
    deps = WorkerDeps(
        settings=setup.deps.settings,
        github=setup.deps.github,
        git_data=lambda _job, _url, _shas: missing,
    )
    run_job(setup.job(), deps)
    (run,) = fake.check_runs()
    assert (run["conclusion"], run["output"]["title"]) == ("failure", "Review failed")
    assert "nothing was verified" in run["output"]["summary"]


def test_progress_updates_are_throttled(setup: Setup) -> None:
    client = GitHubClient(connect(setup.fake.base_url, "t"), REPO, bot_login="veribot[bot]")
    run_id = client.start_check_run("veribot", setup.head, CheckOutput("Reviewing", "start"))
    now = [0.0]
    progress = ProgressReporter(client, run_id, clock=lambda: now[0], interval=5.0)
    for done, at in [(0, 0.0), (1, 0.1), (2, 1.0), (3, 6.0), (4, 7.0), (12, 20.0)]:
        now[0] = at
        progress(done, 12)
    updates = [c.body["output"]["summary"] for c in setup.fake.calls_to("PATCH", "/check-runs/")]
    assert updates == ["1 of 12 functions checked", "3 of 12 functions checked"]


def test_installation_tokens_are_cached_and_refreshed_before_expiry(fake: FakeGitHub) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    now = [time.time()]
    tokens = InstallationTokens(12345, pem, fake.base_url, wall_clock=lambda: now[0])
    first = tokens.token(1)
    now[0] += 50 * 60  # 10 minutes left: still more than the 5-minute margin
    assert tokens.token(1) == first
    now[0] += 6 * 60  # 4 minutes left: refresh
    second = tokens.token(1)
    assert second != first and second.startswith("ghs_")
    assert tokens.token(2) not in (first, second)  # one token per installation
    calls = fake.calls_to("POST", r"^/app/installations/\d+/access_tokens$")
    assert [c.path.split("/")[3] for c in calls] == ["1", "1", "2"]
    assert connect(fake.base_url, second).get_repo(REPO).full_name == REPO


def test_git_cache_fetches_the_commits_even_from_the_pull_ref_only_once(
    setup: Setup, tmp_path: Path
) -> None:
    setup.repo.git("update-ref", f"refs/pull/{NUMBER}/head", setup.head)
    setup.repo.git("checkout", "-q", "main")
    setup.repo.git("branch", "-D", "feature")  # the head is reachable only as the PR ref
    cache = GitCache(tmp_path / "cache", lambda _installation, _repo: None)
    job = setup.job()
    tree = cache(job, str(setup.repo.path), (setup.base, setup.head))
    assert tree == tmp_path / "cache" / "octo__demo"
    assert (tree / ".git").is_dir()
    again = cache(job, "/nonexistent/origin", (setup.base, setup.head))  # nothing to fetch
    assert again == tree


def test_budget_units_cut_the_rest_to_inconclusive(tmp_path: Path, fake: FakeGitHub) -> None:
    setup = Setup(tmp_path, fake, {".veribot.toml": b"[budget]\nunits = 1\n"})
    outcome = run_job(setup.job(), setup.deps)
    assert outcome is not None and outcome.report is not None
    found = {i.unit.entry: (i.result.verdict.value, i.result.reason) for i in outcome.report.items}
    assert found == {"inc": ("verified", "proof"), "sq": ("inconclusive", "budget")}
    (run,) = fake.check_runs()
    assert (run["conclusion"], run["output"]["title"]) == (
        "neutral",
        "0 refuted, 1 verified, 1 inconclusive",
    )


def test_filters_choose_units_before_anything_is_decided(setup: Setup) -> None:
    source = GitSource(setup.repo.path, setup.base, setup.head)
    excluded = review(ReviewRequest(source, select=config_filter(RepoConfig(exclude=("m.py",)))))
    assert excluded.items == () and [u.entry for u in excluded.filtered_out] == ["inc", "sq"]
    one = review(ReviewRequest(source, select=target_filter("m.py::sq")))
    assert [(i.unit.entry, i.result.verdict.value) for i in one.items] == [("sq", "refuted")]
    on_line = review(ReviewRequest(source, select=target_filter(None, "m.py", 2)))
    assert [i.unit.entry for i in on_line.items] == ["inc"]


def test_execute_false_in_the_config_reviews_proof_only(tmp_path: Path, fake: FakeGitHub) -> None:
    setup = Setup(tmp_path, fake, {".veribot.toml": b"execute = false\n"})
    outcome = run_job(setup.job(), setup.deps)
    assert outcome is not None and outcome.report is not None
    assert outcome.conclusion == "neutral"
    sq = next(i for i in outcome.report.items if i.unit.entry == "sq")
    assert (sq.result.verdict.value, sq.result.reason) == ("inconclusive", "not-executed")
    assert NOT_EXECUTED_NOTE in outcome.summary


# -- once per commit, and resumable ----------------------------------------------------------


def app_deps_for(setup: Setup, tmp_path: Path, **fields: Any) -> WorkerDeps:
    """The App's dependencies: a review of the same commits is made once, and its results
    are saved beside the queue until they are all posted."""
    state = SqliteJobState(tmp_path / "queue.sqlite3")
    return dataclasses.replace(setup.deps, dedupe=True, journal=Journal(state, 3600.0), **fields)


def test_a_review_already_posted_for_the_same_commits_is_not_made_again(
    setup: Setup, tmp_path: Path
) -> None:
    """The same event under new delivery ids, or a job run again after it finished, reviews
    nothing more; a re-run someone asks for reviews again."""
    deps = app_deps_for(setup, tmp_path)
    first = run_job(setup.job(delivery_id="d-1"), deps)
    assert first is not None and first.conclusion == "failure"
    with started_processes() as started:
        assert run_job(setup.job(delivery_id="d-2"), deps) is None
        assert run_job(setup.job(delivery_id="d-1", resumed=True), deps) is None
    assert not [p for p in started if could_run_code(p)]  # the code did not run again
    (run,) = setup.fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["external_id"].startswith("veribot:")
    assert run["external_id"].endswith(":full")
    with started_processes() as started:  # a refutation stands: a re-run could only miss it
        rerun = run_job(setup.job(delivery_id="d-3", rerun=True), deps)
    assert not [p for p in started if could_run_code(p)]
    assert rerun is not None and not rerun.posted and rerun.conclusion == "failure"
    assert len(setup.fake.check_runs()) == 1


def test_a_re_run_reviews_again_when_nothing_was_refuted(tmp_path: Path, fake: FakeGitHub) -> None:
    """A re-run of a commit whose review refuted nothing posts a new check run."""
    setup = Setup(tmp_path, fake, {".veribot.toml": b"include = ['other/**']\n"})
    deps = app_deps_for(setup, tmp_path)
    assert run_job(setup.job(delivery_id="d-1"), deps) is not None
    rerun = run_job(setup.job(delivery_id="d-2", rerun=True), deps)
    assert rerun is not None and rerun.posted
    assert [r["conclusion"] for r in fake.check_runs()] == ["success", "success"]


def test_a_verify_in_the_app_never_replaces_a_refutation(setup: Setup, tmp_path: Path) -> None:
    """`/verify` on a commit whose review refuted a function answers that the refutation
    stands, and posts no check run (GitHub would take its conclusion as the check's) nor a
    new summary."""
    deps = app_deps_for(setup, tmp_path)
    assert run_job(setup.job(delivery_id="d-1"), deps) is not None
    summary = [c["body"] for c in setup.fake.issue_comments(REPO, NUMBER)]
    run_job(setup.job(Command.VERIFY, comment_id=5, requested_by="dev", delivery_id="d-2"), deps)
    (run,) = setup.fake.check_runs()
    assert run["conclusion"] == "failure"
    (reply,) = setup.replies()
    assert "stands" in reply and "refuted a changed function" in reply
    assert run["html_url"] in reply
    assert [c["body"] for c in setup.fake.issue_comments(REPO, NUMBER)][:1] == summary


def test_a_proof_only_re_run_never_replaces_a_full_review(tmp_path: Path, fake: FakeGitHub) -> None:
    """A review that may not run code (here: the sandbox is off) does not replace the check run
    of one that could, even one that refuted nothing."""
    setup = Setup(tmp_path, fake, {".veribot.toml": b"include = ['other/**']\n"})
    deps = app_deps_for(setup, tmp_path)
    assert run_job(setup.job(delivery_id="d-1"), deps) is not None
    proof_only = dataclasses.replace(deps, execute=False)
    rerun = run_job(setup.job(delivery_id="d-2", rerun=True), proof_only)
    assert rerun is not None and not rerun.posted and rerun.conclusion == "success"
    (run,) = fake.check_runs()
    assert run["external_id"].endswith(":full")


def test_saved_results_are_posted_by_the_next_run_without_reviewing_again(
    setup: Setup, tmp_path: Path
) -> None:
    """A worker stopping after the review (SIGTERM past its grace) hands the job back; the
    next run posts what is missing from the saved results."""
    queue = JobQueue(sqlite_huey(tmp_path / "queue.sqlite3"), timing=QueueTiming())
    deps = dataclasses.replace(setup.deps, dedupe=True, journal=Journal(queue.state, 3600.0))
    queue._runner = lambda job: run_job(job, deps)  # type: ignore[assignment]
    # The stop comes while the review is being posted (just after it was saved).
    setup.fake.before("GET", r"/pulls/\d+/reviews$", queue.stopping.now.set)
    assert queue.run(setup.job(delivery_id="d-1")) is Outcome.HANDED_BACK
    (run,) = setup.fake.check_runs()
    assert run["status"] == "in_progress" and run["output"]["title"] == "Handed back"
    queue.stopping.now.clear()
    (again,) = [task.args[0] for task in queue.huey.pending()]
    assert again.resumed
    with started_processes() as started:
        assert queue.run(again) is Outcome.RAN
    assert not [p for p in started if could_run_code(p)]  # from the saved results
    (run,) = setup.fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["output"]["title"] == "1 refuted, 1 verified, 0 inconclusive"
    assert len(setup.fake.reviews(REPO, NUMBER)) == 1
    assert len(setup.fake.issue_comments(REPO, NUMBER)) == 1
    assert queue.state.count() == 0  # the saved results are dropped once posted


def test_a_resumed_job_of_a_superseded_head_cancels_its_check_run(
    setup: Setup, tmp_path: Path
) -> None:
    client = GitHubClient(connect(setup.fake.base_url, "t"), REPO, bot_login="veribot[bot]")
    client.start_check_run("veribot review", setup.head, CheckOutput("Reviewing", "..."))
    newer = "f" * 40
    setup.fake.push(REPO, NUMBER, head_sha=newer, files=[])
    assert run_job(setup.job(resumed=True), app_deps_for(setup, tmp_path)) is None
    (run,) = setup.fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "cancelled")
    assert newer[:12] in run["output"]["summary"]


def test_a_proof_only_review_stands_down_while_a_full_one_runs(setup: Setup) -> None:
    """A `/verify` run proof-only (as the Action's under `issue_comment`) while a push's full
    review is still running posts no check run of its own, and says so in the thread."""
    client = GitHubClient(connect(setup.fake.base_url, "token"), REPO, bot_login="veribot[bot]")
    running = client.start_check_run(
        "veribot review", setup.head, CheckOutput("Reviewing", "..."), "veribot:push:full"
    )
    proof_only = dataclasses.replace(setup.deps, execute=False)
    run_job(setup.job(Command.VERIFY, comment_id=8, requested_by="dev"), proof_only)
    (run,) = setup.fake.check_runs()
    assert run["id"] == running and run["status"] == "in_progress"
    (reply,) = setup.replies()
    assert "still running" in reply


def _tested_change(tmp_path: Path, fake: FakeGitHub, title: str) -> dict[str, Any]:
    """A pull request whose refuted change (`sq`) a test it adds shows; its check run."""
    repo = GitRepo(tmp_path / "tested")
    base = repo.commit("base", {"m.py": BASE})
    head = repo.commit("feature", {"m.py": HEAD, "tests/test_m.py": (
        b"from m import sq\n\n\ndef test_sq() -> None:\n    assert sq(3) == 6\n")})
    pull = fake.add_pull(REPO, NUMBER, head_sha=head, base_sha=base,
                         files=pull_files_from_git(repo.path, base, head))
    pull.title = title
    deps = WorkerDeps(settings=Settings(data_dir=tmp_path / "data"),
                      github=lambda _installation: connect(fake.base_url, "token"),
                      git_data=lambda _job, _url, _shas: repo.path)
    run_job(Job(REPO, NUMBER, head, 1), deps)
    (run,) = fake.check_runs()
    return run


def test_a_behaviour_change_a_new_test_shows_passes_the_check(
        tmp_path: Path, fake: FakeGitHub) -> None:
    run = _tested_change(tmp_path, fake, "Square properly")
    assert run["output"]["title"].startswith("1 refuted, ")  # (what `standing` reads)
    assert run["conclusion"] == "success"
    assert "(tested)" in run["output"]["summary"]


def test_a_pull_request_titled_a_refactoring_fails_on_a_behaviour_change(
        tmp_path: Path, fake: FakeGitHub) -> None:
    run = _tested_change(tmp_path, fake, "refactor: square the other way")
    assert run["conclusion"] == "failure"
    assert "a refactoring that changes behaviour" in run["output"]["summary"]
