"""The GitHub Action's entry point: the App's job, run once on the Actions runner.

``action.yml`` is a composite action: on the runner itself it sets up Python, installs
bubblewrap and veribot, and runs ``python -m veribot.bot.action``. The job is the isolation
boundary (a fresh virtual machine per job); inside it the pull request's code runs only in
the sandbox, whose children get an empty environment, so no token.

The event payload (``GITHUB_EVENT_PATH``) is routed exactly as a webhook delivery would be
(:mod:`veribot.bot.webhooks`), and the job runs through :func:`veribot.bot.worker.run_job`
with ``GITHUB_TOKEN`` and the checked-out workspace as the git data. So the Action posts the
same check run, review and summary as the App, and answers `/verify` the same way.

When code may run (:func:`execution_policy`): only under ``pull_request``, whose workflow
has no secrets on a fork and only its own author's on the same repository. Every other
event (``pull_request_target``, ``issue_comment`` for `/verify`, ...) carries the
repository's secrets and a write token, so the review there is proof-only
(``Budget(execute=False)``): nothing of the pull request runs, not even in the sandbox, not
even to check the agent's claims; a difference the solver sees stays inconclusive
(``not-executed``), and the summary says why. Execution is off as well when the checkout
keeps a token in ``.git/config`` (``actions/checkout`` without ``persist-credentials:
false``) or when the sandbox fails its start-up check (:func:`isolation_problem`).
A proof-only run never replaces a full run's check run on the same commit, nor any run a
refutation (:mod:`veribot.bot.standing`): a `/verify` then answers in the thread which
result stands, and the outputs carry that result's conclusion with ``posted=false``.

Secrets: the token and the Anthropic key are read once, then removed from this process's
environment, so no child (git, the sandbox) inherits them.

Fork pull requests get a read-only token: creating the check run answers 403. The review
then runs all the same and its results go where a read-only run can write: annotations on
the changed lines (10 of each level, as GitHub shows), the job summary and the outputs;
the exit code follows ``fail_on``. The agent is asked when the ``anthropic_api_key`` input
is set (forks get no secrets: the summary says why it was not asked).

Inputs come as ``INPUT_*`` variables (see ``action.yml``); outputs go to ``GITHUB_OUTPUT``.
Exit codes: 0 done, 1 a result hit ``fail_on``, 2 the Action is misconfigured or could not
run (the reason is an error annotation, never a traceback).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import git
from github import Github

from veribot.bot.config import (
    DEFAULT_ANTHROPIC_URL,
    DEFAULT_CHECK_NAME,
    INCONCLUSIVE_CONCLUSIONS,
    ConfigError,
    Settings,
)
from veribot.bot.github import GitHubClient, GitHubError, connect
from veribot.bot.queue import Command, Job
from veribot.bot.review import FailOn, GitSource, review
from veribot.bot.webhooks import Ignored, PayloadError, router
from veribot.bot.worker import (
    NOT_EXECUTED_NOTE,
    AgentAccess,
    Outcome,
    WorkerDeps,
    check_annotations,
    conclusion_for,
    config_request,
    ensure_commits,
    merge_base,
    pr_text,
    pull_request_agent,
    read_repo_config,
    run_job,
    summary_markdown,
)
from veribot.bot.workflow import (
    AnnotationLevel,
    Commands,
    WorkflowAnnotation,
    shown,
    write_step_summary,
)
from veribot.bot.workflow import write_outputs as write_output_values
from veribot.checks.sandbox import selftest
from veribot.checks.verdict import Verdict

log = logging.getLogger(__name__)

ACTIONS_BOT_LOGIN = "github-actions[bot]"
EXIT_OK, EXIT_FAILED, EXIT_MISCONFIGURED = 0, 1, 2
FAIL_ON = ("untested", "refuted", "inconclusive", "never")
# The only event whose workflow may run the pull request's code: see the module docstring.
EXECUTING_EVENTS = frozenset({"pull_request"})
# Removed from this process's environment once read, so no child inherits them.
SECRET_VARIABLES = (
    "INPUT_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "INPUT_ANTHROPIC_API_KEY",
    "ANTHROPIC_API_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
FORK_REASON = "this pull request comes from a fork, so the workflow has no secrets"
NO_KEY_REASON = "no `anthropic_api_key` input was given"
EVENT_NOTE = (
    "This workflow runs on `{event}`, which carries this repository's secrets and a write "
    "token, so code from the pull request was not executed. Only a `pull_request` workflow "
    "confirms differences by running both versions in the sandbox."
)
CREDENTIALS_NOTE = (
    "The checkout keeps a token in `.git/config` (`{key}`), where code from the pull request "
    "could read it, so none was executed. Check out with `persist-credentials: false` (see "
    "veribot's README) to have differences confirmed by running both versions."
)
READ_ONLY_NOTE = (
    "This workflow's token cannot write (as on a pull request from a fork), so no check run "
    "or comment was posted: the results are in the job summary and as annotations on the "
    "changed lines, and the step's exit code follows `fail_on`."
)
ANNOTATIONS_LEFT = (
    "{left} more result(s) are not shown as annotations (GitHub shows 10 of each level per "
    "step); all are listed above."
)


class ActionError(Exception):
    """The Action's environment or inputs are missing or wrong; the message says which."""


@dataclass(frozen=True)
class ActionSettings:
    """The Action's environment, read once by :func:`read_environment`."""

    event_name: str
    event_path: Path
    repository: str
    api_url: str
    workspace: Path
    token: str = field(repr=False)
    anthropic_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str = DEFAULT_ANTHROPIC_URL
    check_name: str = DEFAULT_CHECK_NAME
    inconclusive_conclusion: str | None = None
    fail_on: str = "refuted"
    output_path: Path | None = None
    summary_path: Path | None = None
    run_id: str = "local"
    debug: bool = False


@dataclass(frozen=True)
class ActionResult:
    """What the run did: the review's outcome (None: nothing to review) and where it went."""

    outcome: Outcome | None
    posted: bool  # False: the token could not write; the results are local to the run


def _input(env: Mapping[str, str], name: str) -> str:
    return env.get(f"INPUT_{name.upper()}", "").strip()


def read_environment(env: Mapping[str, str]) -> ActionSettings:
    """Build :class:`ActionSettings` from the runner's variables and the ``INPUT_*`` ones."""
    missing = [
        name
        for name in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY")
        if not env.get(name)
    ]
    if missing:
        raise ActionError(f"not running in GitHub Actions: {', '.join(missing)} unset")
    token = _input(env, "github_token") or env.get("GITHUB_TOKEN", "")
    if not token:
        raise ActionError("no token: pass `github_token: ${{ secrets.GITHUB_TOKEN }}`")
    conclusion = _input(env, "inconclusive_conclusion") or None
    if conclusion is not None and conclusion not in INCONCLUSIVE_CONCLUSIONS:
        raise ActionError(
            f"inconclusive_conclusion must be one of {', '.join(INCONCLUSIVE_CONCLUSIONS)}"
        )
    fail_on = _input(env, "fail_on") or "untested"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail_on must be one of {', '.join(FAIL_ON)}")
    output = env.get("GITHUB_OUTPUT")
    summary = env.get("GITHUB_STEP_SUMMARY")
    return ActionSettings(
        event_name=env["GITHUB_EVENT_NAME"],
        event_path=Path(env["GITHUB_EVENT_PATH"]),
        repository=env["GITHUB_REPOSITORY"],
        api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
        workspace=Path(env.get("GITHUB_WORKSPACE", ".")),
        token=token,
        anthropic_key=_input(env, "anthropic_api_key") or None,
        anthropic_base_url=_input(env, "anthropic_base_url")
        or env.get("ANTHROPIC_BASE_URL")
        or DEFAULT_ANTHROPIC_URL,
        check_name=_input(env, "check_name") or DEFAULT_CHECK_NAME,
        inconclusive_conclusion=conclusion,
        fail_on=fail_on,
        output_path=Path(output) if output else None,
        summary_path=Path(summary) if summary else None,
        run_id=env.get("GITHUB_RUN_ID", "local"),
        debug=env.get("RUNNER_DEBUG") == "1",
    )


def scrub_secrets(env: MutableMapping[str, str]) -> None:
    """Remove the credentials from ``env`` (this process's environment, once they are read)."""
    for name in SECRET_VARIABLES:
        env.pop(name, None)


# -- when the pull request's code may run ----------------------------------------------------


def persisted_credentials(workspace: Path) -> str | None:
    """The git setting that keeps a credential in the checkout's configuration, if any.

    ``actions/checkout`` writes the token as an ``http.<url>.extraheader`` unless told
    ``persist-credentials: false`` (newer versions through an included file, hence
    ``--includes``); a remote URL may carry one too.
    """
    try:
        listing = git.Repo(workspace).git.config("--local", "--includes", "--list")
    except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    for line in str(listing).splitlines():
        key, _, value = line.partition("=")
        key = key.lower()
        if key.startswith("http.") and key.endswith(".extraheader"):
            if "authorization" in value.lower():
                return key
        elif key.endswith(".url") and re.search(r"://[^/@\s]+@", value):
            return key
    return None


def isolation_problem(secret_paths: Sequence[Path]) -> str | None:
    """Why the sandbox cannot contain the pull request's code on this runner (a sentence for
    the summary), or None when it can.

    The Action's single call site for the sandbox's start-up self-test; ``secret_paths``
    are what the code under review must not reach (the checkout's ``.git``, which may hold
    a token). It runs the sandbox's escape probes (``selftest.run``): code runs only if
    every probe fails here.
    """
    check = selftest.run(secret_paths)
    return None if check.ok else check.reason()


def execution_policy(action: ActionSettings) -> tuple[bool, str | None]:
    """Whether the pull request's code may run in this workflow, and if not, the note why."""
    if action.event_name not in EXECUTING_EVENTS:
        return False, EVENT_NOTE.format(event=action.event_name)
    key = persisted_credentials(action.workspace)
    if key is not None:
        return False, CREDENTIALS_NOTE.format(key=key)
    why = isolation_problem((action.workspace / ".git",))
    if why is not None:
        log.warning("%s", why)
        return False, why
    return True, None


# -- the run ---------------------------------------------------------------------------------


def _is_fork(payload: Mapping[str, Any]) -> bool:
    pull = payload.get("pull_request")
    if not isinstance(pull, Mapping):
        return False
    try:
        head = pull["head"]["repo"]["full_name"]
        base = pull["base"]["repo"]["full_name"]
    except (KeyError, TypeError):
        return False
    return bool(head != base)


def _agent_unavailable(action: ActionSettings, payload: Mapping[str, Any]) -> str | None:
    """Why the agent cannot be asked on this run, or None when the key is there."""
    if action.anthropic_key:
        return None
    if action.event_name == "pull_request" and _is_fork(payload):
        return FORK_REASON
    return NO_KEY_REASON


def run(action: ActionSettings) -> ActionResult:
    """Route the event and run its job; posts the results, or keeps them local when the
    token is read-only."""
    payload = json.loads(action.event_path.read_text(encoding="utf-8"))
    if not isinstance(payload, dict):
        raise ActionError(f"{action.event_path} does not hold a JSON object")
    settings = Settings(
        github_api_url=action.api_url,
        bot_login=ACTIONS_BOT_LOGIN,
        check_name=action.check_name,
        anthropic_api_key=action.anthropic_key,
        anthropic_base_url=action.anthropic_base_url,
    )

    def client_for(_installation: int | None) -> Github:
        return connect(action.api_url, action.token)

    # pull_request_target carries a pull_request payload; it is reviewed without execution.
    event = "pull_request" if action.event_name == "pull_request_target" else action.event_name
    route = router.route(event, payload, f"action-{action.run_id}", ACTIONS_BOT_LOGIN)
    if isinstance(route, Ignored):
        log.info("nothing to do: %s", route.reason)
        return ActionResult(None, posted=False)
    execute, why_not = execution_policy(action)
    deps = WorkerDeps(
        settings=settings,
        github=client_for,
        git_data=lambda job, _url, shas: _workspace(action, job, shas),
        notes=(why_not,) if why_not else (),
        agent_unavailable=_agent_unavailable(action, payload),
        inconclusive_conclusion=action.inconclusive_conclusion,
        execute=execute,
    )
    try:
        outcome = run_job(route, deps, raise_refused=True)
        return ActionResult(outcome, posted=outcome is None or outcome.posted)
    except GitHubError as error:
        if error.status != 403 or route.command is not Command.REVIEW:
            raise
        log.warning("the token cannot write (%s): the results stay in this run", error)
    return ActionResult(review_locally(route, deps), posted=False)


def review_locally(job: Job, deps: WorkerDeps) -> Outcome:
    """The review of ``job`` without posting anything (a read-only token); reads only."""
    client = GitHubClient(
        deps.github(job.installation_id),
        job.repo,
        bot_login=deps.settings.bot_login,
        policy=deps.policy(),
    )
    pull = client.pull(job.pr_number)
    head_sha = job.head_sha or str(pull.head.sha)
    base_sha = str(pull.base.sha)
    notes = [READ_ONLY_NOTE, *deps.notes]
    try:
        tree = deps.git_data(job, client.repo.clone_url or "", (base_sha, head_sha))
        config = read_repo_config(tree, base_sha)
        execute = deps.execute and config.execute
        access = AgentAccess.of(deps, pr_text(pull.title, pull.body))
        with pull_request_agent(access, config) as (agent, why_not):
            source = GitSource(tree, merge_base(tree, base_sha, head_sha), head_sha)
            report = review(config_request(source, config, execute, agent, why_not))
    except ConfigError as error:
        return Outcome("neutral", None, f"veribot did not review this pull request: {error}")
    except GitHubError:
        raise
    except Exception as error:  # the review's boundary, as in the worker: say it, never green
        log.error("review failed: %s: %s", type(error).__name__, error)
        summary = (
            "veribot could not finish the review, so nothing was verified: "
            f"{type(error).__name__}: {error}"
        )
        return Outcome("failure", None, summary)
    if not execute and NOT_EXECUTED_NOTE not in notes:
        notes.insert(1, NOT_EXECUTED_NOTE)
    chosen = deps.inconclusive_conclusion or config.inconclusive_conclusion
    conclusion = conclusion_for(report, chosen, config.fail_on)
    summary = summary_markdown(report, head_sha, notes, (), rest="this run's annotations")
    return Outcome(conclusion, report, summary)


def _workspace(action: ActionSettings, job: Job, shas: tuple[str, ...]) -> Path:
    """The checked-out repository, with the commits fetched if the checkout was shallow."""
    try:
        repo = git.Repo(action.workspace)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as error:
        raise ActionError(
            f"{action.workspace} is not a git checkout: run actions/checkout first"
        ) from error
    ensure_commits(repo, job.pr_number, shas, action.token)
    return action.workspace


# -- what the step reports -------------------------------------------------------------------


def _failed(outcome: Outcome | None, fail_on: str) -> bool:
    if outcome is not None and not outcome.posted:  # an earlier result stands, or refused
        if fail_on == "never":
            return False
        return outcome.conclusion == "failure" or (
            fail_on == "inconclusive" and outcome.conclusion in ("neutral", "action_required")
        )
    if outcome is None or outcome.report is None:
        return outcome is not None and outcome.conclusion == "failure"
    report = outcome.report
    if fail_on == "never":
        return False
    if fail_on == "untested":
        return report.failed(FailOn.UNTESTED)
    if report.count(Verdict.REFUTED):
        return True
    return fail_on == "inconclusive" and bool(
        report.count(Verdict.INCONCLUSIVE, compared_only=True)
    )


def write_outputs(path: Path, result: ActionResult) -> None:
    """The step's outputs: conclusion, the count of each verdict, and whether it posted."""
    outcome = result.outcome
    report = outcome.report if outcome is not None else None
    write_output_values(
        path,
        {
            "conclusion": outcome.conclusion if outcome is not None else "skipped",
            "verified": report.count(Verdict.VERIFIED) if report else 0,
            "refuted": report.count(Verdict.REFUTED) if report else 0,
            "inconclusive": report.count(Verdict.INCONCLUSIVE) if report else 0,
            "posted": "true" if result.posted else "false",
        },
    )


_LEVELS: dict[str, AnnotationLevel] = {"failure": "error", "warning": "warning", "notice": "notice"}


def workflow_annotations(outcome: Outcome) -> list[WorkflowAnnotation]:
    """The check run's annotations, as workflow commands would carry them."""
    if outcome.report is None:
        return []
    return [
        WorkflowAnnotation(
            level=_LEVELS[a.level],
            path=a.path,
            line=a.start_line,
            end_line=a.end_line,
            message=a.message,
            title=a.title or "",
        )
        for a in check_annotations(outcome.report)
    ]


def report_to_runner(action: ActionSettings, result: ActionResult, commands: Commands) -> None:
    """Outputs, the job summary, and (when nothing was posted) annotations."""
    if action.output_path is not None:
        write_outputs(action.output_path, result)
    outcome = result.outcome
    if outcome is None:
        return
    summary = outcome.summary
    if not result.posted:
        kept, left = shown(workflow_annotations(outcome))
        commands.annotate(kept)
        if left:
            summary = f"{summary.rstrip()}\n\n{ANNOTATIONS_LEFT.format(left=left)}\n"
        if outcome.report is None:
            level: AnnotationLevel = "error" if outcome.conclusion == "failure" else "warning"
            commands.message(level, summary)
    if action.summary_path is not None:
        write_step_summary(action.summary_path, summary)


def main(env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    """Run the Action; returns the exit code (see the module docstring).

    ``env``: the runner's variables (default: this process's environment, whose secrets
    are removed once read); ``out``: where workflow commands go (default: stdout).
    """
    logging.basicConfig(level=logging.INFO, format="veribot: %(levelname)s: %(message)s")
    commands = Commands(out if out is not None else sys.stdout)
    try:
        action = read_environment(os.environ if env is None else env)
    except ActionError as error:
        commands.message("error", str(error))
        return EXIT_MISCONFIGURED
    if env is None:
        scrub_secrets(os.environ)
    commands.stop()  # nothing printed from here on (it may quote the PR) is a command
    try:
        result = run(action)
    except (ActionError, ConfigError, PayloadError) as error:
        commands.message("error", str(error))
        return EXIT_MISCONFIGURED
    except GitHubError as error:
        commands.message("error", f"GitHub refused a request: {error}")
        return EXIT_MISCONFIGURED
    except Exception as error:  # the Action's boundary: a clear message, never a traceback
        log.error("veribot failed: %s: %s", type(error).__name__, error, exc_info=action.debug)
        commands.message("error", f"veribot failed: {type(error).__name__}: {error}")
        return EXIT_MISCONFIGURED
    report_to_runner(action, result, commands)
    commands.resume()
    return EXIT_FAILED if _failed(result.outcome, action.fail_on) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
