"""Settings from an explicit environment, and `.veribot.toml` validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from veribot.bot.config import Budget, ConfigError, RepoConfig, Settings, parse_repo_config


def test_settings_from_env(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {"VERIBOT_WEBHOOK_SECRET": "s3cret", "VERIBOT_DATA_DIR": str(tmp_path)}
    )
    assert settings.webhook_secret == "s3cret"
    assert settings.queue_path == tmp_path / "queue.sqlite3"
    assert "s3cret" not in repr(settings)


def test_secret_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("from-file\n")
    env = {"VERIBOT_WEBHOOK_SECRET_FILE": str(tmp_path / "secret")}
    assert Settings.from_env(env).webhook_secret == "from-file"
    with pytest.raises(ConfigError, match="unreadable"):
        Settings.from_env({"VERIBOT_WEBHOOK_SECRET_FILE": str(tmp_path / "missing")})


def test_empty_config_is_the_defaults() -> None:
    assert parse_repo_config("") == RepoConfig()


def test_full_config() -> None:
    config = parse_repo_config(
        """
        include = ["src/**/*.py"]
        exclude = ["src/vendor/**"]
        checks = ["equivalence"]
        inconclusive_conclusion = "failure"
        execute = false
        [agent]
        enabled = false
        model = "claude-x"
        [budget]
        units = 5
        tokens = 1000
        """
    )
    assert config.include == ("src/**/*.py",) and config.exclude == ("src/vendor/**",)
    assert (config.agent_enabled, config.agent_model) == (False, "claude-x")
    assert config.budget == Budget(units=5, tokens=1000)
    assert config.inconclusive_conclusion == "failure"
    assert config.execute is False


def test_every_problem_is_named() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_repo_config(
            'include = "x"\ninconclusive_conclusion = "maybe"\ncolour = 1\n'
            "execute = 'no'\n[budget]\nunits = -1\n[agent]\nenabled = 1\n"
        )
    message = str(raised.value)
    for part in (
        "include",
        "inconclusive_conclusion",
        "colour",
        "execute",
        "budget.units",
        "agent.enabled",
    ):
        assert part in message


def test_invalid_toml_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_repo_config("include = [")


def test_the_agents_key_and_cache_from_env(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "VERIBOT_DATA_DIR": str(tmp_path)}
    settings = Settings.from_env(env)
    assert settings.anthropic_api_key == "sk-ant-secret"
    assert "sk-ant-secret" not in repr(settings)
    assert settings.anthropic_base_url == "https://api.anthropic.com"
    assert settings.llm_cache_path == tmp_path / "llm.sqlite3"
    assert Settings.from_env({**env, "VERIBOT_LLM_CACHE": "0"}).llm_cache_path is None
    (tmp_path / "key").write_text("sk-ant-from-file\n")
    from_file = Settings.from_env({"VERIBOT_ANTHROPIC_API_KEY_FILE": str(tmp_path / "key")})
    assert from_file.anthropic_api_key == "sk-ant-from-file"
    assert Settings.from_env({}).anthropic_api_key is None
    assert Settings().llm_cache_path is None  # built by hand (the Action): no cache


def test_agent_keys() -> None:
    assert parse_repo_config("agent = false\n").agent_enabled is False
    config = parse_repo_config('[agent]\nmodel = "claude-x"\ntemperature = 0.5\n')
    assert (config.agent_enabled, config.agent_model, config.agent_temperature) == (
        True,
        "claude-x",
        0.5,
    )
    with pytest.raises(ConfigError) as raised:
        parse_repo_config('[agent]\ntemperature = 3\nsteps = 2\n[budget]\nllm_calls = "many"\n')
    message = str(raised.value)
    for part in ("agent.temperature", "agent.steps: unknown key", "budget.llm_calls"):
        assert part in message


def test_review_tests_and_stubs_choices() -> None:
    assert RepoConfig().review_tests is True and RepoConfig().review_stubs is False
    assert "**/*.pyi" in RepoConfig().include  # stubs reach review, which lists them skipped
    config = parse_repo_config("review_tests = false\nreview_stubs = true\n")
    assert config.review_tests is False and config.review_stubs is True
    with pytest.raises(ConfigError, match="review_stubs must be true or false"):
        parse_repo_config('review_stubs = "yes"\n')


README = Path(__file__).resolve().parents[2] / "README.md"


def _workflow_job_checks(markdown: str) -> set[str]:
    """The check names of the jobs of every workflow in ```yaml blocks (id, or `name:`)."""
    import re

    names: set[str] = set()
    for block in re.findall(r"```yaml\n(.*?)```", markdown, flags=re.DOTALL):
        if "\njobs:" not in block:
            continue
        jobs = block.split("\njobs:", 1)[1]
        names.update(re.findall(r"^  ([A-Za-z0-9_-]+):", jobs, flags=re.MULTILINE))
        names.update(re.findall(r"^    name:\s*(.+?)\s*$", jobs, flags=re.MULTILINE))
    return names


def test_the_apps_check_name_cannot_collide_with_a_workflow_job() -> None:
    from veribot.bot.config import DEFAULT_CHECK_NAME

    # A job's check run is named after the job: its id ([A-Za-z0-9_-]) unless it has a name.
    assert " " in DEFAULT_CHECK_NAME
    assert Settings.from_env({}).check_name == DEFAULT_CHECK_NAME
    if not README.exists():
        pytest.skip("the README is not in this checkout")
    text = README.read_text(encoding="utf-8")
    assert DEFAULT_CHECK_NAME not in _workflow_job_checks(text)
    assert f"`{DEFAULT_CHECK_NAME}`" in text  # documented: what branch protection requires


def test_the_data_directory_is_always_absolute(tmp_path: Path) -> None:
    assert Settings().data_dir.is_absolute()
    home = Settings.from_env({"HOME": str(tmp_path)}).data_dir
    assert home == tmp_path / ".local" / "share" / "veribot"
    xdg = Settings.from_env({"XDG_DATA_HOME": str(tmp_path / "xdg")}).data_dir
    assert xdg == tmp_path / "xdg" / "veribot"
    relative = Settings.from_env({"VERIBOT_DATA_DIR": "state"}).data_dir
    assert relative.is_absolute() and relative.name == "state"  # fixed when read
