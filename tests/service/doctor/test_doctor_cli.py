"""``crowdsift doctor`` in-process: one line per check with its fix, the exit code, ``--json``,
and never a secret in what it prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import get_settings
from tests.service.doctor.conftest import LLM_KEY, REDDIT_SECRET
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.openai_server import ChatCompletionsServer
from tests.support.reddit_server import RedditProtocolServer

runner = CliRunner()
PG_PASSWORD = "pg-doctor-password-42"


def _doctor(*args: str) -> tuple[int, str]:
    get_settings.cache_clear()
    result = runner.invoke(app, ["doctor", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def everything_up(
    monkeypatch: pytest.MonkeyPatch,
    reddit_server: RedditProtocolServer,
    arctic_server: ArcticShiftServer,
    llm_server: ChatCompletionsServer,
    user_archive: Path,
    postgres_url: str,
) -> None:
    """Every check configured and pointed at a local server or store that works."""
    env = {
        "REDDIT_CLIENT_ID": "doctor-client",
        "REDDIT_CLIENT_SECRET": REDDIT_SECRET,
        "REDDIT_AUTH_URL": reddit_server.auth_url,
        "REDDIT_API_BASE_URL": reddit_server.base_url,
        "ARCTIC_SHIFT_BASE_URL": arctic_server.base_url,
        "CROWDSIFT_ARCHIVE": str(user_archive),
        "CROWDSIFT_LLM_BASE_URL": llm_server.base_url,
        "CROWDSIFT_LLM_API_KEY": LLM_KEY,
        "CROWDSIFT_DATABASE_URL": postgres_url,
        "CROWDSIFT_CACHE_URL": "redis://127.0.0.1:6379/0",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("everything_up")
def test_everything_working_exits_0_with_one_ok_line_per_check() -> None:
    code, output = _doctor()
    assert code == 0, output
    lines = output.splitlines()
    names = ["reddit-api", "arctic-shift", "archive", "llm", "embedding", "database", "redis",
             "chroma"]  # fmt: skip
    assert [line.split()[1] for line in lines[: len(names)]] == names
    assert all(line.startswith("ok ") for line in lines[: len(names)]), output
    assert "default path: --source auto answers from reddit-api, --engine openai" in output
    assert lines[-1] == "all checks passed"


def test_an_unreachable_arctic_shift_with_nothing_else_fails_with_its_fix() -> None:
    # no Reddit keys, no archive; Arctic Shift is a dead local port (the suite's default)
    code, output = _doctor()
    assert code == 1
    (line,) = [line for line in output.splitlines() if " arctic-shift " in line]
    assert line.startswith("FAIL") and "— fix: check ARCTIC_SHIFT_BASE_URL" in line
    assert "answers from the bundled sample archive (SAMPLE DATA)" in output
    assert output.splitlines()[-1] == "1 check(s) failed: arctic-shift"


def test_an_archive_keeps_the_default_path_working_when_arctic_shift_is_down(
    monkeypatch: pytest.MonkeyPatch, user_archive: Path
) -> None:
    monkeypatch.setenv("CROWDSIFT_ARCHIVE", str(user_archive))
    code, output = _doctor()
    assert code == 0, output
    (line,) = [line for line in output.splitlines() if " arctic-shift " in line]
    assert line.startswith("WARN") and "auto uses archive instead" in line


@pytest.mark.usefixtures("everything_up")
def test_json_is_one_object_per_check(monkeypatch: pytest.MonkeyPatch, dead_port: int) -> None:
    monkeypatch.setenv("CROWDSIFT_LLM_BASE_URL", f"http://127.0.0.1:{dead_port}/v1")
    code, output = _doctor("--json")
    assert code == 1
    report = json.loads(output)
    assert set(report) == {"ok", "checks"} and report["ok"] is False
    for check in report["checks"]:
        assert set(check) == {"name", "status", "detail", "fix"}
        assert check["status"] in {"ok", "warn", "fail", "skipped"}
    llm = next(c for c in report["checks"] if c["name"] == "llm")
    assert llm["status"] == "fail" and "CROWDSIFT_LLM_BASE_URL" in llm["fix"]


def test_no_secret_is_ever_printed(monkeypatch: pytest.MonkeyPatch, dead_port: int) -> None:
    """Every secret set, every server refusing or absent: the messages are full of URLs and
    errors, and none of them carries a key, a password or a salt."""
    secrets = {
        "REDDIT_CLIENT_SECRET": REDDIT_SECRET,
        "REDDIT_PASSWORD": "reddit-password-0987654321",
        "CROWDSIFT_LLM_API_KEY": LLM_KEY,
        "CROWDSIFT_AUTHOR_SALT": "salt-salt-salt-123456",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("REDDIT_CLIENT_ID", "doctor-client")
    monkeypatch.setenv("REDDIT_USERNAME", "doctor-user")
    monkeypatch.setenv("REDDIT_AUTH_URL", f"http://127.0.0.1:{dead_port}/api/v1/access_token")
    monkeypatch.setenv("CROWDSIFT_LLM_BASE_URL", f"http://127.0.0.1:{dead_port}/v1")
    monkeypatch.setenv(
        "CROWDSIFT_DATABASE_URL", f"postgresql+psycopg://me:{PG_PASSWORD}@127.0.0.1:{dead_port}/x"
    )
    monkeypatch.setenv("CROWDSIFT_CACHE_URL", f"redis://:{PG_PASSWORD}@127.0.0.1:{dead_port}/0")
    for args in ((), ("--json",)):
        code, output = _doctor(*args)
        assert code == 1
        for secret in [*secrets.values(), PG_PASSWORD]:
            assert secret not in output
