"""What a run prints on the terminal: the answer on stdout, each warning once as one plain line
on stderr; structured log lines only with -v, CROWDSIFT_LOG_LEVEL, or in CROWDSIFT_LOG_FILE."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import get_settings
from crowdsift.core.log import configure_terminal_logging, get_logger, plain_line

runner = CliRunner()
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
# a subreddit the demo archive does not hold: the archive search warns on every query
ASK = ["ask", QUESTION, "--engine", "local", "--source", "archive"]
ASK += ["-r", "gadgets", "-r", "nosuchsub"]
STRUCTURED = re.compile(r"\b(timestamp|level|event)='")


def _ask(*extra: str) -> tuple[str, str]:
    result = runner.invoke(app, [*extra, *ASK], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout, result.stderr


def test_a_normal_run_prints_each_warning_once_as_a_plain_line() -> None:
    stdout, stderr = _ask()
    assert "Sources:" in stdout and not STRUCTURED.search(stdout)
    assert not STRUCTURED.search(stderr), stderr
    warning = "warning: archive subreddits not held (missing: nosuchsub)"
    assert stderr.splitlines().count(warning) == 1, stderr
    assert all(line.startswith(("warning: ", "note: ")) for line in stderr.splitlines()), stderr


def test_v_shows_the_structured_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    _, stderr = _ask("-v")
    assert "event='archive_subreddits_not_held'" in stderr
    assert "level='info'" in stderr


def test_crowdsift_log_level_shows_them_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROWDSIFT_LOG_LEVEL", "WARNING")
    get_settings.cache_clear()
    _, stderr = _ask()
    assert "event='archive_subreddits_not_held'" in stderr
    assert "level='info'" not in stderr


def test_a_log_file_takes_the_structured_lines_and_the_terminal_stays_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_file = tmp_path / "logs" / "crowdsift.log"
    monkeypatch.setenv("CROWDSIFT_LOG_FILE", str(log_file))
    get_settings.cache_clear()
    _, stderr = _ask()
    assert not STRUCTURED.search(stderr)
    assert "warning: archive subreddits not held" in stderr
    logged = log_file.read_text()
    assert "event='archive_subreddits_not_held'" in logged
    assert "level='info' event='reddit_formulated'" in logged  # INFO by default


def test_plain_lines_are_one_line_each_shown_once_and_redacted() -> None:
    stream = io.StringIO()
    configure_terminal_logging(stream=stream)
    log = get_logger("tests")
    log.info("quiet_detail", n=1)  # below a warning: never on the terminal
    for _ in range(3):
        log.warning("cache_off", path="/x", note="line one\nline two", api_key="sk-123456")
    log.error("search_failed", error="boom")
    assert stream.getvalue().splitlines() == [
        "warning: cache off (path: /x; note: line one line two; api key: ***)",
        "warning: search failed (error: boom)",
    ]


def test_plain_line_joins_lists() -> None:
    line = plain_line(
        {"event": "not_held", "level": "warning", "module": "m", "missing": ["a", "b"]}
    )
    assert line == "warning: not held (missing: a, b)"
