"""Posting to GitHub through PyGithub, within GitHub's limits, without duplicates.

:class:`GitHubClient` wraps one repository and does what a review posts: a check run
(created ``in_progress``, updated, completed; annotations sent at most 50 per request), one
review whose inline comments sit only on lines of the diff (at most 30; the rest come back
to the caller for the summary), and one summary comment found again by a hidden marker and
edited in place. Every request goes through :class:`RequestPolicy`: 403/429 rate limits
wait for ``Retry-After`` or ``x-ratelimit-reset``, 5xx and connection errors are retried
with backoff (a request that creates something only after checking it was not created),
and content-creating requests are held to 80 a minute, per installation across all its jobs
when a :class:`SharedPacer` is given. Sleeping and clocks
are injectable so tests run fast.

Errors: a request that still fails is raised as :class:`GitHubError` carrying the status.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import requests
from github import Auth, Github, GithubException
from github.CheckRun import CheckRun
from github.Commit import Commit
from github.GithubObject import NotSet
from github.IssueComment import IssueComment
from github.PaginatedList import PaginatedList
from github.PullRequest import PullRequest
from github.PullRequestComment import PullRequestComment
from github.PullRequestReview import PullRequestReview
from github.Repository import Repository
from unidiff.patch import PatchSet

from veribot.bot.render import (
    ANNOTATION_MESSAGE_MAX_BYTES,
    ANNOTATION_TITLE_MAX_CHARS,
    GITHUB_TEXT_MAX_BYTES,
    clip_bytes,
    clip_chars,
)
from veribot.bot.standing import key_of

log = logging.getLogger(__name__)

T = TypeVar("T")

SUMMARY_MARKER = "<!-- veribot:summary -->"
REVIEW_MARKER = "<!-- veribot:review {sha} -->"
REPLY_MARKER = "<!-- veribot:reply {comment} -->"  # the answer to the comment of that id
MAX_ANNOTATIONS_PER_REQUEST = 50
MAX_REVIEW_COMMENTS = 30
CONTENT_REQUESTS_PER_MINUTE = 80
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
# Sent as X-GitHub-Api-Version on every request: the REST API version veribot is written for.
API_VERSION = "2022-11-28"
PER_PAGE = 100  # GitHub's largest page: fewest requests for a list

Conclusion = Literal[
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"
]
Level = Literal["notice", "warning", "failure"]


class GitHubError(Exception):
    """A GitHub request failed for good; ``status`` is the HTTP status (0: no answer).

    ``retry_after``: a rate limit that resets later than :class:`RequestPolicy` sleeps says
    in how many seconds the request may work again (the App's queue runs the job then)."""

    def __init__(
        self,
        message: str,
        status: int,
        *,
        rate_limited: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.rate_limited = rate_limited
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """No answer, a server error or a rate limit: the same request may work later (a
        403 that is not a rate limit, such as a read-only token, is not)."""
        return self.status == 0 or self.status >= 500 or self.status == 429 or self.rate_limited


@dataclass(frozen=True)
class Annotation:
    """A check-run annotation on lines of the head revision."""

    path: str
    start_line: int
    end_line: int
    level: Level
    message: str
    title: str | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "annotation_level": self.level,
            "message": clip_bytes(self.message, ANNOTATION_MESSAGE_MAX_BYTES),
        }
        if self.title:
            data["title"] = clip_chars(self.title, ANNOTATION_TITLE_MAX_CHARS)
        return data


@dataclass(frozen=True)
class InlineComment:
    """A review comment meant for ``line`` of ``path`` in the head revision."""

    path: str
    line: int
    body: str


@dataclass(frozen=True)
class CheckOutput:
    """The title, summary and optional text of a check run (each cut to GitHub's limit)."""

    title: str
    summary: str
    text: str | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "title": clip_chars(self.title, 1000),
            "summary": clip_bytes(self.summary, GITHUB_TEXT_MAX_BYTES),
        }
        if self.text:
            data["text"] = clip_bytes(self.text, GITHUB_TEXT_MAX_BYTES)
        return data


def connect(base_url: str, token: str, *, timeout: int = 15) -> Github:
    """A PyGithub client whose retries and pacing are left to :class:`RequestPolicy`."""
    return Github(
        base_url=base_url,
        auth=Auth.Token(token),
        timeout=timeout,
        per_page=PER_PAGE,
        api_version=API_VERSION,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


class SharedPacer:
    """GitHub's limit on content-creating requests, counted per installation across every
    job and worker process of this machine, in a SQLite file (one row per recent write)."""

    def __init__(
        self,
        path: Path,
        installation: int | None,
        per_minute: int = CONTENT_REQUESTS_PER_MINUTE,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.key = str(installation)
        self.per_minute = per_minute
        self.clock = clock
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db:
            db.execute("CREATE TABLE IF NOT EXISTS writes (installation TEXT, at REAL)")
            db.execute("CREATE INDEX IF NOT EXISTS writes_by ON writes (installation, at)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def reserve(self) -> float:
        """Record a write now and return 0, or return how long to wait for room."""
        now = self.clock()
        with closing(self._connect()) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM writes WHERE at <= ?", (now - 60.0,))
                count, oldest = db.execute(
                    "SELECT COUNT(*), MIN(at) FROM writes WHERE installation = ?", (self.key,)
                ).fetchone()
                if count < self.per_minute:
                    db.execute("INSERT INTO writes VALUES (?, ?)", (self.key, now))
                    return 0.0
                return max(0.01, 60.0 - (now - float(oldest)))
            finally:
                db.execute("COMMIT")


@dataclass
class RequestPolicy:
    """Retries and pacing for GitHub requests (see the module docstring)."""

    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
    max_attempts: int = 5
    backoff: float = 1.0
    rate_limit_wait: float = 60.0  # a rate limit that names no reset
    # The longest sleep for a rate limit: a later reset is raised (GitHubError.retry_after), so
    # a job never sleeps past its lease; the App's queue runs it again after the reset.
    max_rate_limit_wait: float = 120.0
    writes_per_minute: int = CONTENT_REQUESTS_PER_MINUTE
    pacer: SharedPacer | None = None  # shared with the installation's other jobs
    _writes: deque[float] = field(default_factory=deque)

    def _pace_write(self) -> None:
        if self.pacer is not None:
            while (wait := self.pacer.reserve()) > 0:
                log.info("pacing content-creating requests: waiting %.1f s", wait)
                self.sleep(wait)
            return
        now = self.monotonic()
        while self._writes and now - self._writes[0] >= 60.0:
            self._writes.popleft()
        if len(self._writes) >= self.writes_per_minute:
            wait = 60.0 - (now - self._writes[0])
            log.info("pacing content-creating requests: waiting %.1f s", wait)
            self.sleep(wait)
            self._writes.popleft()
        self._writes.append(self.monotonic())

    def _rate_limit_delay(self, error: GithubException) -> float | None:
        headers = {k.lower(): v for k, v in (error.headers or {}).items()}
        if "retry-after" in headers:
            return max(0.0, float(headers["retry-after"]))
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            return max(0.0, float(headers["x-ratelimit-reset"]) - self.wall_clock())
        message = str(error.data.get("message", "")) if isinstance(error.data, dict) else ""
        if error.status == 429 or "rate limit" in message.lower():
            return self.rate_limit_wait
        return None

    def call(
        self,
        what: str,
        request: Callable[[], T],
        *,
        write: bool = False,
        creates: bool = False,
        recover: Callable[[], T | None] | None = None,
    ) -> T:
        """Run ``request`` (one logical GitHub request) with pacing and retries.

        ``creates``: the request makes something (a POST), so after a server error or no
        answer it may have been done anyway: it is sent again only when ``recover`` (which
        looks for what it made, and returns it) finds nothing; without ``recover``, never.
        A rate limit (403/429) means GitHub did not do it, so it is always sent again.
        """
        for attempt in range(1, self.max_attempts + 1):
            if write:
                self._pace_write()
            try:
                return request()
            except GithubException as error:
                delay = None
                if error.status in (403, 429):
                    delay = self._rate_limit_delay(error)
                    if delay is not None and delay > self.max_rate_limit_wait:
                        raise GitHubError(
                            f"{what}: GitHub's rate limit resets in {delay:.0f} s, later than "
                            f"the {self.max_rate_limit_wait:.0f} s a request waits "
                            "(VERIBOT_GITHUB_RATE_LIMIT_WAIT_S)",
                            error.status,
                            rate_limited=True,
                            retry_after=delay,
                        ) from error
                elif error.status >= 500:
                    delay = self.backoff * 2 ** (attempt - 1)
                    if creates:
                        made = self._recovered(what, recover, error.status)
                        if made is not None:
                            return made
                if delay is None or attempt == self.max_attempts:
                    raise GitHubError(
                        f"{what}: GitHub answered {error.status}",
                        error.status,
                        rate_limited=error.status in (403, 429) and delay is not None,
                    ) from error
                log.warning("%s: GitHub answered %s; retrying in %.1f s", what, error.status, delay)
            except requests.RequestException as error:
                made = self._recovered(what, recover, 0) if creates else None
                if made is not None:
                    return made
                if attempt == self.max_attempts:
                    raise GitHubError(f"{what}: no answer from GitHub ({error})", 0) from error
                delay = self.backoff * 2 ** (attempt - 1)
                log.warning("%s: no answer (%s); retrying in %.1f s", what, error, delay)
            self.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")

    def _recovered(
        self, what: str, recover: Callable[[], T | None] | None, status: int
    ) -> T | None:
        """What a create that may have happened made; raises if it cannot be known."""
        if recover is None:
            raise GitHubError(f"{what}: GitHub answered {status}; not sent again", status)
        made = recover()
        if made is not None:
            log.info("%s: GitHub answered %s but it was done", what, status)
        return made


def diff_anchors(files: Iterable[tuple[str, str | None]]) -> dict[str, set[int]]:
    """Head-revision lines a review comment may anchor to, by path, from (path, patch)."""
    anchors: dict[str, set[int]] = {}
    for path, patch in files:
        lines: set[int] = set()
        if patch:
            for patched in PatchSet(f"--- a/{path}\n+++ b/{path}\n{patch}\n"):
                for hunk in patched:
                    lines.update(
                        line.target_line_no for line in hunk if line.target_line_no is not None
                    )
        anchors[path] = lines
    return anchors


def _chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def annotation_batches(annotations: Sequence[Annotation]) -> list[Sequence[Annotation]]:
    """The requests a check run's annotations take (50 each; at least one, maybe empty)."""
    return _chunks(annotations, MAX_ANNOTATIONS_PER_REQUEST) or [()]


def place_comments(
    comments: Sequence[InlineComment], anchors: dict[str, set[int]]
) -> tuple[list[InlineComment], list[InlineComment]]:
    """The comments a review takes (on a line of ``anchors``, the first 30) and the rest."""
    placed = [c for c in comments if c.line in anchors.get(c.path, set())]
    kept = placed[:MAX_REVIEW_COMMENTS]
    return kept, [c for c in comments if c not in kept]


def _done(run: CheckRun) -> bool:
    return run.status == "completed"


class GitHubClient:
    """One repository, as the bot posts to it."""

    def __init__(
        self,
        gh: Github,
        full_name: str,
        *,
        bot_login: str,
        policy: RequestPolicy | None = None,
    ) -> None:
        self.gh = gh
        self.full_name = full_name
        self.bot_login = bot_login
        self.policy = policy or RequestPolicy()
        self._repo: Repository | None = None
        self._pulls: dict[int, PullRequest] = {}
        self._check_runs: dict[int, CheckRun] = {}

    @property
    def repo(self) -> Repository:
        if self._repo is None:
            self._repo = self.policy.call(
                "get repository", lambda: self.gh.get_repo(self.full_name)
            )
        return self._repo

    def pull(self, number: int) -> PullRequest:
        if number not in self._pulls:
            self._pulls[number] = self.policy.call(
                f"get pull #{number}", lambda: self.repo.get_pull(number)
            )
        return self._pulls[number]

    def current_head(self, number: int) -> str:
        """The pull request's head commit now (asked again, not cached)."""
        pull = self.policy.call(f"get pull #{number}", lambda: self.repo.get_pull(number))
        self._pulls[number] = pull
        return str(pull.head.sha)

    def pull_with_head(self, head_sha: str) -> int | None:
        """The number of the open pull request whose head is ``head_sha`` (forks included),
        asked of the commit rather than found among every open pull request."""
        url = f"{self.repo.url}/commits/{head_sha}/pulls"
        pulls = self.policy.call(
            "list pulls of a commit",
            lambda: list(PaginatedList(PullRequest, self.repo.requester, url, None)),
        )
        for pull in pulls:
            if pull.state == "open" and pull.head.sha == head_sha:
                self._pulls[pull.number] = pull
                return int(pull.number)
        return None

    def diff_anchors(self, number: int) -> dict[str, set[int]]:
        """The lines of pull request ``number`` that review comments may anchor to."""
        pull = self.pull(number)
        files = self.policy.call(f"list files of #{number}", lambda: list(pull.get_files()))
        return diff_anchors((f.filename, f.patch) for f in files)

    # -- check runs ------------------------------------------------------------------------

    def start_check_run(
        self, name: str, head_sha: str, output: CheckOutput, external_id: str | None = None
    ) -> int:
        """An ``in_progress`` check run on ``head_sha``; reuses one of this bot's left
        unfinished (by a crash, or a job handed back) by the same review. ``external_id`` names
        what is reviewed (see :meth:`completed_check_run`): a run of another review (another
        workflow's, running now) is not taken over; without one, any unfinished run is reused.
        """

        def resumable(run: CheckRun) -> bool:
            same = external_id is None or key_of(run.external_id) == key_of(external_id)
            return not _done(run) and same

        unfinished = next((r for r in self.check_runs_of(name, head_sha) if resumable(r)), None)
        if unfinished is not None:
            self._check_runs[unfinished.id] = unfinished
            self.update_check_run(unfinished.id, output, external_id=external_id)
            return unfinished.id
        run = self.policy.call(
            "create check run",
            lambda: self.repo.create_check_run(
                name=name,
                head_sha=head_sha,
                status="in_progress",
                output=output.as_json(),
                external_id=external_id or NotSet,
            ),
            write=True,
            creates=True,
            recover=lambda: next(
                (r for r in self.check_runs_of(name, head_sha) if resumable(r)), None
            ),
        )
        self._check_runs[run.id] = run
        return run.id

    def _commit(self, sha: str) -> Commit:
        """The commit ``sha`` as a reference, without fetching it (GitHub's answer would carry
        up to 300 of its files)."""
        url = f"{self.repo.url}/commits/{sha}"
        return Commit(self.repo.requester, {}, {"sha": sha, "url": url}, completed=True)

    def check_runs_of(self, name: str, head_sha: str) -> list[CheckRun]:
        """This bot's check runs named ``name`` on ``head_sha``, completed or not."""
        commit = self._commit(head_sha)
        existing = self.policy.call(
            "list check runs", lambda: list(commit.get_check_runs(check_name=name))
        )
        return [run for run in existing if run.app is not None and run.app.slug == self._slug]

    def completed_check_run(self, name: str, head_sha: str, key: str) -> CheckRun | None:
        """This bot's completed check run on ``head_sha`` of the review ``key`` (its
        ``external_id`` without the strength), if any: the same review (same commits and
        settings) was posted already."""
        for run in self.check_runs_of(name, head_sha):
            if _done(run) and key_of(run.external_id) == key:
                return run
        return None

    @property
    def _slug(self) -> str:
        return self.bot_login.removesuffix("[bot]")

    def check_run_url(self, run_id: int) -> str:
        """The check run's page on GitHub."""
        return str(self._run(run_id).html_url)

    def _run(self, run_id: int) -> CheckRun:
        if run_id not in self._check_runs:
            self._check_runs[run_id] = self.policy.call(
                "get check run", lambda: self.repo.get_check_run(run_id)
            )
        return self._check_runs[run_id]

    def update_check_run(
        self,
        run_id: int,
        output: CheckOutput,
        annotations: Sequence[Annotation] = (),
        *,
        external_id: str | None = None,
    ) -> None:
        """Replace the output of a running check; annotations go 50 to a request."""
        run = self._run(run_id)
        batches = _chunks(annotations, MAX_ANNOTATIONS_PER_REQUEST) or [()]
        for batch in batches:
            body = output.as_json()
            if batch:
                body["annotations"] = [a.as_json() for a in batch]
            edit = functools.partial(run.edit, output=body, external_id=external_id or NotSet)
            self.policy.call("update check run", edit, write=True)

    def annotate_check_run(
        self, run_id: int, output: CheckOutput, annotations: Sequence[Annotation]
    ) -> None:
        """Add one batch (at most 50) of annotations to a running check."""
        body = output.as_json() | {"annotations": [a.as_json() for a in annotations]}
        run = self._run(run_id)
        self.policy.call("annotate check run", functools.partial(run.edit, output=body), write=True)

    def complete_check_run(
        self,
        run_id: int,
        conclusion: Conclusion,
        output: CheckOutput,
        annotations: Sequence[Annotation] = (),
    ) -> None:
        """Finish the check with ``conclusion``; the last annotation batch goes with it."""
        batches = annotation_batches(annotations)
        for batch in batches[:-1]:
            self.annotate_check_run(run_id, output, batch)
        self.finish_check_run(run_id, conclusion, output, batches[-1])

    def finish_check_run(
        self,
        run_id: int,
        conclusion: Conclusion,
        output: CheckOutput,
        annotations: Sequence[Annotation] = (),
    ) -> None:
        """The completing request alone, with at most one batch (50) of annotations; sent
        again as it is, whatever GitHub answered (it only sets the run's state)."""
        run = self._run(run_id)
        final = output.as_json()
        if annotations:
            final["annotations"] = [a.as_json() for a in annotations]
        self.policy.call(
            "complete check run",
            lambda: run.edit(status="completed", conclusion=conclusion, output=final),
            write=True,
        )

    # -- review ----------------------------------------------------------------------------

    def post_review(
        self,
        number: int,
        head_sha: str,
        body: str,
        comments: Sequence[InlineComment],
        *,
        anchors: dict[str, set[int]] | None = None,
    ) -> list[InlineComment]:
        """Post one review on ``head_sha`` with the comments that fit; return the others.

        A comment fits when its line is in ``anchors`` (the diff of ``head_sha``; by default
        the pull request's diff now) and it is among the first 30 that are. A review this bot
        already posted on ``head_sha`` (found by its marker) is not posted again. If GitHub
        refuses the review (422: a line off the diff after all), every comment comes back.
        """
        if anchors is None:
            anchors = self.diff_anchors(number)
        kept, leftovers = place_comments(comments, anchors)
        marker = REVIEW_MARKER.format(sha=head_sha)
        pull = self.pull(number)
        if self._posted_review(pull, marker) is not None:
            log.info("review already posted", extra={"pr": number, "head": head_sha})
            return leftovers
        try:
            self._create_review(pull, self._commit(head_sha), body, marker, kept)
        except GitHubError as error:
            if error.status != 422:
                raise
            log.warning("review refused (%s): its comments go to the summary", error)
            return list(comments)
        return leftovers

    def _posted_review(self, pull: PullRequest, marker: str) -> PullRequestReview | None:
        reviews = self.policy.call(
            f"list reviews of #{pull.number}", lambda: list(pull.get_reviews())
        )
        for review in reviews:
            if (
                review.user is not None
                and review.user.login == self.bot_login
                and marker in (review.body or "")
            ):
                return review
        return None

    def _create_review(
        self,
        pull: PullRequest,
        commit: Commit,
        body: str,
        marker: str,
        kept: Sequence[InlineComment],
    ) -> None:
        self.policy.call(
            "create review",
            lambda: pull.create_review(
                commit=commit,
                body=clip_bytes(body, GITHUB_TEXT_MAX_BYTES - len(marker) - 2) + f"\n\n{marker}",
                event="COMMENT",
                comments=[
                    {
                        "path": c.path,
                        "line": c.line,
                        "side": "RIGHT",
                        "body": clip_bytes(c.body, GITHUB_TEXT_MAX_BYTES),
                    }
                    for c in kept
                ],
            ),
            write=True,
            creates=True,
            recover=lambda: self._posted_review(pull, marker),
        )

    # -- comments --------------------------------------------------------------------------

    def upsert_summary(self, number: int, body: str) -> int:
        """Create the summary comment, or edit the one this bot posted before; its id."""
        text = f"{SUMMARY_MARKER}\n{clip_bytes(body, GITHUB_TEXT_MAX_BYTES - 64)}"
        pull = self.pull(number)
        comment = self._summary_comment(pull)
        if comment is not None:
            if comment.body != text:
                self.policy.call("edit summary", functools.partial(comment.edit, text), write=True)
            return int(comment.id)
        created = self.policy.call(
            "create summary",
            lambda: pull.create_issue_comment(text),
            write=True,
            creates=True,
            recover=lambda: self._summary_comment(pull),
        )
        if created.body != text:  # recovered: an older one, or the same
            self.policy.call("edit summary", functools.partial(created.edit, text), write=True)
        return int(created.id)

    def _summary_comment(self, pull: PullRequest) -> IssueComment | None:
        comments = self.policy.call(
            f"list comments of #{pull.number}", lambda: list(pull.get_issue_comments())
        )
        for comment in comments:
            if comment.user.login == self.bot_login and SUMMARY_MARKER in comment.body:
                return comment
        return None

    def react(self, comment_id: int, content: str = "eyes", *, on_review_comment: bool) -> None:
        """Acknowledge a comment with a reaction."""
        pull_comments = f"{self.repo.url}/pulls/comments/{comment_id}/reactions"
        issue_comments = f"{self.repo.url}/issues/comments/{comment_id}/reactions"
        url = pull_comments if on_review_comment else issue_comments
        self.policy.call(
            "react",
            lambda: self.repo.requester.requestJsonAndCheck(
                "POST", url, input={"content": content}
            ),
            write=True,
        )

    def reply(
        self,
        number: int,
        body: str,
        *,
        review_comment_id: int | None = None,
        answering: int | None = None,
    ) -> None:
        """Answer in the pull request's thread, or under a review comment.

        ``answering``: the id of the comment answered (under a review comment, that one);
        the answer then carries it in a hidden marker, so after a server error it is looked
        for, and sent again only if GitHub did not post it. Without it, never sent again.
        """
        pull = self.pull(number)
        answered = review_comment_id if review_comment_id is not None else answering
        if answered is None:
            text = clip_bytes(body, GITHUB_TEXT_MAX_BYTES)
            self.policy.call(
                "reply", lambda: pull.create_issue_comment(text), write=True, creates=True
            )
            return
        marker = REPLY_MARKER.format(comment=answered)
        text = clip_bytes(body, GITHUB_TEXT_MAX_BYTES - len(marker) - 2) + f"\n\n{marker}"
        if review_comment_id is not None:
            self.policy.call(
                "reply",
                lambda: pull.create_review_comment_reply(review_comment_id, text),
                write=True,
                creates=True,
                recover=lambda: self._reply_with(pull, marker, under_review_comment=True),
            )
            return
        self.policy.call(
            "reply",
            lambda: pull.create_issue_comment(text),
            write=True,
            creates=True,
            recover=lambda: self._reply_with(pull, marker, under_review_comment=False),
        )

    def _reply_with(
        self, pull: PullRequest, marker: str, *, under_review_comment: bool
    ) -> IssueComment | PullRequestComment | None:
        """This bot's answer carrying ``marker``, in the thread or under review comments."""
        comments: list[IssueComment] | list[PullRequestComment]
        if under_review_comment:
            comments = self.policy.call(
                f"list review comments of #{pull.number}", lambda: list(pull.get_comments())
            )
        else:
            comments = self.policy.call(
                f"list comments of #{pull.number}", lambda: list(pull.get_issue_comments())
            )
        for comment in comments:
            if comment.user.login == self.bot_login and marker in (comment.body or ""):
                return comment
        return None

    def has_write_access(self, login: str) -> bool:
        """Whether ``login`` may push to the repository (the permission API)."""
        permission = self.policy.call(
            "get permission", lambda: self.repo.get_collaborator_permission(login)
        )
        return permission in WRITE_PERMISSIONS
