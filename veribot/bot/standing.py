"""Which result already on a commit a new review must not replace.

GitHub takes the latest check run of a name on a commit as that check's result (branch
protection included), so a review that posts a new check run replaces every earlier one.
A weaker review must never do that to a stronger result:

- a *full* review (one that may run the pull request's code, in the sandbox, to confirm a
  difference) is stronger than a *proof-only* one (which can verify but never refute, such
  as the Action's `/verify` under ``issue_comment``): a proof-only review does not replace
  a full review's check run, finished or still running;
- a *refutation* is a difference confirmed by running both versions, a fact about the
  commit: no later review of the same commit replaces it (one could only miss it, its
  search cut short). A new push is reviewed afresh.

A review that stands down posts no check run and no summary; the caller says in the thread
which result stands. The strength of a review travels in its check run's ``external_id``:
the review key (:func:`veribot.bot.worker.review_key`) followed by ``:full`` or
``:proof-only``; a check run without one is taken as full (the stronger, so nothing
weaker replaces it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from github.CheckRun import CheckRun

FULL, PROOF_ONLY = "full", "proof-only"
# The title of a completed review that refuted a function (see worker.check_title).
_REFUTED_TITLE = re.compile(r"^[1-9][0-9]* refuted, ")


def external_id(key: str, execute: bool) -> str:
    """What a review's check run carries: its key and its strength."""
    return f"{key}:{FULL if execute else PROOF_ONLY}"


def key_of(run_external_id: str | None) -> str:
    """The review key of a check run's ``external_id`` (without its strength)."""
    value = run_external_id or ""
    head, _, mode = value.rpartition(":")
    return head if mode in (FULL, PROOF_ONLY) else value


def _full(run: CheckRun) -> bool:
    return not (run.external_id or "").endswith(f":{PROOF_ONLY}")


def refuted(run: CheckRun) -> bool:
    """Whether ``run`` completed a review that refuted a changed function."""
    if run.status != "completed" or run.conclusion != "failure":
        return False
    title = run.output.title if run.output is not None else None
    return bool(title and _REFUTED_TITLE.match(title))


def standing_run(runs: Sequence[CheckRun], execute: bool, key: str) -> CheckRun | None:
    """The check run among ``runs`` (this bot's, of one name on one commit) that a new review
    (full when ``execute``; ``key`` its review key) must not replace, or None when it may
    post. The review's own unfinished run (a job resumed) is its to complete."""
    for run in sorted(runs, key=lambda r: r.id, reverse=True):
        if run.status != "completed" and key_of(run.external_id) == key:
            continue
        if refuted(run):
            return run
        if not execute and _full(run) and run.conclusion not in ("cancelled", "skipped"):
            return run
    return None


def why_it_stands(run: CheckRun) -> str:
    """Why ``run`` stands, for the thread."""
    if refuted(run):
        return (
            "It refuted a changed function by running both versions, and no later review of "
            "the same commit replaces a refutation."
        )
    if run.status != "completed":
        return (
            "A full review of this commit (one that may run both versions to confirm a "
            "difference) is still running, and this proof-only review would not replace it."
        )
    return (
        "It was a full review (one that may run both versions to confirm a difference); this "
        "review is proof-only, so it would be weaker and does not replace it."
    )
