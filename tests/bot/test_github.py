"""The posting logic, with the real PyGithub client against the fake GitHub server."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from github import GithubException

from tests.fakes.github_server import FakeGitHub, PullFile, pull_files_from_git, running_fake
from veribot.bot.github import (
    REVIEW_MARKER,
    SUMMARY_MARKER,
    Annotation,
    CheckOutput,
    GitHubClient,
    GitHubError,
    InlineComment,
    RequestPolicy,
    connect,
)

REPO = "octo/demo"
HEAD = "a" * 40
BASE = "b" * 40
# New-file lines 1-4 and 10-13 are in the diff; everything else is not.
PATCH = (
    "@@ -1,3 +1,4 @@\n def total(xs):\n-    return sum(xs)\n+    s = 0\n+    return s\n"
    " \n"
    "@@ -9,3 +10,4 @@\n def mean(xs):\n-    return total(xs) / len(xs)\n+    n = len(xs)\n"
    "+    return total(xs) / n\n"
)


class Sleeps:
    """An injectable sleep that records instead of waiting, advancing a fake clock."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = 1000.0

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    yield from running_fake()


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def client(fake: FakeGitHub, sleeps: Sleeps) -> GitHubClient:
    fake.add_pull(REPO, 7, head_sha=HEAD, base_sha=BASE, files=[PullFile("calc.py", PATCH)])
    policy = RequestPolicy(sleep=sleeps.sleep, monotonic=sleeps.clock, wall_clock=sleeps.clock)
    return GitHubClient(
        connect(fake.base_url, "token"), REPO, bot_login=fake.bot_login, policy=policy
    )


def annotations(n: int) -> list[Annotation]:
    return [Annotation("calc.py", 2, 2, "warning", f"finding {i}") for i in range(n)]


def test_check_run_goes_in_progress_then_completed(fake: FakeGitHub, client: GitHubClient) -> None:
    run_id = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "0 of 2"))
    (run,) = fake.check_runs()
    assert (run["id"], run["status"], run["head_sha"]) == (run_id, "in_progress", HEAD)
    client.update_check_run(run_id, CheckOutput("Checking", "1 of 2 functions checked"))
    assert run["output"]["summary"] == "1 of 2 functions checked"
    client.complete_check_run(run_id, "failure", CheckOutput("1 refuted", "details"))
    assert (run["status"], run["conclusion"]) == ("completed", "failure")


def test_120_annotations_take_three_requests(fake: FakeGitHub, client: GitHubClient) -> None:
    run_id = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."))
    client.complete_check_run(run_id, "neutral", CheckOutput("Done", "s"), annotations(120))
    patches = fake.calls_to("PATCH", r"/check-runs/")
    assert [len(c.body["output"].get("annotations", [])) for c in patches] == [50, 50, 20]
    assert "conclusion" in patches[-1].body and "conclusion" not in patches[0].body
    assert len(fake.annotations(run_id)) == 120


def test_update_with_many_annotations_batches_too(fake: FakeGitHub, client: GitHubClient) -> None:
    run_id = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."))
    client.update_check_run(run_id, CheckOutput("Checking", "..."), annotations(51))
    assert len(fake.calls_to("PATCH", r"/check-runs/")) == 2
    assert len(fake.annotations(run_id)) == 51


def test_a_crashed_runs_check_is_reused_not_duplicated(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    first = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."))
    again = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "again"))
    assert first == again and len(fake.check_runs()) == 1


def test_a_running_check_of_another_review_is_not_taken_over(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    """Two workflows on one commit (a push's full review, a `/verify`) each keep their own
    check run; the same review, resumed, takes its own back."""
    full = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."), "k1:full")
    other = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "."), "k2:proof-only")
    again = client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."), "k1:full")
    assert other != full and again == full and len(fake.check_runs()) == 2


def test_review_comments_only_on_diff_lines(fake: FakeGitHub, client: GitHubClient) -> None:
    inside = [InlineComment("calc.py", 3, "refuted here"), InlineComment("calc.py", 12, "ok")]
    outside = [InlineComment("calc.py", 7, "not in the diff"), InlineComment("x.py", 1, "?")]
    leftovers = client.post_review(7, HEAD, "veribot review", inside + outside)
    assert leftovers == outside
    (review,) = fake.reviews(REPO, 7)
    assert [(c["path"], c["line"]) for c in review["comments"]] == [("calc.py", 3), ("calc.py", 12)]
    assert REVIEW_MARKER.format(sha=HEAD) in review["body"]
    assert review["commit_id"] == HEAD


def test_at_most_30_inline_comments(fake: FakeGitHub, client: GitHubClient) -> None:
    many = [InlineComment("calc.py", 3, f"note {i}") for i in range(35)]
    leftovers = client.post_review(7, HEAD, "veribot review", many)
    (review,) = fake.reviews(REPO, 7)
    assert len(review["comments"]) == 30 and leftovers == many[30:]


def test_review_is_not_posted_twice_for_a_head(fake: FakeGitHub, client: GitHubClient) -> None:
    comments = [InlineComment("calc.py", 3, "x")]
    client.post_review(7, HEAD, "veribot review", comments)
    client.post_review(7, HEAD, "veribot review", comments)
    assert len(fake.reviews(REPO, 7)) == 1


def test_summary_is_edited_in_place(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.add_issue_comment(REPO, 7, f"quoting {SUMMARY_MARKER} from a human", author="alice")
    first = client.upsert_summary(7, "2 verified")
    second = client.upsert_summary(7, "1 verified, 1 refuted")
    assert first == second
    mine = [c for c in fake.issue_comments(REPO, 7) if c["user"]["login"] == fake.bot_login]
    assert len(mine) == 1 and mine[0]["body"].endswith("1 verified, 1 refuted")
    assert len(fake.calls_to("POST", r"/issues/7/comments$")) == 1
    assert len(fake.calls_to("PATCH", r"/issues/comments/")) == 1


@pytest.mark.parametrize("status", [403, 429])
def test_rate_limit_waits_for_retry_after(
    fake: FakeGitHub, client: GitHubClient, sleeps: Sleeps, status: int
) -> None:
    fake.inject(
        "POST",
        r"/check-runs$",
        status,
        headers={"Retry-After": "17"},
        message="You have exceeded a secondary rate limit",
    )
    client.start_check_run("veribot", HEAD, CheckOutput("Checking", "..."))
    assert sleeps.waits == [17.0]
    assert len(fake.check_runs()) == 1


def test_primary_rate_limit_waits_until_reset(
    fake: FakeGitHub, client: GitHubClient, sleeps: Sleeps
) -> None:
    reset = int(sleeps.now) + 42
    fake.inject(
        "POST",
        r"/issues/7/comments$",
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        message="API rate limit exceeded",
    )
    client.upsert_summary(7, "summary")
    assert sleeps.waits == [42.0]


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "3999"}),
        (429, {"Retry-After": "2999"}),
    ],
)
def test_a_far_rate_limit_reset_is_raised_not_slept(
    fake: FakeGitHub, client: GitHubClient, sleeps: Sleeps, status: int, headers: dict[str, str]
) -> None:
    """A reset 2,999 s away (seen on GitHub) would outlast a job's lease: the request fails at
    once with when to try again, for the queue to run the job then."""
    fake.inject("GET", r"/pulls/7$", status, headers=headers, message="API rate limit exceeded")
    with pytest.raises(GitHubError) as raised:
        client.pull(7)
    assert sleeps.waits == []
    assert raised.value.retry_after == 2999.0 and raised.value.transient
    assert "rate limit resets in 2999 s" in str(raised.value)
    assert client.pull(7).head.sha == HEAD  # the limit gone, the same client works


def test_server_errors_are_retried_with_backoff(
    fake: FakeGitHub, client: GitHubClient, sleeps: Sleeps
) -> None:
    fake.inject("GET", r"/pulls/7$", 502, times=2)
    assert client.pull(7).head.sha == HEAD
    assert sleeps.waits == [1.0, 2.0]


def test_persistent_failure_raises_with_the_status(
    fake: FakeGitHub, client: GitHubClient, sleeps: Sleeps
) -> None:
    fake.inject("GET", r"/pulls/7$", 500, times=10)
    with pytest.raises(GitHubError) as raised:
        client.pull(7)
    assert raised.value.status == 500 and len(sleeps.waits) == 4


def test_client_errors_are_not_retried(client: GitHubClient, sleeps: Sleeps) -> None:
    with pytest.raises(GitHubError) as raised:
        client.pull(99)
    assert raised.value.status == 404 and sleeps.waits == []


def test_content_creating_requests_are_paced(fake: FakeGitHub, sleeps: Sleeps) -> None:
    fake.add_pull(REPO, 7, head_sha=HEAD, base_sha=BASE, files=[PullFile("calc.py", PATCH)])
    policy = RequestPolicy(
        sleep=sleeps.sleep, monotonic=sleeps.clock, wall_clock=sleeps.clock, writes_per_minute=3
    )
    client = GitHubClient(
        connect(fake.base_url, "t"), REPO, bot_login=fake.bot_login, policy=policy
    )
    for i in range(4):
        client.reply(7, f"answer {i}")
    assert sleeps.waits == [60.0]
    assert len(fake.issue_comments(REPO, 7)) == 4


def test_reactions_replies_and_permissions(fake: FakeGitHub, client: GitHubClient) -> None:
    comment_id = fake.add_issue_comment(REPO, 7, "/verify", author="alice")
    client.react(comment_id, "eyes", on_review_comment=False)
    client.react(55, "rocket", on_review_comment=True)
    assert [(r["comment_id"], r["content"], r["subject"]) for r in fake.reactions()] == [
        (comment_id, "eyes", "issue-comment"),
        (55, "rocket", "pull-request-review-comment"),
    ]
    client.reply(7, "done", review_comment_id=55)
    fake.set_permission(REPO, "alice", "write")
    assert client.has_write_access("alice")
    assert not client.has_write_access("mallory")


def test_pull_data_from_a_real_git_repository(tmp_path: Path, fake: FakeGitHub) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "m.py").write_text("def f(x):\n    return x + 1\n")
    git("add", "m.py")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD")
    (tmp_path / "m.py").write_text("def f(x):\n    y = x + 1\n    return y\n")
    git("commit", "-qam", "head")
    head = git("rev-parse", "HEAD")
    fake.add_pull(
        REPO, 3, head_sha=head, base_sha=base, files=pull_files_from_git(tmp_path, base, head)
    )
    client = GitHubClient(connect(fake.base_url, "t"), REPO, bot_login=fake.bot_login)
    assert client.diff_anchors(3) == {"m.py": {1, 2, 3}}


def test_the_fake_rejects_requests_github_would_reject() -> None:
    with FakeGitHub() as strict:
        strict.add_pull(REPO, 7, head_sha=HEAD, base_sha=BASE, files=[PullFile("calc.py", PATCH)])
        repo = connect(strict.base_url, "t").get_repo(REPO)
        with pytest.raises(GithubException) as raised:
            repo.create_check_run(name="veribot", head_sha=HEAD, conclusion="green")
        assert raised.value.status == 422
        with pytest.raises(GithubException):
            repo.get_pull(7).get_files().get_page(0)  # fine: page=1 is a valid query
            repo.get_pull(7).create_review(
                body="x",
                event="COMMENT",
                comments=[{"path": "calc.py", "line": 7, "body": "not in the diff"}],
            )
        assert len(strict.violations) == 2
        assert "conclusion" in strict.violations[0]
        assert "part of the diff" in strict.violations[1]
        with pytest.raises(AssertionError, match="GitHub would reject"):
            strict.assert_no_violations()
