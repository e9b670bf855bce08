"""Delivery to GitHub as GitHub really behaves: size limits, errors mid-review, moving heads.

The real worker and PyGithub client against the fake GitHub (which enforces GitHub's byte
limits and commit-scoped review anchors), on real git repositories in temporary folders.
"""

from __future__ import annotations

import dataclasses
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
from veribot.bot.queue import Command, Job, PostLater
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


# 600 units either way. The analysis of a unit grows with the size of its module, so six
# modules of 100 functions take minutes: a benchmark-sized case (`pytest -m heavy`).
@pytest.mark.parametrize(
    ("modules", "per_module"),
    [
        pytest.param(60, 10, id="60-modules-of-10"),
        pytest.param(6, 100, id="6-modules-of-100", marks=pytest.mark.heavy),
    ],
)
def test_a_600_function_pull_request_posts_within_githubs_limits(
    tmp_path: Path, fake: FakeGitHub, modules: int, per_module: int
) -> None:
    files = {f"pkg/modul_{n}.py": many_functions(per_module, "x + 1") for n in range(modules)}
    changed = {f"pkg/modul_{n}.py": many_functions(per_module, "1 + x") for n in range(modules)}
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
    assert "more undecided units" in summary and run["html_url"] in summary
    assert "more undecided units" in check_summary and "annotations" in check_summary
    assert summary.rstrip().endswith(f"Reviewed at {pr.head[:12]}.</sub>")


BASE_CODE = (
    b"def inc(x: int) -> int:\n    return x + 1\n\n\ndef sq(x: int) -> int:\n    return x * x\n"
)
HEAD_CODE = (
    b"def inc(x: int) -> int:\n    return 1 + x\n\n\ndef sq(x: int) -> int:\n    return x * 2\n"
)


def small_pr(tmp_path: Path, fake: FakeGitHub, **deps: Any) -> Pr:
    return Pr(tmp_path, fake, {"m.py": BASE_CODE}, {"m.py": HEAD_CODE}, **deps)


def test_a_failing_summary_comment_still_completes_and_does_not_rerun(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = small_pr(tmp_path, fake)
    fake.inject("POST", r"/issues/\d+/comments$", 502, times=50)
    outcome = run_job(pr.job(), pr.deps)  # no exception: the queue must not run it again
    assert outcome is not None and outcome.conclusion == "failure"
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")


def test_a_failing_review_post_falls_back_to_the_summary(tmp_path: Path, fake: FakeGitHub) -> None:
    pr = small_pr(tmp_path, fake)
    fake.inject("POST", r"/pulls/\d+/reviews$", 500, times=50)
    outcome = run_job(pr.job(), pr.deps)
    assert outcome is not None
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert "could not be placed inline" in pr.summary() and "m.py" in pr.summary()


def test_a_check_run_the_full_output_cannot_complete_is_completed_with_the_reason(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = small_pr(tmp_path, fake)
    # One progress update (5 attempts), then every attempt at the full output (5).
    fake.inject("PATCH", r"/check-runs/\d+$", 500, times=10)
    run_job(pr.job(), pr.deps)
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert "could not be posted" in run["output"]["summary"]


def test_a_transient_error_after_the_check_started_completes_it_neutral(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    from veribot.bot.github import GitHubError

    pr = small_pr(tmp_path, fake)

    def git_data(_job: Job, _url: str, _shas: tuple[str, ...]) -> Path:
        raise GitHubError("get contents: GitHub answered 502", 502)

    deps = WorkerDeps(settings=pr.deps.settings, github=pr.deps.github, git_data=git_data)
    outcome = run_job(pr.job(), deps)
    assert outcome is not None and outcome.conclusion == "neutral"
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")
    assert "502" in run["output"]["summary"] and "Re-run" in run["output"]["summary"]


def test_an_interrupted_review_completes_its_check_run(tmp_path: Path, fake: FakeGitHub) -> None:
    pr = small_pr(tmp_path, fake)

    def git_data(_job: Job, _url: str, _shas: tuple[str, ...]) -> Path:
        raise KeyboardInterrupt

    deps = WorkerDeps(settings=pr.deps.settings, github=pr.deps.github, git_data=git_data)
    with pytest.raises(KeyboardInterrupt):
        run_job(pr.job(), deps)
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")


def test_a_failing_reply_after_a_targeted_verify_is_not_rerun(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = small_pr(tmp_path, fake)
    fake.set_permission(REPO, "dev", "write")
    fake.inject("POST", r"/issues/\d+/comments$", 503, times=50)
    run_job(pr.job(Command.VERIFY, target="m.py::sq", requested_by="dev"), pr.deps)


def test_a_far_rate_limit_reset_sends_the_job_back_to_the_queue_until_then(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    """No sleep past the job's lease: the job is queued again for after the reset."""
    waits: list[float] = []

    def policy() -> RequestPolicy:
        return RequestPolicy(sleep=waits.append, max_rate_limit_wait=120.0)

    pr = small_pr(tmp_path, fake)
    fake.inject("GET", r"/pulls/\d+$", 429, headers={"Retry-After": "2999"}, times=50)
    with pytest.raises(PostLater) as later:
        run_job(pr.job(), dataclasses.replace(pr.deps, policy=policy))
    assert later.value.delay >= 2999.0 and max(waits, default=0.0) <= 120.0
    assert fake.check_runs() == []


def test_every_request_names_the_api_version_and_lists_take_full_pages(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    """X-GitHub-Api-Version on every request, no obsolete preview media type, 100 to a page,
    and no fetch of the whole commit (up to 300 files) to start a check run or a review."""
    pr = small_pr(tmp_path, fake)
    fake.set_permission(REPO, "dev", "write")
    run_job(pr.job(), pr.deps)
    run_job(pr.job(Command.VERIFY, target="m.py::sq", requested_by="dev", comment_id=3), pr.deps)
    assert fake.calls and fake.reviews(REPO, NUMBER)
    assert {c.headers.get("x-github-api-version") for c in fake.calls} == {"2022-11-28"}
    assert not [c.headers["accept"] for c in fake.calls if "preview" in c.headers["accept"]]
    lists = [c for c in fake.calls if c.operation and "/list" in c.operation]
    assert lists and {c.query.get("per_page") for c in lists} == {"100"}
    assert fake.calls_to("GET", r"/commits/[0-9a-f]{40}$") == []


@pytest.mark.parametrize("after", [False, True], ids=["not-posted", "posted-anyway"])
def test_a_verify_reply_answered_with_a_server_error_is_posted_once(
    tmp_path: Path, fake: FakeGitHub, after: bool
) -> None:
    """The answer to `/verify` is sent again after a 5xx unless GitHub posted it anyway
    (found by its marker): exactly one answer either way."""
    pr = small_pr(tmp_path, fake)
    fake.set_permission(REPO, "dev", "write")
    fake.inject("POST", r"/issues/\d+/comments$", 502, after=after)
    job = pr.job(Command.VERIFY, target="m.py::sq", requested_by="dev", comment_id=41)
    run_job(job, pr.deps)
    (reply,) = [c["body"] for c in fake.issue_comments(REPO, NUMBER)]
    assert "**refuted**" in reply and reply.endswith("<!-- veribot:reply 41 -->")


@pytest.mark.parametrize("after", [False, True], ids=["not-posted", "posted-anyway"])
def test_a_verify_reply_under_a_review_comment_is_posted_once_after_a_server_error(
    tmp_path: Path, fake: FakeGitHub, after: bool
) -> None:
    pr = small_pr(tmp_path, fake)
    fake.set_permission(REPO, "dev", "write")
    fake.inject("POST", r"/pulls/\d+/comments/\d+/replies$", 502, after=after)
    job = pr.job(
        Command.VERIFY,
        path="m.py",
        line=5,
        comment_id=77,
        on_review_comment=True,
        requested_by="dev",
    )
    run_job(job, pr.deps)
    (reply,) = fake.state.review_comments.values()
    assert reply["in_reply_to_id"] == 77 and "**refuted**" in reply["body"]
    assert reply["body"].endswith("<!-- veribot:reply 77 -->")


def test_a_transient_error_before_any_code_ran_is_raised_for_a_bounded_retry(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    from veribot.bot.github import GitHubError

    pr = small_pr(tmp_path, fake)
    fake.inject("POST", r"/check-runs$", 502, times=50)
    with pytest.raises(GitHubError):
        run_job(pr.job(), pr.deps)
    fake.inject("GET", r"/pulls/\d+$", 404, times=50)  # not transient: no retry
    assert run_job(pr.job(), pr.deps) is None


def long_sq(last: str) -> bytes:
    body = "".join(f"    x{i} = x + {i}\n" for i in range(10))
    inc = "def inc(x: int) -> int:\n    return x + 1\n\n\n"
    return f"{inc}def sq(x: int) -> int:\n{body}    return {last}\n".encode()


def test_a_push_mid_review_leaves_comments_on_the_reviewed_commits_diff(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = Pr(tmp_path, fake, {"m.py": long_sq("x * x")}, {"m.py": long_sq("x * 2")})
    # A force-push while the review runs: a whole new m.py, every line of it in the diff.
    rewritten = "".join(f"v{i} = {i}\n" for i in range(40)).encode()
    pr.repo.git("checkout", "-q", "-b", "rewrite", pr.base)
    pushed = pr.repo.commit("rewrite", {"m.py": rewritten})

    files = pull_files_from_git(pr.repo.path, pr.base, pushed)
    # The push lands as the review is being posted (after the bot last looked at the head).
    fake.before(
        "GET",
        r"/pulls/\d+/reviews$",
        lambda: fake.push(REPO, NUMBER, head_sha=pushed, files=files),
    )
    outcome = run_job(pr.job(), pr.deps)
    assert outcome is not None and outcome.conclusion == "failure"
    fake.assert_no_violations()  # no comment posted off the reviewed commit's diff
    (review,) = fake.reviews(REPO, NUMBER)
    assert review["commit_id"] == pr.head
    # sq (lines 5-16) is refuted; its comment sits on its first changed line in the diff of
    # the reviewed commit (16; not 13, the hunk's first context line), not on line 5 of the
    # pushed file.
    assert [(c["path"], c["line"]) for c in review["comments"]] == [("m.py", 16)]


def test_a_refused_review_gives_its_comments_back_for_the_summary(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = small_pr(tmp_path, fake)
    fake.inject("POST", r"/pulls/\d+/reviews$", 422, message="Pull request review thread line")
    outcome = run_job(pr.job(), pr.deps)
    assert outcome is not None and outcome.conclusion == "failure"
    assert fake.reviews(REPO, NUMBER) == []
    assert "could not be placed inline" in pr.summary() and "`m.py` line" in pr.summary()


# -- the git cache -------------------------------------------------------------------------


def origin_with_branches(tmp_path: Path) -> tuple[GitRepo, str, str]:
    origin = GitRepo(tmp_path / "origin")
    base = origin.commit("base", {"m.py": BASE_CODE})
    for n in range(5):
        origin.git("branch", f"unrelated-{n}")
    origin.git("checkout", "-q", "-b", "feature")
    head = origin.commit("feature", {"m.py": HEAD_CODE})
    origin.git("update-ref", f"refs/pull/{NUMBER}/head", head)
    origin.git("checkout", "-q", "main")
    origin.git("branch", "-D", "feature")  # the head is reachable only as the PR's ref
    return origin, base, head


def cache_job() -> Job:
    return Job(REPO, NUMBER, None, 1)


def test_twenty_concurrent_fetches_into_one_cache_all_succeed(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from veribot.bot.worker import GitCache

    origin, base, head = origin_with_branches(tmp_path)
    cache = GitCache(tmp_path / "cache", lambda _installation, _repo: None)
    with ThreadPoolExecutor(max_workers=20) as pool:
        trees = list(
            pool.map(lambda _n: cache(cache_job(), str(origin.path), (base, head)), range(20))
        )
    assert len(set(trees)) == 1
    tree = GitRepo.__new__(GitRepo)
    tree.path = trees[0]
    assert tree.git("cat-file", "-t", head) == "commit"


def test_the_cache_fetches_only_the_commits_it_needs(tmp_path: Path) -> None:
    from veribot.bot.worker import GitCache

    origin, base, head = origin_with_branches(tmp_path)
    tree = GitCache(tmp_path / "cache", lambda _installation, _repo: None)(
        cache_job(), str(origin.path), (base, head)
    )
    cached = GitRepo.__new__(GitRepo)
    cached.path = tree
    refs = cached.git("for-each-ref", "--format=%(refname)").splitlines()
    assert not [r for r in refs if "unrelated" in r]  # not every branch of the origin
    assert cached.git("cat-file", "-t", base) == cached.git("cat-file", "-t", head) == "commit"


def test_a_transient_fetch_failure_is_retried_with_backoff(tmp_path: Path) -> None:
    from veribot.bot.worker import GitCache

    origin, base, head = origin_with_branches(tmp_path)
    link = tmp_path / "origin-link"
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the origin comes back while the cache waits
        waits.append(seconds)
        if not link.exists():
            link.symlink_to(origin.path)

    cache = GitCache(tmp_path / "cache", lambda _installation, _repo: None, sleep=sleep)
    tree = cache(cache_job(), str(link), (base, head))
    assert tree.is_dir() and len(waits) == 1 and waits[0] > 0


def test_a_fetch_that_hangs_is_stopped_and_reported(tmp_path: Path) -> None:
    import socket

    from veribot.bot.worker import FetchError, GitCache

    _origin, base, head = origin_with_branches(tmp_path)
    with socket.socket() as server:  # accepts connections, never answers
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/octo/demo.git"
        cache = GitCache(
            tmp_path / "cache", lambda _installation, _repo: None, timeout=1.0, attempts=1
        )
        with pytest.raises(FetchError, match="timed out"):
            cache(cache_job(), url, (base, head))


def test_a_shallow_checkout_is_deepened_for_the_merge_base_or_says_so(tmp_path: Path) -> None:
    import shutil

    from veribot.bot.worker import FetchError, merge_base

    origin = GitRepo(tmp_path / "origin")
    fork_point = origin.commit("start", {"m.py": BASE_CODE})
    origin.git("checkout", "-q", "-b", "feature")
    head = origin.commit("feature", {"m.py": HEAD_CODE})
    origin.git("checkout", "-q", "main")
    base = origin.commit("main moves on", {"other.py": b"X = 1\n"})
    shallow = tmp_path / "shallow"
    origin.git(
        "clone", "-q", "--depth", "1", "--no-single-branch", origin.path.as_uri(), str(shallow)
    )
    assert merge_base(shallow, base, head) == fork_point  # deepened from origin
    again = tmp_path / "again"
    origin.git(
        "clone", "-q", "--depth", "1", "--no-single-branch", origin.path.as_uri(), str(again)
    )
    shutil.rmtree(origin.path)
    with pytest.raises(FetchError, match="shallow"):
        merge_base(again, base, head)  # never the base itself, silently


# -- /verify ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("permission", "answered"), [("read", False), ("write", True)])
def test_verify_asks_the_permission_api_whatever_the_author_association(
    tmp_path: Path, fake: FakeGitHub, permission: str, answered: bool
) -> None:
    from veribot.bot.webhooks import router

    pr = small_pr(tmp_path, fake)
    fake.set_permission(REPO, "member", permission)
    payload = {
        "action": "created",
        "issue": {"number": NUMBER, "pull_request": {"url": "x"}},
        "comment": {
            "id": 41,
            "body": "/verify m.py::sq",
            "user": {"login": "member", "type": "User"},
            "author_association": "MEMBER",  # an organisation member may be read-only
        },
        "repository": {"full_name": REPO},
        "installation": {"id": 1},
    }
    job = router.route("issue_comment", payload, "d-1", "veribot[bot]")
    assert isinstance(job, Job)
    run_job(job, pr.deps)
    asked = fake.calls_to("GET", r"/collaborators/member/permission$")
    assert len(asked) == 1
    replies = [c["body"] for c in fake.issue_comments(REPO, NUMBER)]
    assert len(replies) == 1
    assert ("only available to people with write access" in replies[0]) is not answered


# -- re-runs -------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "fakes" / "webhooks"


@pytest.mark.parametrize(
    ("event", "key"),
    [("check_run", "check_run"), ("check_suite", "check_suite")],
)
def test_rerun_of_a_fork_pull_requests_check_reviews_it_again(
    tmp_path: Path, fake: FakeGitHub, event: str, key: str
) -> None:
    import json

    from veribot.bot.webhooks import router

    pr = small_pr(tmp_path, fake)
    payload = json.loads((EXAMPLES / f"{event}.rerequested.1.json").read_text())
    payload["repository"]["full_name"] = REPO
    payload[key]["head_sha"] = pr.head
    payload[key]["pull_requests"] = []  # GitHub lists no pull request from a fork here
    job = router.route(event, payload, "d-2", "veribot[bot]")
    assert isinstance(job, Job), job
    outcome = run_job(job, pr.deps)
    assert outcome is not None and outcome.conclusion == "failure"
    (run,) = fake.check_runs()
    assert run["head_sha"] == pr.head and run["status"] == "completed"
    assert pr.summary()  # posted on the pull request found by its head
    # ... asked of the commit, not found by listing every open pull request
    assert len(fake.calls_to("GET", rf"/commits/{pr.head}/pulls$")) == 1
    assert fake.calls_to("GET", rf"/repos/{REPO}/pulls$") == []


# -- requests that create --------------------------------------------------------------------


@pytest.mark.parametrize("status", [502, 504])
def test_a_create_whose_answer_is_lost_is_not_made_twice(
    tmp_path: Path, fake: FakeGitHub, status: int
) -> None:
    pr = small_pr(tmp_path, fake)
    fake.inject("POST", r"/check-runs$", status, after=True)
    fake.inject("POST", r"/issues/\d+/comments$", status, after=True)
    fake.inject("POST", r"/pulls/\d+/reviews$", status, after=True)
    run_job(pr.job(), pr.deps)
    assert len(fake.check_runs()) == 1
    assert fake.check_runs()[0]["status"] == "completed"
    assert len(fake.issue_comments(REPO, NUMBER)) == 1
    assert len(fake.reviews(REPO, NUMBER)) == 1


def test_a_review_superseded_by_a_push_is_cancelled_and_posts_nothing_else(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    pr = small_pr(tmp_path, fake)
    pr.repo.git("checkout", "-q", "-b", "newer", pr.head)
    newer = pr.repo.commit("newer", {"m.py": HEAD_CODE + b"\n# more\n"})
    files = pull_files_from_git(pr.repo.path, pr.base, newer)

    def git_data(_job: Job, _url: str, _shas: tuple[str, ...]) -> Path:
        fake.push(REPO, NUMBER, head_sha=newer, files=files)  # while the review runs
        return pr.repo.path

    deps = WorkerDeps(
        settings=pr.deps.settings, github=pr.deps.github, git_data=git_data, policy=no_sleep_policy
    )
    outcome = run_job(pr.job(), deps)
    assert outcome is not None and outcome.conclusion == "cancelled"
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "cancelled")
    assert newer[:12] in run["output"]["summary"]
    assert fake.issue_comments(REPO, NUMBER) == [] and fake.reviews(REPO, NUMBER) == []


# -- pacing shared between jobs ----------------------------------------------------------------


def test_the_write_pacer_is_shared_by_every_job_of_an_installation(tmp_path: Path) -> None:
    from veribot.bot.github import SharedPacer

    now = [1000.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    def policy(installation: int) -> RequestPolicy:
        pacer = SharedPacer(tmp_path / "pacer.sqlite3", installation, 3, clock=lambda: now[0])
        return RequestPolicy(sleep=sleep, monotonic=lambda: now[0], pacer=pacer)

    first, second, other = policy(1), policy(1), policy(2)  # three jobs, two installations
    for job_policy in (first, second, first):
        job_policy.call("write", lambda: None, write=True)
        now[0] += 1
    other.call("write", lambda: None, write=True)  # another installation: its own minute
    assert waits == []
    second.call("write", lambda: None, write=True)  # the 4th of installation 1 in a minute
    assert waits and 56.0 <= sum(waits) <= 60.0


# -- quota ---------------------------------------------------------------------------------


def test_reviews_beyond_the_installations_daily_quota_are_proof_only_and_say_so(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    from veribot.bot.worker import NOT_EXECUTED_NOTE, QUOTA_NOTE, ReviewQuota

    settings = Settings.from_env(
        {"VERIBOT_DATA_DIR": str(tmp_path / "data"), "VERIBOT_REVIEWS_PER_DAY": "1"}
    )
    assert settings.reviews_per_day == 1
    pr = small_pr(tmp_path, fake)
    deps = WorkerDeps(
        settings=settings,
        github=pr.deps.github,
        git_data=pr.deps.git_data,
        policy=no_sleep_policy,
        quota=lambda installation: ReviewQuota(settings.usage_path, installation, 1),
    )
    first = run_job(pr.job(), deps)
    assert first is not None and first.conclusion == "failure"  # executed: refuted
    pr.head = pr.repo.commit("another push", {"notes.txt": b"more\n"})
    files = pull_files_from_git(pr.repo.path, pr.base, pr.head)
    fake.push(REPO, NUMBER, head_sha=pr.head, files=files)
    second = run_job(pr.job(), deps)
    assert second is not None and second.conclusion == "neutral"  # proof-only: undecided
    assert QUOTA_NOTE.format(limit=1) in second.summary
    assert NOT_EXECUTED_NOTE in second.summary
    assert [r["conclusion"] for r in fake.check_runs()] == ["failure", "neutral"]


def test_annotation_titles_and_messages_are_clipped_to_githubs_limits(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    from veribot.bot.github import Annotation, CheckOutput, GitHubClient

    pr = small_pr(tmp_path, fake)
    client = GitHubClient(connect(fake.base_url, "t"), REPO, bot_login="veribot[bot]")
    run_id = client.start_check_run("veribot review", pr.head, CheckOutput("Reviewing", "..."))
    long = Annotation("m.py", 1, 1, "warning", "é" * 40_000, title="ü" * 300)
    client.complete_check_run(run_id, "neutral", CheckOutput("done", "done"), [long])
    fake.assert_no_violations()
    (stored,) = fake.annotations(run_id)
    assert len(stored["title"]) <= 255 and stored["title"].endswith("…")


# -- the App's identity and tokens ---------------------------------------------------------


def _app_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def test_the_apps_login_comes_from_github_and_tokens_are_narrowed_to_the_repository(
    tmp_path: Path,
) -> None:
    from veribot.bot.worker import InstallationTokens, app_deps

    with FakeGitHub(bot_login="acme-verifier[bot]") as fake:
        settings = Settings.from_env({"VERIBOT_DATA_DIR": str(tmp_path / "data")})
        tokens = InstallationTokens(7, _app_key(), fake.base_url)
        deps = app_deps(settings, tokens)
        assert deps.settings.bot_login == "acme-verifier[bot]"  # read from GET /app
        assert len(fake.calls_to("GET", r"^/app$")) == 1
        explicit = app_deps(
            Settings.from_env({"VERIBOT_BOT_LOGIN": "mine[bot]", "HOME": str(tmp_path)}), tokens
        )
        assert explicit.settings.bot_login == "mine[bot]"
        assert deps.github_for_repo is not None
        gh = deps.github_for_repo(1, "octo/demo")
        assert gh.get_repo("octo/demo").full_name == "octo/demo"
        (granted,) = fake.calls_to("POST", r"^/app/installations/1/access_tokens$")
        assert granted.body["repositories"] == ["demo"]
        fake.assert_no_violations()


def test_a_read_only_token_is_not_retried_as_if_transient(tmp_path: Path, fake: FakeGitHub) -> None:
    pr = small_pr(tmp_path, fake)
    fake.read_only("token")
    assert run_job(pr.job(), pr.deps) is None  # abandoned, said in the log: not queued again
    refused = fake.calls_to("POST", r"/check-runs$")
    assert [c.status for c in refused] == [403]  # asked once, not five times


def test_concurrent_fetches_from_several_worker_processes_all_succeed(tmp_path: Path) -> None:
    import subprocess
    import sys

    origin, base, head = origin_with_branches(tmp_path)
    script = (
        "import sys\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from pathlib import Path\n"
        "from veribot.bot.queue import Job\n"
        "from veribot.bot.worker import GitCache\n"
        "cache = GitCache(Path(sys.argv[1]), lambda _i, _r: None)\n"
        "job = Job('octo/demo', 3, None, 1)\n"
        "with ThreadPoolExecutor(5) as pool:\n"
        "    trees = list(pool.map(lambda _n: cache(job, sys.argv[2], tuple(sys.argv[3:])),"
        " range(5)))\n"
        "print(len(set(trees)))\n"
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "cache"), str(origin.path), base, head],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        for _ in range(4)
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        assert out.strip() == "1"


def test_the_pacer_keeps_a_review_under_the_secondary_rate_limit(tmp_path: Path) -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with FakeGitHub(writes_per_minute=3, clock=lambda: now[0]) as fake:
        pr = small_pr(tmp_path, fake)
        paced = WorkerDeps(
            settings=pr.deps.settings,
            github=pr.deps.github,
            git_data=pr.deps.git_data,
            policy=lambda: RequestPolicy(
                sleep=sleep, monotonic=lambda: now[0], writes_per_minute=3
            ),
            progress_interval=0.0,
        )
        run_job(pr.job(), paced)
        assert fake.secondary_limited == 0  # paced below it, never told off
        assert fake.check_runs()[0]["status"] == "completed" and pr.summary()
        fake.assert_no_violations()
        # Unpaced, GitHub's 403 with retry-after is waited out and the review still posts.
        # Another head (a commit of the same content may get the same id within a second).
        fresh = Pr(tmp_path / "again", fake, {"m.py": BASE_CODE}, {"m.py": HEAD_CODE + b"\n"})
        unpaced = WorkerDeps(
            settings=fresh.deps.settings,
            github=fresh.deps.github,
            git_data=fresh.deps.git_data,
            policy=lambda: RequestPolicy(sleep=sleep, monotonic=lambda: now[0]),
        )
        run_job(fresh.job(), unpaced)
        assert fake.secondary_limited > 0
        assert all(r["status"] == "completed" for r in fake.check_runs())


# -- resumable posting -----------------------------------------------------------------------


def test_a_completion_posted_again_sends_each_annotation_once(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    """The annotations beyond the first 50 go in requests of their own; a completion GitHub
    refuses is tried again later from the saved progress, sending none of them twice."""
    from veribot.bot.github import Annotation, CheckOutput, GitHubClient
    from veribot.bot.jobstate import SqliteJobState
    from veribot.bot.posting import Journal, Posting, Texts, deliver
    from veribot.bot.queue import PostLater

    pr = small_pr(tmp_path, fake)
    client = GitHubClient(
        connect(fake.base_url, "t"), REPO, bot_login="veribot[bot]", policy=no_sleep_policy()
    )
    run_id = client.start_check_run("veribot review", pr.head, CheckOutput("Reviewing", "..."))
    notes = tuple(Annotation("m.py", 1, 1, "notice", f"unit {n}") for n in range(120))
    texts = Texts("in the check run", "in the comment")
    journal = Journal(SqliteJobState(tmp_path / "q.sqlite3"), 3600.0)
    posting = journal.save(
        Posting("k", run_id, NUMBER, pr.head, "success", "120 verified", texts, texts, notes)
    )
    fake.inject("PATCH", r"/check-runs/\d+$", 502, times=10, when=lambda b: "status" in b)
    with pytest.raises(PostLater):
        deliver(client, posting, journal, retry_delay=lambda _n: 1.0)
    saved = journal.load("k")
    assert saved is not None and saved.batches_sent == 2 and saved.summary_done
    deliver(client, saved, journal, retry_delay=lambda _n: 1.0)
    (run,) = fake.check_runs()
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert sorted(a["message"] for a in fake.annotations(run_id)) == sorted(
        a.message for a in notes
    )
    assert journal.load("k") is None  # dropped once everything landed
    assert len(fake.issue_comments(REPO, NUMBER)) == 1
