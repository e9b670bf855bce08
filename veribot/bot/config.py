"""Settings of the GitHub side, built once into frozen values, and `.veribot.toml` parsing.

:class:`Settings` describe the deployment (webhook secret, API URL, queue storage); they
are built from an explicit mapping (the environment, handed in by the command line), never
read at import. :class:`RepoConfig` is a repository's own `.veribot.toml`, read from the
base branch; :func:`parse_repo_config` validates it and raises :class:`ConfigError` with
every problem found, so a bad file becomes a clear check-run summary rather than a crash.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_ANTHROPIC_URL = "https://api.anthropic.com"
DEFAULT_BOT_LOGIN = "veribot[bot]"
# Not "veribot": that is the README workflow's job id, and a job's check run bears its name.
# A space cannot appear in a job id, so no workflow job's check can take this name.
DEFAULT_CHECK_NAME = "veribot review"
DEFAULT_DATA_DIR = Path("/var/lib/veribot")
FAIL_ON = ("untested", "refuted", "never")  # a check run's failure (``review.FailOn``)
INCONCLUSIVE_CONCLUSIONS = ("neutral", "success", "failure", "action_required")
KNOWN_CHECKS = ("equivalence",)


def private_file(path: Path) -> Path:
    """Create ``path`` if missing, readable and writable by its owner only (0600), in a
    folder created 0700 if new. SQLite gives its -wal and -shm files the same mode."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    os.chmod(path, 0o600)
    return path


def secure_data_dir(data_dir: Path) -> None:
    """Make the App's data directory private (0700, its files 0600, its folders 0700) and
    set the process's umask to 077, so everything it creates later is private too."""
    os.umask(0o077)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(data_dir, 0o700)
    for root, dirs, files in os.walk(data_dir):
        for name in dirs:
            _tighten(os.path.join(root, name), 0o700)
        for name in files:
            _tighten(os.path.join(root, name), 0o600)


def _tighten(path: str, most: int) -> None:
    mode = os.lstat(path).st_mode
    if not os.path.islink(path) and mode & 0o077:
        os.chmod(path, mode & most)


class ConfigError(ValueError):
    """A setting or `.veribot.toml` is missing or invalid; the message says which and why."""


MAX_AGENT_DEADLINE_S = 1800.0  # the agent's time per review, at most
# The environment variable of each field of QueueTiming.
QUEUE_TIMING_ENV = {
    "heartbeat": "VERIBOT_JOB_HEARTBEAT_S",
    "lease": "VERIBOT_JOB_LEASE_S",
    "busy_delay": "VERIBOT_BUSY_DELAY_S",
    "poll": "VERIBOT_QUEUE_POLL_S",
    "stop_grace": "VERIBOT_STOP_GRACE_S",
    "posting_retry": "VERIBOT_POSTING_RETRY_S",
    "posting_retry_max": "VERIBOT_POSTING_RETRY_MAX_S",
    "retention": "VERIBOT_QUEUE_RETENTION_S",
    "github_attempts": "VERIBOT_GITHUB_ATTEMPTS",
    "github_backoff": "VERIBOT_GITHUB_BACKOFF_S",
    "github_rate_limit_wait": "VERIBOT_GITHUB_RATE_LIMIT_WAIT_S",
}


@dataclass(frozen=True)
class QueueTiming:
    """How the App's queue and workers wait (seconds), each bounding a wait an operator sees.

    ``heartbeat``: how often a running job renews its lease; ``lease``: a job whose lease was
    not renewed for this long is taken to have lost its worker (killed, out of memory, its
    machine gone), and a live worker runs it again; ``busy_delay``: a job of a pull request
    that another job holds is queued again this much later; ``poll``: the longest an idle
    worker sleeps between looks at a SQLite queue (Redis wakes it at once); ``stop_grace``: on
    SIGTERM, how long running reviews may go on before they hand their jobs back;
    ``posting_retry``: the first wait before a completion GitHub did not take is sent again
    (doubling up to ``posting_retry_max``); ``retention``: how long the queue keeps a pull
    request's newest head and a review's unposted results; ``github_attempts`` and
    ``github_backoff``: each GitHub request's tries and first backoff (doubling);
    ``github_rate_limit_wait``: the longest a job sleeps for GitHub's rate limit to reset (a
    later reset sends the job back to the queue until then, rather than holding a worker).
    """

    heartbeat: float = 10.0
    lease: float = 60.0
    busy_delay: float = 5.0
    poll: float = 1.0
    stop_grace: float = 8.0
    posting_retry: float = 30.0
    posting_retry_max: float = 600.0
    retention: float = 7 * 86_400.0
    github_attempts: int = 5
    github_backoff: float = 1.0
    github_rate_limit_wait: float = 120.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> QueueTiming:
        """The ``VERIBOT_*`` variables of ``QUEUE_TIMING_ENV``; a bad one is a ``ConfigError``."""
        values: dict[str, Any] = {}
        for name, variable in QUEUE_TIMING_ENV.items():
            text = env.get(variable, "").strip()
            if not text:
                continue
            try:
                value = float(text)
            except ValueError:
                raise ConfigError(f"{variable} must be a number, not {text!r}") from None
            if not value >= 0 or value == float("inf"):
                raise ConfigError(f"{variable} must be a number of seconds, not {text!r}")
            values[name] = int(value) if name == "github_attempts" else value
        timing = cls(**values)
        if timing.heartbeat <= 0 or timing.lease < 2 * timing.heartbeat:
            raise ConfigError(
                "VERIBOT_JOB_LEASE_S must be at least twice VERIBOT_JOB_HEARTBEAT_S (above 0), "
                "or a live job would look abandoned"
            )
        if timing.github_attempts < 1:
            raise ConfigError("VERIBOT_GITHUB_ATTEMPTS must be at least 1")
        return timing


@dataclass(frozen=True)
class AgentCeilings:
    """The operator's limits on the agent (worker environment); `.veribot.toml` cannot exceed
    them: a repository asking for more is clamped, and the summary says so.

    ``models``: the models a repository may choose (empty: any); ``deadline_s``: the time
    the agent may take per review (at most half an hour).
    """

    llm_calls: int = 200
    tokens: int = 1_000_000
    unit_tokens: int = 200_000
    models: tuple[str, ...] = ()
    deadline_s: float = 1200.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> AgentCeilings:
        """``VERIBOT_AGENT_MAX_CALLS``, ``VERIBOT_AGENT_MAX_TOKENS``,
        ``VERIBOT_AGENT_UNIT_TOKENS``, ``VERIBOT_AGENT_MODELS`` (comma-separated) and
        ``VERIBOT_AGENT_DEADLINE_S``; a bad value is a ``ConfigError``."""
        d = cls()

        def number(name: str, default: float) -> float:
            text = env.get(name, "").strip()
            if not text:
                return default
            try:
                value = float(text)
            except ValueError:
                raise ConfigError(f"{name} must be a number, not {text!r}") from None
            if value < 0 or value != value:
                raise ConfigError(f"{name} must not be negative")
            return value

        deadline = number("VERIBOT_AGENT_DEADLINE_S", d.deadline_s)
        if not 0 < deadline < MAX_AGENT_DEADLINE_S:
            raise ConfigError(
                f"VERIBOT_AGENT_DEADLINE_S must be above 0 and below {MAX_AGENT_DEADLINE_S:g} s"
            )
        listed = env.get("VERIBOT_AGENT_MODELS", "").split(",")
        models = tuple(m.strip() for m in listed if m.strip())
        return cls(
            llm_calls=int(number("VERIBOT_AGENT_MAX_CALLS", d.llm_calls)),
            tokens=int(number("VERIBOT_AGENT_MAX_TOKENS", d.tokens)),
            unit_tokens=int(number("VERIBOT_AGENT_UNIT_TOKENS", d.unit_tokens)),
            models=models,
            deadline_s=deadline,
        )


@dataclass(frozen=True)
class Settings:
    """How this deployment of the bot talks to GitHub and where it keeps its state."""

    webhook_secret: str | None = field(default=None, repr=False)
    github_api_url: str = DEFAULT_API_URL
    bot_login: str = DEFAULT_BOT_LOGIN
    bot_login_given: bool = False  # False: the App's workers read it from GET /app
    check_name: str = DEFAULT_CHECK_NAME
    data_dir: Path = DEFAULT_DATA_DIR  # from_env: under $XDG_DATA_HOME or ~/.local/share
    redis_url: str | None = None
    app_id: int | None = None
    private_key: str | None = field(default=None, repr=False)
    # The agent: without a key every review is solver-only and says so. Never logged.
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str = DEFAULT_ANTHROPIC_URL
    llm_cache: bool = False  # keep the model's answers in data_dir (reruns cost nothing)
    agent_ceilings: AgentCeilings = AgentCeilings()  # the operator's limits on the agent
    # Reviews of pushes per installation and day that may run code and ask the agent; the
    # rest are proof-only and solver-only. None: no limit.
    reviews_per_day: int | None = None
    # Ask the agent for checkable hints where the engine stops (VERIBOT_AGENT_HINTS=1); the
    # archive of proven hints is always tried, at no model cost.
    agent_hints: bool = False
    timing: QueueTiming = QueueTiming()  # the queue's leases, retries and waits
    # Content-creating requests to GitHub per installation and minute, across the workers of
    # one machine (GitHub's secondary limit is 80); progress updates of a check run are such
    # requests, at most one per ``progress_interval`` seconds and review.
    writes_per_minute: int = 80
    progress_interval: float = 5.0
    # Test scaffolding, off unless set: a worker or webhook reaching the step named by
    # VERIBOT_TEST_PAUSE_AT writes the name to VERIBOT_TEST_PAUSE_FILE and waits there until
    # it is told to stop (SIGTERM), so that a test can kill it at that step.
    pause_at: str | None = None
    pause_file: Path | None = None

    @property
    def llm_cache_path(self) -> Path | None:
        """The SQLite file caching the model's answers, when ``llm_cache`` is on."""
        return self.data_dir / "llm.sqlite3" if self.llm_cache else None

    @property
    def queue_path(self) -> Path:
        """The SQLite file of the embedded job queue."""
        return self.data_dir / "queue.sqlite3"

    @property
    def usage_path(self) -> Path:
        """The SQLite file counting each installation's recent content-creating requests."""
        return self.data_dir / "usage.sqlite3"

    @property
    def deliveries_path(self) -> Path:
        """The SQLite file remembering webhook deliveries already accepted."""
        return self.data_dir / "deliveries.sqlite3"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from ``VERIBOT_*`` variables in ``env`` (pass ``os.environ``).

        The webhook secret comes from ``VERIBOT_WEBHOOK_SECRET`` or from the file named by
        ``VERIBOT_WEBHOOK_SECRET_FILE``; the App's private key (for workers) likewise from
        ``VERIBOT_PRIVATE_KEY`` or ``VERIBOT_PRIVATE_KEY_FILE``, its id from ``VERIBOT_APP_ID``.
        """
        secret = env.get("VERIBOT_WEBHOOK_SECRET") or None
        secret_file = env.get("VERIBOT_WEBHOOK_SECRET_FILE")
        if secret is None and secret_file:
            try:
                secret = Path(secret_file).read_text(encoding="utf-8").strip() or None
            except OSError as error:
                raise ConfigError(
                    f"VERIBOT_WEBHOOK_SECRET_FILE {secret_file!r} is unreadable: {error.strerror}"
                ) from error
        app_id_text = env.get("VERIBOT_APP_ID") or None
        if app_id_text is not None and not app_id_text.isdigit():
            raise ConfigError(f"VERIBOT_APP_ID must be a number, not {app_id_text!r}")
        key = env.get("VERIBOT_PRIVATE_KEY") or None
        key_file = env.get("VERIBOT_PRIVATE_KEY_FILE")
        if key is None and key_file:
            try:
                key = Path(key_file).read_text(encoding="utf-8")
            except OSError as error:
                raise ConfigError(
                    f"VERIBOT_PRIVATE_KEY_FILE {key_file!r} is unreadable: {error.strerror}"
                ) from error
        anthropic_key = env.get("ANTHROPIC_API_KEY") or None
        anthropic_key_file = env.get("VERIBOT_ANTHROPIC_API_KEY_FILE")
        if anthropic_key is None and anthropic_key_file:
            try:
                anthropic_key = Path(anthropic_key_file).read_text(encoding="utf-8").strip()
            except OSError as error:
                raise ConfigError(
                    f"VERIBOT_ANTHROPIC_API_KEY_FILE {anthropic_key_file!r} is unreadable: "
                    f"{error.strerror}"
                ) from error
        per_day = env.get("VERIBOT_REVIEWS_PER_DAY") or None
        if per_day is not None and not per_day.isdigit():
            raise ConfigError(f"VERIBOT_REVIEWS_PER_DAY must be a number, not {per_day!r}")
        writes = env.get("VERIBOT_WRITES_PER_MINUTE") or "80"
        if not writes.isdigit() or int(writes) < 1:
            raise ConfigError(f"VERIBOT_WRITES_PER_MINUTE must be a whole number, not {writes!r}")
        interval_text = env.get("VERIBOT_PROGRESS_INTERVAL_S") or "5"
        try:
            interval = float(interval_text)
        except ValueError:
            interval = -1.0
        if not 0 <= interval < float("inf"):
            raise ConfigError(
                f"VERIBOT_PROGRESS_INTERVAL_S must be a number of seconds, not {interval_text!r}"
            )
        return cls(
            reviews_per_day=int(per_day) if per_day is not None else None,
            agent_hints=env.get("VERIBOT_AGENT_HINTS", "0").strip().lower() in ("1", "true", "yes"),
            webhook_secret=secret,
            app_id=int(app_id_text) if app_id_text is not None else None,
            private_key=key,
            github_api_url=env.get("VERIBOT_GITHUB_API_URL", DEFAULT_API_URL),
            bot_login=env.get("VERIBOT_BOT_LOGIN") or DEFAULT_BOT_LOGIN,
            bot_login_given=bool(env.get("VERIBOT_BOT_LOGIN")),
            check_name=env.get("VERIBOT_CHECK_NAME", DEFAULT_CHECK_NAME),
            data_dir=_data_dir(env),
            redis_url=env.get("VERIBOT_REDIS_URL") or None,
            anthropic_api_key=anthropic_key or None,
            anthropic_base_url=env.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_URL,
            llm_cache=env.get("VERIBOT_LLM_CACHE", "1") not in ("0", "false", "no", ""),
            agent_ceilings=AgentCeilings.from_env(env),
            timing=QueueTiming.from_env(env),
            writes_per_minute=int(writes),
            progress_interval=interval,
            pause_at=env.get("VERIBOT_TEST_PAUSE_AT") or None,
            pause_file=Path(env["VERIBOT_TEST_PAUSE_FILE"])
            if env.get("VERIBOT_TEST_PAUSE_FILE")
            else None,
        )


def _data_dir(env: Mapping[str, str]) -> Path:
    """``VERIBOT_DATA_DIR`` made absolute (so a change of folder cannot move it), else
    ``$XDG_DATA_HOME/veribot`` or ``$HOME/.local/share/veribot``, else the default."""
    given = env.get("VERIBOT_DATA_DIR")
    if given:
        return Path(given).absolute()
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).absolute() / "veribot"
    if env.get("HOME"):
        return Path(env["HOME"]).absolute() / ".local" / "share" / "veribot"
    return DEFAULT_DATA_DIR


@dataclass(frozen=True)
class Budget:
    """Per pull request limits; work beyond them is reported inconclusive with the reason."""

    units: int = 50
    llm_calls: int = 200
    tokens: int = 1_000_000


@dataclass(frozen=True)
class RepoConfig:
    """A repository's `.veribot.toml` (all keys optional)."""

    include: tuple[str, ...] = ("**/*.py", "**/*.pyi")  # stubs: see review_stubs
    exclude: tuple[str, ...] = ()
    checks: tuple[str, ...] = KNOWN_CHECKS
    agent_enabled: bool = True
    agent_model: str | None = None  # None: the deployment's default model
    agent_temperature: float = 0.0
    budget: Budget = Budget()
    inconclusive_conclusion: str = "neutral"
    # Which refutations fail the check run (``review.FailOn``): "untested" (an untested
    # behaviour change, or any in a declared refactoring), "refuted" (any), "never".
    fail_on: str = "untested"
    # Labels that declare a pull request behaviour-preserving (besides a title starting
    # `refactor:`, `perf:`, `style:` or `docs:`).
    refactoring_labels: tuple[str, ...] = ("refactor", "refactoring")
    # Whether the pull request's code may be run (sandboxed) to confirm a counterexample.
    # False: proof-only; a difference the solver sees stays inconclusive (`not-executed`).
    execute: bool = True
    # Which changed files are reviewed; the others are listed as skipped, with why.
    review_tests: bool = True  # test files: a changed test is worth a verdict too
    review_stubs: bool = False  # .pyi stubs: declarations, no code to prove or run


def _strings(value: Any, key: str, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.append(f"{key} must be a list of strings")
    return None


def _table(data: dict[str, Any], key: str, problems: list[str]) -> dict[str, Any]:
    value = data.pop(key, {})
    if isinstance(value, dict):
        return value
    problems.append(f"[{key}] must be a table")
    return {}


def parse_repo_config(text: str) -> RepoConfig:
    """Parse and validate `.veribot.toml`; raise :class:`ConfigError` naming every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f".veribot.toml is not valid TOML: {error}") from error
    problems: list[str] = []
    defaults = RepoConfig()
    values: dict[str, Any] = {}
    for key in ("include", "exclude", "checks", "refactoring_labels"):
        if key in data:
            values[key] = _strings(data.pop(key), key, problems)
    if "fail_on" in data:
        fail_on = data.pop("fail_on")
        if fail_on not in FAIL_ON:
            problems.append(f"fail_on must be one of {', '.join(FAIL_ON)}")
        values["fail_on"] = fail_on
    for check in values.get("checks") or ():
        if check not in KNOWN_CHECKS:
            problems.append(f"checks: unknown check {check!r} (known: {', '.join(KNOWN_CHECKS)})")
    if "inconclusive_conclusion" in data:
        conclusion = data.pop("inconclusive_conclusion")
        if conclusion not in INCONCLUSIVE_CONCLUSIONS:
            problems.append(
                f"inconclusive_conclusion must be one of {', '.join(INCONCLUSIVE_CONCLUSIONS)}"
            )
        values["inconclusive_conclusion"] = conclusion
    for key in ("execute", "review_tests", "review_stubs"):
        if key in data:
            flag = data.pop(key)
            if not isinstance(flag, bool):
                problems.append(f"{key} must be true or false")
            values[key] = flag
    if isinstance(data.get("agent"), bool):  # `agent = false`, short for `[agent] enabled`
        data["agent"] = {"enabled": data["agent"]}
    agent = _table(data, "agent", problems)
    if "enabled" in agent:
        enabled = agent.pop("enabled")
        if not isinstance(enabled, bool):
            problems.append("agent.enabled must be true or false")
        values["agent_enabled"] = enabled
    if "model" in agent:
        model = agent.pop("model")
        if not isinstance(model, str) or not model:
            problems.append("agent.model must be a non-empty string")
        values["agent_model"] = model
    if "temperature" in agent:
        temperature = agent.pop("temperature")
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not 0.0 <= temperature <= 1.0
        ):
            problems.append("agent.temperature must be a number from 0 to 1")
        else:
            values["agent_temperature"] = float(temperature)
    problems += [f"agent.{key}: unknown key" for key in agent]
    budget_table = _table(data, "budget", problems)
    budget: dict[str, int] = {}
    for key in ("units", "llm_calls", "tokens"):
        if key in budget_table:
            amount = budget_table.pop(key)
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                problems.append(f"budget.{key} must be a non-negative integer")
            budget[key] = amount
    problems += [f"budget.{key}: unknown key" for key in budget_table]
    problems += [f"{key}: unknown key" for key in data]
    if problems:
        raise ConfigError(".veribot.toml is invalid: " + "; ".join(problems))
    return RepoConfig(
        include=values.get("include", defaults.include),
        exclude=values.get("exclude", defaults.exclude),
        checks=values.get("checks", defaults.checks),
        agent_enabled=values.get("agent_enabled", defaults.agent_enabled),
        agent_model=values.get("agent_model", defaults.agent_model),
        agent_temperature=values.get("agent_temperature", defaults.agent_temperature),
        budget=Budget(**budget),
        inconclusive_conclusion=values.get(
            "inconclusive_conclusion", defaults.inconclusive_conclusion
        ),
        execute=values.get("execute", defaults.execute),
        review_tests=values.get("review_tests", defaults.review_tests),
        review_stubs=values.get("review_stubs", defaults.review_stubs),
        fail_on=values.get("fail_on", defaults.fail_on),
        refactoring_labels=values.get("refactoring_labels", defaults.refactoring_labels),
    )
