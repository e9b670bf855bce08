"""The worker's job: review a pull request and post the check run, the review and the summary.

:func:`run_job` takes one :class:`~veribot.bot.queue.Job` and its :class:`WorkerDeps` (how to
reach GitHub for an installation, where the repository's git data comes from) and does
what the job asks: a review of the pull request's head, or a `/verify` command. The posting
half, :func:`post_review_results`, is shared with the GitHub Action (:mod:`veribot.bot.action`).

With an Anthropic key in the settings (``ANTHROPIC_API_KEY``; the Action's
``anthropic_api_key`` input) and the agent left on in `.veribot.toml`, every changed
function is also put to the agent (:mod:`veribot.bot.agentreview`), with the pull request's
title and description as delimited data, never as instructions, within the repository's
LLM budget (``budget.llm_calls``, ``budget.tokens``); the summary shows its answer and the
status of each of its claims beside the verdict, which is the solver's alone. Without a
key, on a fork pull request without secrets, or with the agent off, the review is
solver-only and the summary says why the agent was not asked.

Conclusions: any refuted unit gives ``failure``; an undecided changed function gives the
repository's ``inconclusive_conclusion`` (``neutral`` by default); otherwise ``success``. A
review that cannot finish completes its check run with a summary saying why, never green.

Only the units that `.veribot.toml`'s include/exclude globs (or a `/verify` target) select
are decided, at most ``budget.units`` of them; the rest are reported inconclusive with reason
``budget``. With ``execute`` off (``WorkerDeps.execute``, or ``execute = false`` in
`.veribot.toml`) no code from the pull request runs at all: the review is proof-only.

A started check run is always completed, whatever fails after it (``neutral`` when GitHub
or git did not answer, ``failure`` when the review itself failed, with the reason). Only a
transient GitHub error before the check run started (so before any code of the pull
request ran) is raised for the queue to retry (a rate limit resetting later than a request
waits, to run after the reset); every post is idempotent.

In the App (``WorkerDeps.dedupe`` and ``journal``) a review is made once per
:func:`review_key` (the repository, the head, the base and the deployment's settings), which
its check run carries as ``external_id``: a job finding a completed check run with its key
does nothing. A review weaker than a result already on the commit (proof-only after a full
review; any after a refutation) posts nothing over it (:mod:`veribot.bot.standing`). Results
are saved before they are posted (:mod:`veribot.bot.posting`), so a
job stopped or killed while posting resumes without running the code again. The steps of a
review, where the queue's :func:`~veribot.bot.queue.checkpoint` may hand the job back (and
``VERIBOT_TEST_PAUSE_AT`` may pause it, for tests), are ``started``, ``progress`` (after
each function), ``reviewed``, ``review-posted``, ``summary-posted`` and ``completed``.
"""

from __future__ import annotations

import base64
import dataclasses
import fcntl
import fnmatch
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import git
from github import Auth, Github, GithubIntegration
from github.CheckRun import CheckRun
from unidiff.patch import PatchSet

from veribot.bot.agentreview import AgentConfig, anthropic_agent
from veribot.bot.config import (
    DEFAULT_ANTHROPIC_URL,
    AgentCeilings,
    ConfigError,
    RepoConfig,
    Settings,
    parse_repo_config,
)
from veribot.bot.github import (
    API_VERSION,
    MAX_REVIEW_COMMENTS,
    Annotation,
    CheckOutput,
    Conclusion,
    GitHubClient,
    GitHubError,
    InlineComment,
    Level,
    RequestPolicy,
    SharedPacer,
    connect,
    place_comments,
)
from veribot.bot.intent import declared_refactoring
from veribot.bot.jobstate import JobState
from veribot.bot.llm import DEFAULT_MODEL
from veribot.bot.posting import (
    UNPLACED,
    Journal,
    Posting,
    Texts,
    deliver,
    finish_plainly,
    say_handed_back,
)
from veribot.bot.queue import (
    UNKNOWN_PULL,
    Command,
    HandBack,
    Job,
    LeaseLost,
    PostLater,
    checkpoint,
)
from veribot.bot.render import (
    GITHUB_TEXT_MAX_BYTES,
    SUMMARY_MARKER,
    explain,
    fit_blocks,
    md_code,
    md_text,
    render_markdown,
    summary_line,
    utf8_size,
)
from veribot.bot.review import FailOn, GitSource, Report, ReviewRequest, review
from veribot.bot.standing import external_id, standing_run, why_it_stands
from veribot.checks.agent.llm import LLMBudget
from veribot.checks.equivalence import Budget
from veribot.checks.project.units import ChangedUnit
from veribot.checks.sandbox.selftest import SelfTest
from veribot.checks.verdict import Verdict

log = logging.getLogger(__name__)

CONFIG_FILE = ".veribot.toml"
SOLVER_ONLY_NOTE = (
    "Solver-only review: the agent was not asked ({reason}), so every verdict comes from "
    "the solver and from executed counterexamples."
)
AGENT_NOTE = (
    "The agent (`{model}`) was asked about each changed function. Its answers are claims, "
    "shown with the status of each against the code's own facts; the pull request's title "
    "and description reached it as data only. Only a solver proof makes a function verified "
    "and only an executed counterexample refutes one, whatever the agent said."
)
NO_KEY_REASON = "no Anthropic API key is configured"
AGENT_OFF_REASON = "the agent is turned off in the base branch's `.veribot.toml`"
NO_LLM_BUDGET_REASON = "`budget.llm_calls` or `budget.tokens` is 0 in `.veribot.toml`"
NOT_EXECUTED_NOTE = (
    "No code from this pull request was executed: the review is proof-only, so nothing "
    "can be refuted here. A difference the solver sees stays inconclusive "
    "(`not-executed`) because it could not be confirmed by running both versions."
)
HELP_TEXT = """\
**veribot commands** (for people with write access to this repository):

- `/verify`: review the whole pull request again;
- `/verify path/to/file.py::function`: check one changed function (`Class.method` for a method);
- `/verify path/to/file.py`: check the changed functions of one file;
- `/verify` in a review comment: check the function on that line;
- `/verify help`: this text.

Verdicts: **verified** (proven for every input of the stated types), **refuted** (an input \
on which the two versions, really executed, behave differently), **inconclusive** (neither, \
with the reason)."""
REFUSAL_TEXT = (
    "Sorry @{login}, `/verify` is only available to people with write access to this "
    "repository. A maintainer can run it for you."
)
QUOTA_NOTE = (
    "This installation's {limit} reviews a day that may run code and ask the agent "
    "(`VERIBOT_REVIEWS_PER_DAY`) are spent: this review is proof-only and solver-only."
)
QUOTA_REASON = "the installation's daily quota of reviews is spent"
STANDING_TEXT = (
    "veribot posted no new result for this review: [an earlier check run]({url}) on {sha} "
    "stands ({state}). {why} Push a new commit to have it reviewed again."
)
SUPERSEDED_NOTE = (
    "A newer commit ({newer}) was pushed while this one was reviewed, so this review was "
    "stopped and posted nothing else: the newer commit's review replaces it."
)
PROGRESS_INTERVAL_S = 5.0
FETCH_TIMEOUT_S = 300.0
FETCH_ATTEMPTS = 3
# The marker and a margin leave room in GitHub's 65,535 bytes.
SUMMARY_MAX_BYTES = GITHUB_TEXT_MAX_BYTES - 256
IN_CHECK_REST = "the annotations of this check run"
TOKEN_REFRESH_MARGIN_S = 300.0

GitData = Callable[[Job, str, tuple[str, ...]], Path]
"""Given a job, the repository's clone URL and the commits needed, a local working tree
holding them (the production one is :class:`GitCache`; tests hand a temporary repository)."""


class FetchError(Exception):
    """The repository's commits could not be fetched (git failed or timed out)."""


class ReviewQuota:
    """How many reviews of pushes an installation may run with code execution and the agent
    in a day (a sliding 24 hours), counted in a SQLite file shared by the workers."""

    def __init__(
        self,
        path: Path,
        installation: int | None,
        per_day: int,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.key = str(installation)
        self.per_day = per_day
        self.clock = clock
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as db:
            db.execute("CREATE TABLE IF NOT EXISTS reviews (installation TEXT, at REAL)")

    def take(self) -> bool:
        """Count one review and return True, or False when the day's quota is spent."""
        now = self.clock()
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM reviews WHERE at <= ?", (now - 86_400.0,))
                (count,) = db.execute(
                    "SELECT COUNT(*) FROM reviews WHERE installation = ?", (self.key,)
                ).fetchone()
                if count >= self.per_day:
                    return False
                db.execute("INSERT INTO reviews VALUES (?, ?)", (self.key, now))
                return True
            finally:
                db.execute("COMMIT")


class Superseded(Exception):
    """The pull request moved on to ``newer`` while its older head was being reviewed."""

    def __init__(self, newer: str) -> None:
        super().__init__(f"superseded by {newer}")
        self.newer = newer


@dataclass(frozen=True)
class WorkerDeps:
    """What :func:`run_job` needs from the world."""

    settings: Settings
    github: Callable[[int | None], Github]  # a client for the job's installation
    git_data: GitData
    # A client for the job's installation acting on the job's repository only (preferred).
    github_for_repo: Callable[[int | None, str], Github] | None = None
    policy: Callable[[], RequestPolicy] = RequestPolicy
    pacer: Callable[[int | None], SharedPacer] | None = None  # shared by an installation's jobs
    quota: Callable[[int | None], ReviewQuota] | None = None  # reviews of pushes that run code
    clock: Callable[[], float] = time.monotonic
    progress_interval: float = PROGRESS_INTERVAL_S
    notes: tuple[str, ...] = ()  # said in every summary (e.g. proof-only under a target event)
    agent_unavailable: str | None = None  # why no agent even with a key (a fork: no secrets)
    inconclusive_conclusion: str | None = None  # overrides the repository's `.veribot.toml`
    execute: bool = True  # False: never run the pull request's code (proof-only review)
    # The App: a review whose check run is completed already (same commits and settings) is
    # not made again, and results are saved before they are posted, to resume from there.
    dedupe: bool = False
    journal: Journal | None = None

    def retry_delay(self, refusals: int) -> float:
        """How long a job waits before GitHub is asked again to take its results."""
        timing = self.settings.timing
        delay = timing.posting_retry * 2 ** max(0, refusals - 1)
        return float(min(delay, timing.posting_retry_max))


@dataclass(frozen=True)
class Outcome:
    """What a review posted: the conclusion and the report it came from."""

    conclusion: Conclusion
    report: Report | None
    summary: str
    # False: no result was posted. Either an earlier, stronger result on the commit stands
    # (see veribot.bot.standing): ``summary`` says which, and ``conclusion`` is its; or the
    # command was refused (``skipped``): ``summary`` is the refusal.
    posted: bool = True


# -- the job ---------------------------------------------------------------------------------


def run_job(job: Job, deps: WorkerDeps, *, raise_refused: bool = False) -> Outcome | None:
    """Do what ``job`` asks. A transient GitHub error before any code ran propagates (the
    queue retries the job); another is logged and the job abandoned, unless
    ``raise_refused`` (the Action, which falls back to reporting in the run on a 403).

    Returns what a review posted, or None when the job posted no review (a command answered
    in the thread, a stale head).
    """
    settings = deps.settings
    policy = deps.policy()
    if deps.pacer is not None:
        policy.pacer = deps.pacer(job.installation_id)
    gh = (
        deps.github_for_repo(job.installation_id, job.repo)
        if deps.github_for_repo is not None
        else deps.github(job.installation_id)
    )
    client = GitHubClient(
        gh,
        job.repo,
        bot_login=settings.bot_login,
        policy=policy,
    )
    context = {"pr": job.pr_key, "delivery": job.delivery_id, "command": job.command.value}
    log.info("job started", extra=context)
    try:
        if job.command is Command.REVIEW:
            outcome = _review_job(job, client, deps)
        else:
            outcome = _command_job(job, client, deps)
    except GitHubError as error:
        # Only raised before any code of the pull request ran (see review_and_post).
        if error.retry_after is not None and not raise_refused:
            # A rate limit resetting later than a job sleeps: run the job again then.
            raise PostLater(str(error), error.retry_after + 1.0) from error
        if error.transient or raise_refused:
            raise  # the queue retries, a bounded number of times
        log.error("job abandoned: %s", error, extra=context)
        return None
    log.info("job done", extra=context)
    return outcome


def _review_job(job: Job, client: GitHubClient, deps: WorkerDeps) -> Outcome | None:
    if job.pr_number == UNKNOWN_PULL and job.head_sha is not None:
        number = client.pull_with_head(job.head_sha)
        if number is None:
            log.info("re-run of a head no open pull request has", extra={"head": job.head_sha})
            return None
        job = dataclasses.replace(job, pr_number=number)
    pull = client.pull(job.pr_number)
    head_sha = str(pull.head.sha)
    if job.head_sha is not None and job.head_sha != head_sha:
        log.info("stale head: the pull request moved on", extra={"pr": job.pr_key})
        if job.resumed:  # it may have left a check run in progress on the older head
            _cancel_unfinished(client, deps, job.head_sha, newer=head_sha)
        return None
    base_sha = str(pull.base.sha)
    key = review_key(job, head_sha, base_sha, deps)
    if deps.journal is not None:
        saved = deps.journal.load(key)
        if saved is not None:  # reviewed already; posting was cut short
            log.info("posting the saved results", extra={"pr": job.pr_key, "head": head_sha})
            return posting_outcome(client, saved, deps.journal, deps.retry_delay)
    if deps.dedupe and client.completed_check_run(deps.settings.check_name, head_sha, key):
        log.info("already reviewed: nothing to do", extra={"pr": job.pr_key, "head": head_sha})
        return None
    clone_url = client.repo.clone_url or ""
    execute, notes, access = (
        deps.execute,
        deps.notes,
        AgentAccess.of(deps, pr_text(pull.title, pull.body)),
    )
    if deps.quota is not None and job.command is Command.REVIEW and execute:
        quota = deps.quota(job.installation_id)
        if not quota.take():
            log.info("daily quota spent: proof-only review", extra={"pr": job.pr_key})
            execute, notes = False, (*notes, QUOTA_NOTE.format(limit=quota.per_day))
            access = dataclasses.replace(access, unavailable=access.unavailable or QUOTA_REASON)
    runs = client.check_runs_of(deps.settings.check_name, head_sha)
    standing = standing_run(runs, execute, key)
    if standing is not None:
        log.info("an earlier result stands", extra={"pr": job.pr_key, "run": standing.id})
        return _stood(standing, head_sha)
    return review_and_post(
        client,
        number=job.pr_number,
        head_sha=head_sha,
        check_name=deps.settings.check_name,
        working_tree=lambda: deps.git_data(job, clone_url, (base_sha, head_sha)),
        base_sha=base_sha,
        notes=notes,
        inconclusive_conclusion=deps.inconclusive_conclusion,
        clock=deps.clock,
        progress_interval=deps.progress_interval,
        execute=execute,
        agent=access,
        hints_archive=deps.settings.data_dir / "hints.sqlite3",
        hints_ask=deps.settings.agent_hints,
        key=key,
        journal=deps.journal,
        retry_delay=deps.retry_delay,
        title=str(pull.title or ""),
        labels=tuple(str(label.name) for label in pull.labels or ()),
    )


def review_key(job: Job, head_sha: str, base_sha: str, deps: WorkerDeps) -> str:
    """What a review is of: the repository, the head, the base (whose `.veribot.toml` is the
    repository's configuration) and the deployment's settings that change the result; plus
    the delivery for a review asked for again. The check run carries it as its external id."""
    settings = deps.settings
    parts = [
        job.repo,
        head_sha,
        base_sha,
        settings.check_name,
        str(deps.execute),
        deps.inconclusive_conclusion or "",
        "agent" if settings.anthropic_api_key and not deps.agent_unavailable else "",
        *deps.notes,
    ]
    if job.rerun or job.command is not Command.REVIEW:
        parts.append(f"again:{job.delivery_id}")
    return "veribot:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]


def _stood(run: CheckRun, head_sha: str) -> Outcome:
    """The outcome of a review that stood down before ``run``, a stronger result."""
    conclusion = run.conclusion if run.status == "completed" else None
    title = run.output.title if run.output is not None else None
    text = STANDING_TEXT.format(
        url=run.html_url,
        sha=head_sha[:12],
        state=md_text(f"{conclusion}: {title}" if conclusion else "in progress"),
        why=why_it_stands(run),
    )
    known = conclusion in ("success", "failure", "neutral", "action_required")
    stands = _as_conclusion(conclusion) if conclusion is not None and known else "neutral"
    return Outcome(stands, None, text, posted=False)


def _cancel_unfinished(client: GitHubClient, deps: WorkerDeps, head_sha: str, newer: str) -> None:
    """Complete, cancelled, a check run this bot left in progress on a superseded head."""
    try:
        runs = client.check_runs_of(deps.settings.check_name, head_sha)
        for run in runs:
            if run.status != "completed":
                summary = SUPERSEDED_NOTE.format(newer=newer[:12])
                finish_plainly(client, run.id, "cancelled", CheckOutput("Superseded", summary))
    except GitHubError as error:
        log.warning("could not cancel the older head's check run: %s", error)


def _command_job(job: Job, client: GitHubClient, deps: WorkerDeps) -> Outcome | None:
    login = job.requested_by or "there"
    reply_to = job.comment_id if job.on_review_comment else None
    # The permission API, never the author association: an organisation member (MEMBER)
    # may have read access only.
    if not (job.requested_by and client.has_write_access(job.requested_by)):
        log.info("/verify refused: no write access", extra={"pr": job.pr_key, "user": login})
        refusal = REFUSAL_TEXT.format(login=login)
        client.reply(job.pr_number, refusal, review_comment_id=reply_to, answering=job.comment_id)
        return Outcome("skipped", None, refusal, posted=False)
    if job.comment_id is not None:
        reaction = "+1" if job.command is Command.HELP else "eyes"
        client.react(job.comment_id, reaction, on_review_comment=job.on_review_comment)
    if job.command is Command.HELP:
        client.reply(job.pr_number, HELP_TEXT, review_comment_id=reply_to, answering=job.comment_id)
        return None
    whole_pr = job.target is None and not job.on_review_comment
    if whole_pr:
        outcome = _review_job(job, client, deps)
        text = "The pull request was reviewed again"
        if outcome is not None and not outcome.posted:
            text = outcome.summary
        elif outcome is not None and outcome.report is not None:
            text += f": {summary_line(outcome.report)}. Details in the summary comment."
        else:
            text += "; see the check run for the result."
        _reply_after_run(client, job, text, reply_to)
        return outcome
    pull = client.pull(job.pr_number)
    base_sha, head_sha = str(pull.base.sha), str(pull.head.sha)
    try:
        tree = deps.git_data(job, client.repo.clone_url or "", (base_sha, head_sha))
        config = read_repo_config(tree, base_sha)
        execute = deps.execute and config.execute
        source = GitSource(tree, merge_base(tree, base_sha, head_sha), head_sha)
        access = AgentAccess.of(deps, pr_text(pull.title, pull.body))
        with pull_request_agent(access, config) as (agent, why_not):
            report = review(
                ReviewRequest(
                    source,
                    budget=Budget(execute=execute),
                    select=target_filter(job.target, job.path, job.line),
                    max_units=config.budget.units,
                    review_tests=True,  # an explicit target is checked, as with the globs
                    review_stubs=True,
                    agent=agent,
                    agent_reason=why_not,
                )
            )
    except Exception as error:  # the command's boundary: answer in the thread, never silence
        log.exception("/verify failed", extra={"pr": job.pr_key, "target": job.target})
        text = f"veribot could not run the check: {type(error).__name__}: {md_text(str(error))}"
        _reply_after_run(client, job, text, reply_to)
        return None
    if not report.items:
        what = (
            md_code(job.target) if job.target else f"line {job.line} of {md_code(job.path or '')}"
        )
        changed = ", ".join(md_code(u.qualname) for u in report.filtered_out) or "none"
        text = f"No changed function matches {what}. Changed units: {changed}."
    else:
        notes = _with_execution_note(deps.notes, execute)
        text = "\n\n".join([_strip_marker(render_markdown(report)), agent_note(report), *notes])
    _reply_after_run(client, job, text, reply_to)
    return None


def _reply_after_run(client: GitHubClient, job: Job, text: str, reply_to: int | None) -> None:
    """Answer a command whose code has run: a failure is logged, never retried (that would
    run the pull request's code again)."""
    try:
        client.reply(job.pr_number, text, review_comment_id=reply_to, answering=job.comment_id)
    except GitHubError as error:
        log.error("could not answer the command: %s", error, extra={"pr": job.pr_key})


# -- the review and what it posts ------------------------------------------------------------


def review_and_post(
    client: GitHubClient,
    *,
    number: int,
    head_sha: str,
    check_name: str,
    working_tree: Callable[[], Path],
    base_sha: str,
    notes: Sequence[str] = (),
    inconclusive_conclusion: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    progress_interval: float = PROGRESS_INTERVAL_S,
    execute: bool = True,
    agent: AgentAccess | None = None,
    hints_archive: Path | None = None,
    hints_ask: bool = False,
    key: str = "",
    journal: Journal | None = None,
    retry_delay: Callable[[int], float] = lambda _n: 0.0,
    title: str = "",
    labels: Sequence[str] = (),
) -> Outcome:
    """Start the check run, review ``base_sha...head_sha``, and post the results.

    ``title`` and ``labels`` (the pull request's) may declare it behaviour-preserving
    (``intent.declared_refactoring``), as its commit subjects may.

    ``hints_archive``: the file of proven hints (per repository); where the engine stops, its
    hints are tried, and with ``hints_ask`` the agent proposes more, each proven before use.

    ``agent``: how to reach the model (none: solver-only); whether it is asked, which model
    and within what budget is the base branch's `.veribot.toml`'s call.

    ``key`` names what is reviewed (the check run's ``external_id``); with a ``journal`` the
    results are saved before they are posted, so a stop while posting resumes without
    reviewing again (see :mod:`veribot.bot.posting`).

    ``execute=False`` (or ``execute = false`` in `.veribot.toml`) reviews proof-only: no code
    of the pull request runs, and the summary says so. Once started, the check run is always
    completed, with a summary saying what went wrong if anything did: ``neutral`` for a bad
    `.veribot.toml` or when GitHub or git did not answer, ``cancelled`` when a newer head
    superseded this one, ``failure`` otherwise. Only an error starting it propagates, and
    what the queue's checkpoints raise: a job handed back (its check run says so, and stays
    in progress for the next worker to complete), or one whose lease lapsed.
    """
    run_id = client.start_check_run(
        check_name,
        head_sha,
        CheckOutput("Reviewing", "Reading the changes."),
        external_id(key, execute) if key else None,
    )

    def finish(conclusion: Conclusion, title: str, summary: str) -> Outcome:
        texts = Texts(summary, summary)
        posting = Posting(
            key, run_id, number, head_sha, conclusion, title, texts, texts, post_summary=False
        )
        deliver(client, _saved(journal, posting), journal, retry_delay=retry_delay)
        return Outcome(conclusion, None, summary)

    # From here the check run is always completed, and nothing is raised but an interrupt:
    # raising would make the queue run the pull request's code again.
    try:
        checkpoint("started")
        tree = working_tree()
        config = read_repo_config(tree, base_sha)
        execute = execute and config.execute

        def newer() -> str | None:
            try:
                head = client.current_head(number)
            except GitHubError as error:  # cannot tell: the review stands
                log.warning("could not read the pull request's head: %s", error)
                return None
            return head if head != head_sha else None

        progress = ProgressReporter(
            client, run_id, clock=clock, interval=progress_interval, superseded=newer
        )
        start = merge_base(tree, base_sha, head_sha)
        with pull_request_agent(agent or AgentAccess(), config) as (asked, why_not):
            request = dataclasses.replace(
                config_request(GitSource(tree, start, head_sha), config, execute, asked, why_not),
                declared=declared_refactoring([title], (), labels,
                                              config.refactoring_labels) or None,
                hints=hints_archive is not None,
                hints_archive=hints_archive,
                hints_ask=hints_ask,
                repo_name=client.full_name,
            )
            report = review(request, progress)
            notes = (*notes, *(asked.notes if asked is not None else ()))
        moved_on = newer()
        if moved_on is not None:
            raise Superseded(moved_on)
        posting = plan_posting(
            client,
            key=key,
            run_id=run_id,
            number=number,
            head_sha=head_sha,
            report=report,
            inconclusive_conclusion=inconclusive_conclusion or config.inconclusive_conclusion,
            notes=_with_execution_note(notes, execute),
            anchors=commit_anchors(tree, start, head_sha),
            changed=commit_anchors(tree, start, head_sha, changed_only=True),
            fail_on=config.fail_on,
        )
    except HandBack:
        say_handed_back(client, run_id)
        raise
    except LeaseLost:  # another worker may hold the check run now: leave it alone
        raise
    except Superseded as error:
        log.info("review superseded", extra={"pr": number, "head": head_sha, "newer": error.newer})
        return finish("cancelled", "Superseded", SUPERSEDED_NOTE.format(newer=error.newer[:12]))
    except ConfigError as error:
        summary = f"veribot did not review this pull request: {md_text(str(error))}"
        return finish("neutral", "Invalid .veribot.toml", summary)
    except (GitHubError, FetchError) as error:  # GitHub or git did not answer: say so, not red
        log.exception("review could not fetch", extra={"repo": client.full_name, "pr": number})
        summary = (
            "veribot could not fetch what it needs, so nothing was reviewed: "
            f"{md_text(str(error))}. Re-run the check (or push again) to try once more."
        )
        return finish("neutral", "Review not run", summary)
    except Exception as error:  # the job's boundary: say it in the check run, never green
        log.exception("review failed", extra={"repo": client.full_name, "pr": number})
        summary = (
            "veribot could not finish the review, so nothing was verified: "
            f"{type(error).__name__}: {md_text(str(error))}"
        )
        return finish("failure", "Review failed", summary)
    except BaseException:  # an interrupt (the worker stops): complete, then let it through
        summary = "veribot stopped before the review finished. Re-run the check to review."
        finish_plainly(client, run_id, "neutral", CheckOutput("Review interrupted", summary))
        raise
    return posting_outcome(client, _saved(journal, posting), journal, retry_delay, report)


def _saved(journal: Journal | None, posting: Posting) -> Posting:
    return journal.save(posting) if journal is not None else posting


def posting_outcome(
    client: GitHubClient,
    posting: Posting,
    journal: Journal | None,
    retry_delay: Callable[[int], float],
    report: Report | None = None,
) -> Outcome:
    """Post what of ``posting`` has not landed (see :func:`veribot.bot.posting.deliver`)."""
    done = deliver(client, posting, journal, retry_delay=retry_delay)
    return Outcome(done.conclusion, report, done.texts.comment)


def _with_execution_note(notes: Sequence[str], execute: bool) -> tuple[str, ...]:
    if execute or NOT_EXECUTED_NOTE in notes:
        return tuple(notes)
    return (NOT_EXECUTED_NOTE, *notes)


def plan_posting(
    client: GitHubClient,
    *,
    key: str,
    run_id: int,
    number: int,
    head_sha: str,
    report: Report,
    inconclusive_conclusion: str,
    notes: Sequence[str] = (),
    anchors: dict[str, set[int]] | None = None,
    changed: dict[str, set[int]] | None = None,
    fail_on: str = FailOn.UNTESTED.value,
) -> Posting:
    """Render what the review posts: the check run's completion, the review's inline
    comments and the summary comment, for either fate of the review (placed or refused).

    ``anchors``: the lines of the reviewed commit's diff (see :func:`commit_anchors`); by
    default the pull request's diff as GitHub serves it now, which a push may have moved.
    ``changed``: those of them the diff adds (no context line), where a comment goes first.
    """
    conclusion = conclusion_for(report, inconclusive_conclusion, fail_on)
    review = ""  # to post
    try:
        if anchors is None:
            anchors = client.diff_anchors(number)
        comments = inline_comments(report, anchors, changed)
    except GitHubError as error:  # the findings go to the summary instead
        log.warning("inline comments not posted: %s", error, extra={"pr": number})
        anchors, comments, review = {}, inline_comments(report, {}), UNPLACED
    rest = f"the annotations of [the check run]({client.check_run_url(run_id)})"

    def texts(leftovers: Sequence[InlineComment]) -> Texts:
        return Texts(
            summary_markdown(report, head_sha, notes, leftovers, rest=IN_CHECK_REST),
            summary_markdown(report, head_sha, notes, leftovers, rest=rest),
        )

    placed = texts(place_comments(comments, anchors)[1])
    return Posting(
        key=key,
        run_id=run_id,
        number=number,
        head_sha=head_sha,
        conclusion=conclusion,
        title=check_title(report),
        placed=placed,
        unplaced=texts(comments) if comments else placed,
        annotations=tuple(check_annotations(report)),
        review_body=f"veribot: {summary_line(report)}.",
        comments=tuple(comments),
        anchors=anchors,
        review=review,
    )


def conclusion_for(report: Report, inconclusive_conclusion: str,
                   fail_on: str = FailOn.UNTESTED.value) -> Conclusion:
    """``failure`` on what ``fail_on`` names (by default an untested behaviour change, or
    any in a declared refactoring: ``review.FailOn``), the configured one on an undecided
    change, else success (a tested behaviour change is intended)."""
    policy = FailOn(fail_on)
    if policy is not FailOn.NEVER and report.failed(policy):
        return "failure"
    if report.count(Verdict.INCONCLUSIVE, compared_only=True):
        return _as_conclusion(inconclusive_conclusion)
    return "success"


def _as_conclusion(value: str) -> Conclusion:
    for known in ("success", "failure", "neutral", "action_required"):
        if value == known:
            return known
    raise ConfigError(f"{value!r} is not a check-run conclusion veribot uses")


def check_title(report: Report) -> str:
    """``1 refuted, 1 verified, 0 inconclusive``."""
    if not report.items:
        return "No changed Python functions"
    return (
        f"{report.count(Verdict.REFUTED)} refuted, {report.count(Verdict.VERIFIED)} verified, "
        f"{report.count(Verdict.INCONCLUSIVE)} inconclusive"
    )


_LEVELS: dict[Verdict, Level] = {
    Verdict.REFUTED: "failure",
    Verdict.INCONCLUSIVE: "warning",
    Verdict.VERIFIED: "notice",
}


def check_annotations(report: Report) -> list[Annotation]:
    """One annotation per compared unit present in the head revision."""
    found = []
    for item in report.items:
        lines = item.unit.after_lines
        if lines is None or not item.compared:
            continue
        verdict = item.result.verdict
        found.append(
            Annotation(
                path=item.unit.path,
                start_line=lines[0],
                end_line=lines[0],
                level=_LEVELS[verdict],
                message=f"{verdict.value} [{item.result.reason}]: {explain(item)}",
                title=f"{item.unit.entry}: {verdict.value}",
            )
        )
    return found


def inline_comments(
    report: Report, anchors: dict[str, set[int]], changed: dict[str, set[int]] | None = None
) -> list[InlineComment]:
    """A comment per refuted or undecided changed function, on a line of its diff if any:
    its first changed line (of ``changed``), else its first line of the diff's context."""
    comments = []
    for item in report.items:
        verdict = item.result.verdict
        lines = item.unit.after_lines
        if verdict is Verdict.VERIFIED or not item.compared or lines is None:
            continue
        first, last = lines
        path = item.unit.path
        in_diff = sorted(n for n in (changed or {}).get(path, set()) if first <= n <= last) or (
            sorted(n for n in anchors.get(path, set()) if first <= n <= last)
        )
        line = in_diff[0] if in_diff else first
        body = f"**{verdict.value}** ({md_code(item.result.reason)}): {md_text(explain(item))}\n\n"
        if report.agent_model and item.agent is not None:
            body += f"Agent: {item.agent.outcome.value}: {md_text(item.agent.summary)}\n\n"
            body += "<sub>veribot: the solver's verdict; the agent's answer, checked</sub>"
        else:
            body += "<sub>veribot, solver-only review</sub>"
        comments.append(InlineComment(item.unit.path, line, body))
    return comments


def summary_markdown(
    report: Report,
    head_sha: str,
    notes: Sequence[str],
    leftovers: Sequence[InlineComment],
    *,
    rest: str = IN_CHECK_REST,
    max_bytes: int = SUMMARY_MAX_BYTES,
) -> str:
    """The summary comment's body (the marker is added by the poster), within ``max_bytes``
    of UTF-8; what does not fit is counted and said to be in ``rest``."""
    tail = "\n\n".join([agent_note(report), *notes, f"<sub>Reviewed at {head_sha[:12]}.</sub>"])
    room = max_bytes - utf8_size(tail) - 4
    placed = ""
    if leftovers:
        lines, _ = fit_blocks(
            [f"- {md_code(c.path)} line {c.line}: {c.body.splitlines()[0]}" for c in leftovers],
            room // 4,
            lambda n: f"- … {n} more: see {rest}.",
        )
        placed = (
            f"{len(leftovers)} finding(s) could not be placed inline (not on a line of the "
            f"diff, or beyond {MAX_REVIEW_COMMENTS}):\n" + "\n".join(lines)
        )
        room -= utf8_size(placed) + 2
    table = _strip_marker(render_markdown(report, max_bytes=room, rest=rest)).rstrip()
    parts = [table, placed] if placed else [table]
    return "\n\n".join([*parts, tail]) + "\n"


def agent_note(report: Report) -> str:
    """Whether the agent was asked (and which model), or why the review is solver-only."""
    if report.agent_model:
        return AGENT_NOTE.format(model=report.agent_model)
    return SOLVER_ONLY_NOTE.format(reason=report.agent_reason or NO_KEY_REASON)


def _strip_marker(markdown: str) -> str:
    return markdown.replace(SUMMARY_MARKER + "\n", "", 1)


class ProgressReporter:
    """Updates the check run with "7 of 12 functions checked", at most once per interval;
    then stops the review (:class:`Superseded`) if ``superseded()`` names a newer head."""

    def __init__(
        self,
        client: GitHubClient,
        run_id: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = PROGRESS_INTERVAL_S,
        superseded: Callable[[], str | None] | None = None,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.clock = clock
        self.interval = interval
        self.superseded = superseded
        self._last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        checkpoint("progress")  # where a stopping worker hands the review back
        now = self.clock()
        if done == 0 or done == total:  # the start is posted already, the end comes next
            return
        if self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        try:
            newer = self.superseded() if self.superseded is not None else None
            self.client.update_check_run(
                self.run_id, CheckOutput("Reviewing", f"{done} of {total} functions checked")
            )
        except GitHubError as error:  # progress is a courtesy; the review goes on
            log.warning("progress update failed: %s", error)
            return
        if newer is not None:
            raise Superseded(newer)


# -- the agent -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentAccess:
    """How this deployment may reach the agent for one pull request. The key is never shown."""

    api_key: str | None = field(default=None, repr=False)
    base_url: str = DEFAULT_ANTHROPIC_URL
    model: str = DEFAULT_MODEL  # unless `.veribot.toml` names one
    cache: Path | None = None
    pr_text: str = ""  # the pull request's title and description: data for the agent
    unavailable: str | None = None  # why it cannot be asked even with a key
    ceilings: AgentCeilings = field(default_factory=AgentCeilings)  # over `.veribot.toml`

    @classmethod
    def of(cls, deps: WorkerDeps, pr_text: str = "") -> AgentAccess:
        """The access a worker's settings give, for a pull request with ``pr_text``."""
        settings = deps.settings
        return cls(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            cache=settings.llm_cache_path,
            pr_text=pr_text,
            unavailable=deps.agent_unavailable,
            ceilings=settings.agent_ceilings,
        )


def pr_text(title: str | None, body: str | None) -> str:
    """The pull request's title and description, as the agent reads them (as data)."""
    return f"Title: {title or ''}\n\n{body or ''}".strip()


@contextmanager
def pull_request_agent(
    access: AgentAccess, config: RepoConfig
) -> Iterator[tuple[AgentConfig | None, str]]:
    """The agent to ask (``None`` and the reason why not); closed when the review is done."""
    reason = ""
    if access.unavailable:
        reason = access.unavailable
    elif not access.api_key:
        reason = NO_KEY_REASON
    elif not config.agent_enabled:
        reason = AGENT_OFF_REASON
    elif config.budget.llm_calls == 0 or config.budget.tokens == 0:
        reason = NO_LLM_BUDGET_REASON
    if reason or access.api_key is None:
        yield None, reason
        return
    with anthropic_agent(
        access.api_key,
        model=config.agent_model or access.model,
        base_url=access.base_url,
        budget=LLMBudget(max_calls=config.budget.llm_calls, max_tokens=config.budget.tokens),
        temperature=config.agent_temperature,
        pr_text=access.pr_text,
        cache=access.cache,
        ceilings=access.ceilings,
        default_model=access.model,
    ) as agent:
        yield agent, ""


# -- configuration and selection -------------------------------------------------------------


def read_repo_config(tree: Path, base_sha: str) -> RepoConfig:
    """`.veribot.toml` as committed on the base (never the PR head); defaults if absent."""
    repo = git.Repo(tree)
    try:
        blob = repo.commit(base_sha).tree / CONFIG_FILE
    except KeyError:
        return RepoConfig()
    data = blob.data_stream.read()
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{CONFIG_FILE} is not UTF-8 text: {error}") from error
    return parse_repo_config(text)


def commit_anchors(
    tree: Path, base: str, head: str, *, changed_only: bool = False
) -> dict[str, set[int]]:
    """The lines of ``head`` a review comment posted on ``head`` may anchor to: those of the
    diff from ``base`` (the merge base) to ``head``, whatever the pull request's head is now.
    ``changed_only``: only the lines the diff adds, not its context lines."""
    diff = git.Repo(tree).git.diff("--no-color", "--no-ext-diff", "-M", base, head)
    anchors: dict[str, set[int]] = {}
    for patched in PatchSet(diff):
        if patched.is_removed_file:
            continue
        anchors[patched.path] = {
            line.target_line_no
            for hunk in patched
            for line in hunk
            if line.target_line_no is not None and (line.is_added or not changed_only)
        }
    return anchors


def merge_base(tree: Path, base_sha: str, head_sha: str) -> str:
    """Where the head branched from the base: what GitHub's pull request diff starts at.

    In a shallow clone the merge base may lie below the cut: the history is then fetched
    in full from origin, and if that fails :class:`FetchError` says so (falling back to the
    base would review the base branch's own changes as if the pull request made them).
    """
    repo = git.Repo(tree)
    bases = repo.merge_base(base_sha, head_sha)
    shallow = Path(repo.git_dir, "shallow").exists()
    if not bases and shallow:
        try:
            env = dict(os.environ) | {"GIT_TERMINAL_PROMPT": "0"}
            _fetch(repo, ["--unshallow"], env, FETCH_TIMEOUT_S)
        except FetchError as error:
            raise FetchError(
                "the checkout is shallow and holds no common ancestor of the base and the "
                f"head, and deepening it failed ({error}); fetch the full history "
                "(actions/checkout: fetch-depth: 0)"
            ) from None
        bases = repo.merge_base(base_sha, head_sha)
    if not bases:
        return base_sha  # unrelated histories: the whole head is the change
    return str(bases[0].hexsha)


def _matches(path: str, pattern: str) -> bool:
    if fnmatch.fnmatchcase(path, pattern):
        return True
    return pattern.startswith("**/") and fnmatch.fnmatchcase(path, pattern[3:])


def config_request(
    source: GitSource,
    config: RepoConfig,
    execute: bool,
    agent: AgentConfig | None,
    agent_reason: str,
) -> ReviewRequest:
    """The review of a pull request as the base branch's `.veribot.toml` asks for it."""
    return ReviewRequest(
        source,
        budget=Budget(execute=execute),
        select=config_filter(config),
        max_units=config.budget.units,
        review_tests=config.review_tests,
        review_stubs=config.review_stubs,
        agent=agent,
        agent_reason=agent_reason,
    )


def config_filter(config: RepoConfig) -> Callable[[ChangedUnit], bool]:
    """Units whose paths the include globs take and the exclude globs leave."""

    def wanted(unit: ChangedUnit) -> bool:
        return any(_matches(unit.path, p) for p in config.include) and not any(
            _matches(unit.path, p) for p in config.exclude
        )

    return wanted


def target_filter(
    target: str | None, path: str | None = None, line: int | None = None
) -> Callable[[ChangedUnit], bool]:
    """The units a `/verify` names: ``path::func``, a ``path``, or the function on a line.

    An explicit target is checked even where `.veribot.toml`'s globs leave its file out.
    """

    def chosen(unit: ChangedUnit) -> bool:
        if target is not None:
            return target in (unit.qualname, unit.path)
        lines = unit.after_lines
        return (
            unit.path == path
            and line is not None
            and lines is not None
            and (lines[0] <= line <= lines[1])
        )

    return chosen


# -- where the git data comes from -----------------------------------------------------------


class GitCache:
    """Working trees of the repositories, fetched on demand into ``root`` (GitPython).

    ``token_for(installation_id, repo)`` gives the token to fetch with (see
    :func:`ensure_commits`).
    Workers share the cache: each repository's is initialised and fetched under an exclusive
    lock on its own lock file. A fetch that fails is tried ``attempts`` times, waiting
    ``backoff`` seconds and doubling; each is stopped after ``timeout`` seconds.
    """

    def __init__(
        self,
        root: Path,
        token_for: Callable[[int | None, str], str | None],
        *,
        timeout: float = FETCH_TIMEOUT_S,
        attempts: int = FETCH_ATTEMPTS,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.root = root
        self.token_for = token_for
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff
        self.sleep = sleep

    def __call__(self, job: Job, clone_url: str, shas: tuple[str, ...]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / job.repo.replace("/", "__")
        with _locked(self.root / f"{path.name}.lock"):
            repo = _cache_repo(path, clone_url)
            for attempt in range(1, self.attempts + 1):
                try:
                    token = self.token_for(job.installation_id, job.repo)
                    ensure_commits(repo, job.pr_number, shas, token, timeout=self.timeout)
                    break
                except FetchError as error:
                    if attempt == self.attempts:
                        raise
                    delay = self.backoff * 2 ** (attempt - 1)
                    log.warning(
                        "fetch failed (%s); retrying in %.1f s",
                        error,
                        delay,
                        extra={"pr": job.pr_key},
                    )
                    self.sleep(delay)
        return path


@contextmanager
def _locked(lock_file: Path) -> Iterator[None]:
    """An exclusive lock on ``lock_file`` (between threads and processes alike)."""
    with open(lock_file, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _cache_repo(path: Path, clone_url: str) -> git.Repo:
    """The cache's repository at ``path`` with ``origin`` at ``clone_url`` (made if absent)."""
    if not (path / ".git").is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        git.Repo.init(path)
    repo = git.Repo(path)
    if "origin" not in [remote.name for remote in repo.remotes]:
        repo.create_remote("origin", clone_url)
    elif repo.remotes.origin.url != clone_url:
        repo.remotes.origin.set_url(clone_url)
    return repo


def ensure_commits(
    repo: git.Repo,
    pr_number: int,
    shas: Sequence[str],
    token: str | None,
    *,
    timeout: float = FETCH_TIMEOUT_S,
) -> None:
    """Fetch ``shas`` from origin unless they are here: by commit id (each kept under
    ``refs/veribot/``), or else the pull request's head and merge refs; never every branch.

    Raises :class:`FetchError` when git fails, takes longer than ``timeout`` seconds, or
    origin does not have them. The token travels in an environment-borne HTTP header, never
    in a URL or a command line.
    """
    missing = [sha for sha in shas if not _has_commit(repo, sha)]
    if not missing:
        return
    env = dict(os.environ)
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env |= {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
        }
    env["GIT_TERMINAL_PROMPT"] = "0"
    by_id = [f"+{sha}:refs/veribot/{sha}" for sha in missing]
    pull_refs = [
        f"+refs/pull/{pr_number}/head:refs/remotes/origin/pull/{pr_number}",
        f"+refs/pull/{pr_number}/merge:refs/remotes/origin/pull/{pr_number}-merge",
    ]
    problems = []
    for refspecs in (by_id, pull_refs[:1], pull_refs[1:]):
        try:
            _fetch(repo, refspecs, env, timeout)
        except FetchError as error:
            problems.append(str(error))
        missing = [sha for sha in missing if not _has_commit(repo, sha)]
        if not missing:
            return
    raise FetchError(
        f"could not fetch {', '.join(sha[:12] for sha in missing)}: " + "; ".join(problems)
    )


def _fetch(repo: git.Repo, args: Sequence[str], env: dict[str, str], timeout: float) -> None:
    """``git fetch --no-tags origin ARGS``, stopped after ``timeout`` seconds."""
    try:
        repo.git.fetch("--no-tags", "origin", *args, env=env, kill_after_timeout=timeout)
    except git.GitCommandError as error:
        if error.status == -9 or "kill" in str(error.stderr).lower():  # the timer's SIGKILL
            raise FetchError(f"git fetch did not finish in {timeout:.0f} s (timed out)") from None
        detail = " ".join(str(error.stderr).split())[-300:]
        raise FetchError(f"git fetch failed: {detail}") from None


def _has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        repo.commit(sha)
    except (ValueError, git.BadName, git.BadObject):
        return False
    return True


# -- App authentication ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    token: str
    expires_at: float  # seconds since the epoch


@dataclass
class InstallationTokens:
    """Installation tokens of a GitHub App, cached and refreshed before their hour runs out.

    The App JWT is made by PyGithub (``Auth.AppAuth``) from the App id and private key.
    ``wall_clock`` is injectable so tests can step past expiry.
    """

    app_id: int
    private_key: str = field(repr=False)
    base_url: str
    wall_clock: Callable[[], float] = time.time
    margin: float = TOKEN_REFRESH_MARGIN_S
    _cache: dict[tuple[int, str | None], _Token] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _integration(self) -> GithubIntegration:
        return GithubIntegration(
            auth=Auth.AppAuth(self.app_id, self.private_key),
            base_url=self.base_url,
            api_version=API_VERSION,
        )

    def app_slug(self) -> str:
        """The App's slug (its bot is ``<slug>[bot]``), from GET /app."""
        integration = self._integration()
        try:
            return str(integration.get_app().slug)
        finally:
            integration.close()

    def token(self, installation_id: int, repo: str | None = None) -> str:
        """A token valid for at least ``margin`` more seconds; with ``repo`` ("owner/name"),
        one that can reach that repository only."""
        with self._lock:
            key = (installation_id, repo)
            cached = self._cache.get(key)
            if cached is not None and cached.expires_at - self.margin > self.wall_clock():
                return cached.token
            integration = self._integration()
            try:
                if repo is None:
                    granted = integration.get_access_token(installation_id)
                    token, expires = granted.token, granted.expires_at
                else:
                    _, data = integration.requester.requestJsonAndCheck(
                        "POST",
                        f"/app/installations/{installation_id}/access_tokens",
                        input={"repositories": [repo.split("/", 1)[-1]]},
                    )
                    token = str(data["token"])
                    expires = datetime.fromisoformat(str(data["expires_at"]))
            finally:
                integration.close()
            if expires.tzinfo is None:
                expires = expires.replace(tzinfo=UTC)
            fresh = _Token(token, expires.timestamp())
            self._cache[key] = fresh
            log.info(
                "installation token refreshed",
                extra={"installation": installation_id, "expires": fresh.expires_at},
            )
            return fresh.token

    def github(self, installation_id: int | None, repo: str | None = None) -> Github:
        """A PyGithub client acting as the installation (on ``repo`` only, if given)."""
        if installation_id is None:
            raise ConfigError("the delivery names no installation: cannot act as the App")
        return connect(self.base_url, self.token(installation_id, repo))


def sandbox_checked(deps: WorkerDeps, check: SelfTest) -> WorkerDeps:
    """``deps`` as the sandbox self-test allows: unchanged if every escape probe failed,
    otherwise proof-only, with the reason said in every summary."""
    if check.ok:
        log.info("sandbox self-test passed: %s", check.isolation)
        return deps
    log.error("sandbox self-test failed, code execution is off:\n%s", check.report())
    return replace(deps, execute=False, notes=(*deps.notes, check.reason()))


def app_deps(
    settings: Settings, tokens: InstallationTokens, state: JobState | None = None
) -> WorkerDeps:
    """The production dependencies of a worker: App tokens (each narrowed to the job's
    repository), a git cache in the data dir, and the bot's login from GET /app unless
    ``VERIBOT_BOT_LOGIN`` names it; reviews once per review key, with results saved in
    ``state`` (the queue's) until posted."""
    if not settings.bot_login_given:
        settings = dataclasses.replace(settings, bot_login=f"{tokens.app_slug()}[bot]")

    def token_for(installation_id: int | None, repo: str) -> str | None:
        return None if installation_id is None else tokens.token(installation_id, repo)

    return WorkerDeps(
        settings=settings,
        github=tokens.github,
        github_for_repo=tokens.github,
        git_data=GitCache(settings.data_dir / "repos", token_for),
        policy=lambda: RequestPolicy(
            max_attempts=settings.timing.github_attempts,
            backoff=settings.timing.github_backoff,
            max_rate_limit_wait=settings.timing.github_rate_limit_wait,
            writes_per_minute=settings.writes_per_minute,
        ),
        pacer=lambda installation: SharedPacer(
            settings.usage_path, installation, settings.writes_per_minute
        ),
        progress_interval=settings.progress_interval,
        dedupe=True,
        journal=Journal(state, settings.timing.retention) if state is not None else None,
        quota=None
        if settings.reviews_per_day is None
        else lambda installation: ReviewQuota(
            settings.usage_path, installation, settings.reviews_per_day or 0
        ),
    )
