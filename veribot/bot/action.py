"""The GitHub Action's entry point: the App's job, run once on the Actions runner.

The event payload (``GITHUB_EVENT_PATH``) is routed exactly as a webhook delivery would be
(:mod:`veribot.bot.webhooks`), and the job runs through :func:`veribot.bot.worker.run_job`
with ``GITHUB_TOKEN`` and the checked-out workspace as the git data. So the Action posts the
same check run, review and summary as the App, and answers `/verify` the same way.

Safety: under ``pull_request_target`` the workflow holds the base repository's secrets and
PR code must never run, so the review there is proof-only (``Budget(execute=False)``):
nothing is executed, not even in the sandbox, so nothing can be refuted; a difference the
solver sees stays inconclusive (``not-executed``), and the summary says so. The agent is
asked when the ``anthropic_api_key`` input is set (and `.veribot.toml` leaves it on); the
key is never logged or posted. Fork pull requests under ``pull_request`` get no secrets:
the review is solver-only and the summary says why the agent was not asked.

Inputs come as ``INPUT_*`` variables (see ``action.yml``); outputs go to ``GITHUB_OUTPUT``.
Exit codes: 0 done, 1 a result hit ``fail_on``, 2 the Action is misconfigured.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git
from github import Github

from veribot.bot.config import (
    DEFAULT_ANTHROPIC_URL,
    INCONCLUSIVE_CONCLUSIONS,
    ConfigError,
    Settings,
)
from veribot.bot.github import connect
from veribot.bot.queue import Job
from veribot.bot.webhooks import Ignored, PayloadError, router
from veribot.bot.worker import Outcome, WorkerDeps, ensure_commits, run_job, sandbox_checked
from veribot.checks.sandbox import selftest
from veribot.checks.verdict import Verdict

log = logging.getLogger(__name__)

ACTIONS_BOT_LOGIN = "github-actions[bot]"
EXIT_OK, EXIT_FAILED, EXIT_MISCONFIGURED = 0, 1, 2
FAIL_ON = ("refuted", "inconclusive", "never")
FORK_REASON = "this pull request comes from a fork, so the workflow has no secrets"
NO_KEY_REASON = "no `anthropic_api_key` input was given"
TARGET_NOTE = (
    "This workflow runs on `pull_request_target`, with this repository's secrets, so code "
    "from the pull request was not executed. Trigger it on `pull_request` to have "
    "differences confirmed by running both versions in the sandbox."
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
    check_name: str = "veribot"
    inconclusive_conclusion: str | None = None
    fail_on: str = "refuted"
    output_path: Path | None = None
    run_id: str = "local"


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
    fail_on = _input(env, "fail_on") or "refuted"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail_on must be one of {', '.join(FAIL_ON)}")
    output = env.get("GITHUB_OUTPUT")
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
        check_name=_input(env, "check_name") or "veribot",
        inconclusive_conclusion=conclusion,
        fail_on=fail_on,
        output_path=Path(output) if output else None,
        run_id=env.get("GITHUB_RUN_ID", "local"),
    )


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


def _notes(action: ActionSettings) -> tuple[str, ...]:
    return (TARGET_NOTE,) if action.event_name == "pull_request_target" else ()


def _agent_unavailable(action: ActionSettings, payload: Mapping[str, Any]) -> str | None:
    """Why the agent cannot be asked on this run, or None when the key is there."""
    if action.anthropic_key:
        return None
    if action.event_name == "pull_request" and _is_fork(payload):
        return FORK_REASON
    return NO_KEY_REASON


def run(action: ActionSettings) -> Outcome | None:
    """Route the event and run its job; None when the event asks for no review."""
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
    proof_only = action.event_name == "pull_request_target"
    event = "pull_request" if proof_only else action.event_name
    route = router.route(event, payload, f"action-{action.run_id}", ACTIONS_BOT_LOGIN)
    if isinstance(route, Ignored):
        log.info("nothing to do: %s", route.reason)
        return None
    deps = WorkerDeps(
        settings=settings,
        github=client_for,
        git_data=lambda job, _url, shas: _workspace(action, job, shas),
        notes=_notes(action),
        agent_unavailable=_agent_unavailable(action, payload),
        inconclusive_conclusion=action.inconclusive_conclusion,
        execute=not proof_only,
    )
    if deps.execute:  # code runs only if the sandbox's escape probes all fail here
        deps = sandbox_checked(deps, selftest.at_start())
    return run_job(route, deps)


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


def _failed(outcome: Outcome | None, fail_on: str) -> bool:
    if outcome is None or outcome.report is None:
        return outcome is not None and outcome.conclusion == "failure"
    report = outcome.report
    if fail_on == "never":
        return False
    if report.count(Verdict.REFUTED):
        return True
    return fail_on == "inconclusive" and bool(
        report.count(Verdict.INCONCLUSIVE, compared_only=True)
    )


def write_outputs(path: Path, outcome: Outcome | None) -> None:
    """The step's outputs: conclusion and the count of each verdict."""
    report = outcome.report if outcome is not None else None
    values = {
        "conclusion": outcome.conclusion if outcome is not None else "skipped",
        "verified": report.count(Verdict.VERIFIED) if report else 0,
        "refuted": report.count(Verdict.REFUTED) if report else 0,
        "inconclusive": report.count(Verdict.INCONCLUSIVE) if report else 0,
    }
    with path.open("a", encoding="utf-8") as out:
        out.writelines(f"{key}={value}\n" for key, value in values.items())


def main(env: Mapping[str, str] | None = None) -> int:
    """Run the Action; returns the exit code (see the module docstring)."""
    logging.basicConfig(level=logging.INFO, format="veribot: %(levelname)s: %(message)s")
    try:
        action = read_environment(os.environ if env is None else env)
        outcome = run(action)
    except (ActionError, ConfigError, PayloadError) as error:
        sys.stderr.write(f"::error title=veribot::{error}\n")
        return EXIT_MISCONFIGURED
    if action.output_path is not None:
        write_outputs(action.output_path, outcome)
    return EXIT_FAILED if _failed(outcome, action.fail_on) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
