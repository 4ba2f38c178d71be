"""A bad setting is one line per variable — its environment name, the value, what is
expected — and exit code 2, from every entry point; never a pydantic traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, env_name, load_settings, settings_error_message
from crowdsift.core.errors import ConfigError

BAD = {
    "CROWDSIFT_JOB_WORKERS": "abc",
    "CROWDSIFT_BUDGET_USD": "-1",
    "CROWDSIFT_CACHE_TTL": "x",
}
EXPECTED_LINES = {
    "error: CROWDSIFT_JOB_WORKERS='abc': should be a valid integer, unable to parse string as "
    "an integer (allowed: >= 1, <= 32)",
    "error: CROWDSIFT_BUDGET_USD='-1': should be greater than 0",
    "error: CROWDSIFT_CACHE_TTL='x': should be a valid number, unable to parse string as a "
    "number (allowed: >= 0)",
}


def test_load_settings_names_each_bad_variable_on_its_own_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in BAD.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CROWDSIFT_ENGINE", "gpt-9")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    lines = str(raised.value).splitlines()
    assert {f"error: {line}" for line in lines} == {
        *EXPECTED_LINES,
        "error: CROWDSIFT_ENGINE='gpt-9': should be 'local' or 'openai'",
    }
    assert raised.value.__cause__ is None  # no chained pydantic traceback


def test_good_values_still_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROWDSIFT_JOB_WORKERS", "3")
    monkeypatch.setenv("crowdsift_cache_ttl", "0")  # names are case-insensitive
    settings = load_settings()
    assert (settings.job_workers, settings.cache_ttl) == (3, 0.0)


def test_values_given_by_field_name_are_reported_by_variable_name() -> None:
    with pytest.raises(ValidationError) as raised:
        Settings(job_workers=0, chroma_collection="ab")  # type: ignore[arg-type]
    assert set(settings_error_message(raised.value).splitlines()) == {
        "CROWDSIFT_CHROMA_COLLECTION='ab': should have at least 3 characters",
        "CROWDSIFT_JOB_WORKERS=0: should be greater than or equal to 1",
    }
    assert env_name("reddit_client_id") == "REDDIT_CLIENT_ID"
    assert env_name("model_filter") == "MODEL_FILTER"


def test_secret_values_are_redacted_and_long_values_cut() -> None:
    secret = "sk-live-" + "9" * 40
    with pytest.raises(ValidationError) as raised:
        Settings(
            api_key=[secret],  # type: ignore[arg-type]
            reddit_client_secret=12345678,  # type: ignore[arg-type]
            http_timeout="z" * 500,  # type: ignore[arg-type]
        )
    message = settings_error_message(raised.value)
    assert secret not in message and "12345678" not in message
    lines = dict(line.split("=", 1) for line in message.splitlines())
    assert lines["CROWDSIFT_API_KEY"] == "<redacted>: should be a valid string"
    assert lines["REDDIT_CLIENT_SECRET"] == "<redacted>: should be a valid string"
    assert lines["CROWDSIFT_HTTP_TIMEOUT"].startswith("'" + "z" * 57 + "...': should be a valid")
    assert len(message.splitlines()[-1]) < 200


@pytest.mark.parametrize(
    "command", [["ask", "Which drill?"], ["serve"], ["worker"], ["mcp"], ["feed"]]
)
def test_every_command_exits_2_with_one_line_per_bad_variable(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    for name, value in BAD.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, command, catch_exceptions=False)
    assert result.exit_code == 2
    assert set(result.stderr.splitlines()) == EXPECTED_LINES
    assert len(result.stderr.splitlines()) == len(BAD)
    assert result.stdout == ""


def test_version_needs_no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROWDSIFT_JOB_WORKERS", "abc")
    result = CliRunner().invoke(app, ["--version"], catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout.startswith("crowdsift ")


def test_python_m_crowdsift_with_a_bad_variable_is_one_line_and_exit_2(
    isolated_environment: Path,
) -> None:
    env = {**os.environ, "CROWDSIFT_BUDGET_USD": "-1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "crowdsift", "ask", "x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: CROWDSIFT_BUDGET_USD='-1': should be greater than 0\n"
    assert "Traceback" not in done.stderr and done.stdout == ""
