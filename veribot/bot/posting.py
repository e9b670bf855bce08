"""Posting a finished review to GitHub step by step, so that a stop at any step resumes.

A review's results are rendered once into a :class:`Posting` and, in the App, saved in the
:class:`Journal` beside the queue before anything is posted. :func:`deliver` then posts the
review's inline comments, the summary comment, and last the check run's completion, saving
after each step what has landed. A worker that stops or dies on the way leaves the journal
to the next run of the job, which posts only what is missing and never runs the pull
request's code again; each step is idempotent besides (the review and the summary comment
are found again by their hidden markers). The completion is last, so a completed check run
means everything was posted: a job finding one for the same review key has nothing to do.

A completion GitHub does not take (it does not answer, or answers 5xx) is tried with the
conclusion alone at once, and if that fails too the job raises
:class:`~veribot.bot.queue.PostLater`: the queue runs it again later (``posting_retry``
seconds, doubling up to ``posting_retry_max``), until the completion lands. Without a
journal (the Action) the check run is completed plainly or the failure logged.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from veribot.bot.github import (
    Annotation,
    CheckOutput,
    Conclusion,
    GitHubClient,
    GitHubError,
    InlineComment,
    annotation_batches,
)
from veribot.bot.jobstate import JobState
from veribot.bot.queue import HandBack, PostLater, checkpoint

log = logging.getLogger(__name__)

PLACED, UNPLACED = "placed", "unplaced"
HANDED_BACK_NOTE = (
    "The worker running this review was stopped before it finished, so the review was "
    "handed back to the queue: the next worker resumes it and completes this check run."
)


@dataclass(frozen=True)
class Texts:
    """The check run's summary and the summary comment, for one placement of the comments."""

    check: str
    comment: str


@dataclass(frozen=True)
class Posting:
    """What a finished review posts, and how much of it has landed.

    ``placed``: the texts when GitHub takes the review (its leftover comments listed);
    ``unplaced``: when it refuses it (every finding in the summary). ``post_summary``
    False: an outcome without a summary comment (a review that could not run).
    """

    key: str
    run_id: int
    number: int
    head_sha: str
    conclusion: Conclusion
    title: str
    placed: Texts
    unplaced: Texts
    annotations: tuple[Annotation, ...] = ()
    review_body: str = ""
    comments: tuple[InlineComment, ...] = ()
    anchors: dict[str, set[int]] = field(default_factory=dict)
    post_summary: bool = True
    # What has landed.
    review: str = ""  # PLACED or UNPLACED once the review step is done
    summary_done: bool = False
    batches_sent: int = 0  # annotation requests sent before the completing one
    completed: bool = False
    refusals: int = 0  # completions GitHub has not taken yet

    @property
    def texts(self) -> Texts:
        return self.unplaced if self.review == UNPLACED else self.placed


class Journal:
    """Postings not yet all landed, by review key, kept beside the queue for ``retention``
    seconds (the queue's :class:`~veribot.bot.jobstate.JobState`)."""

    def __init__(self, state: JobState, retention: float) -> None:
        self.state = state
        self.retention = retention

    @staticmethod
    def _key(key: str) -> str:
        return f"posting:{key}"

    def load(self, key: str) -> Posting | None:
        data = self.state.get(self._key(key))
        if data is None:
            return None
        try:
            found = pickle.loads(data)
        except Exception:  # written by another version: review again
            log.warning("unreadable saved results ignored", extra={"key": key})
            return None
        return found if isinstance(found, Posting) else None

    def save(self, posting: Posting) -> Posting:
        self.state.put(self._key(posting.key), pickle.dumps(posting), self.retention)
        return posting

    def drop(self, key: str) -> None:
        self.state.delete(self._key(key))


def deliver(
    client: GitHubClient,
    posting: Posting,
    journal: Journal | None,
    *,
    retry_delay: Callable[[int], float],
) -> Posting:
    """Post what of ``posting`` has not landed yet, saving progress in ``journal``.

    Raises :class:`~veribot.bot.queue.PostLater` (with ``retry_delay(refusals)``) when the
    completion must wait for GitHub, and whatever :func:`~veribot.bot.queue.checkpoint`
    raises between steps (a check run not yet completed then says it was handed back).
    """

    def saved(step: Posting) -> Posting:
        return journal.save(step) if journal is not None else step

    def step(name: str, p: Posting) -> None:
        try:
            checkpoint(name)
        except HandBack:
            if not p.completed:
                say_handed_back(client, p.run_id)
            raise

    p = posting
    step("reviewed", p)
    if not p.review:
        p = saved(replace(p, review=_post_review(client, p)))
        step("review-posted", p)
    if not p.summary_done:
        if p.post_summary:
            try:
                client.upsert_summary(p.number, p.texts.comment)
            except GitHubError as error:  # the check run holds the results
                log.error("summary comment not posted: %s", error, extra={"pr": p.number})
        p = saved(replace(p, summary_done=True))
        step("summary-posted", p)
    if not p.completed:
        p = _complete(client, p, saved, journal is not None, retry_delay)
        step("completed", p)
    if journal is not None:
        journal.drop(p.key)
    log.info(
        "review posted",
        extra={"repo": client.full_name, "pr": p.number, "conclusion": p.conclusion},
    )
    return p


def say_handed_back(client: GitHubClient, run_id: int) -> None:
    """The check run of a review handed back says so (it stays in progress)."""
    try:
        client.update_check_run(run_id, CheckOutput("Handed back", HANDED_BACK_NOTE))
    except GitHubError as error:
        log.warning("could not say the review was handed back: %s", error)


def _post_review(client: GitHubClient, p: Posting) -> str:
    """Post the inline comments (once: found again by their marker); which texts follow."""
    if not p.comments:
        return PLACED
    try:
        leftovers = client.post_review(
            p.number, p.head_sha, p.review_body, p.comments, anchors=p.anchors
        )
    except GitHubError as error:  # the findings go to the summary instead
        log.warning("inline comments not posted: %s", error, extra={"pr": p.number})
        return UNPLACED
    return UNPLACED if leftovers == list(p.comments) else PLACED


def _complete(
    client: GitHubClient,
    p: Posting,
    saved: Callable[[Posting], Posting],
    durable: bool,
    retry_delay: Callable[[int], float],
) -> Posting:
    output = CheckOutput(p.title, p.texts.check)
    batches = annotation_batches(p.annotations)
    try:
        for index in range(p.batches_sent, len(batches) - 1):
            client.annotate_check_run(p.run_id, output, batches[index])
            p = saved(replace(p, batches_sent=index + 1))
        client.finish_check_run(p.run_id, p.conclusion, output, batches[-1])
        return saved(replace(p, completed=True))
    except GitHubError as error:
        log.warning("completing the check run failed: %s; completing it plainly", error)
        failed = error
    short = CheckOutput(
        p.title,
        f"The full results could not be posted ({failed}). {conclusion_text(p.conclusion)}",
    )
    try:
        client.finish_check_run(p.run_id, p.conclusion, short)
        return saved(replace(p, completed=True))
    except GitHubError as error:
        if durable and (error.transient or failed.transient):
            p = saved(replace(p, refusals=p.refusals + 1))
            wait = retry_delay(p.refusals)
            raise PostLater(f"the check run's completion: {error}", wait) from error
        log.error("the check run could not be completed: %s", error, extra={"run": p.run_id})
        return replace(p, completed=True)


def finish_plainly(
    client: GitHubClient,
    run_id: int,
    conclusion: Conclusion,
    output: CheckOutput,
    annotations: Sequence[Annotation] = (),
) -> bool:
    """Complete the check run at once, without a journal; if GitHub refuses the full output,
    complete it with the conclusion and the reason alone. False (logged) when even that
    fails."""
    try:
        client.complete_check_run(run_id, conclusion, output, annotations)
        return True
    except GitHubError as error:
        log.warning("completing the check run failed: %s; completing it plainly", error)
        short = CheckOutput(
            output.title,
            f"The full results could not be posted ({error}). {conclusion_text(conclusion)}",
        )
    try:
        client.complete_check_run(run_id, conclusion, short)
        return True
    except GitHubError as error:
        log.error("the check run could not be completed: %s", error, extra={"run": run_id})
        return False


def conclusion_text(conclusion: Conclusion) -> str:
    """One sentence on what ``conclusion`` means for the pull request."""
    return {
        "success": "Every changed function was verified or needs no check.",
        "failure": "A changed function was refuted, or the review failed.",
        "neutral": "Some changed functions are undecided.",
    }.get(conclusion, f"Conclusion: {conclusion}.")
