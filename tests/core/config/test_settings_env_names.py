"""Settings come from their documented variable names only: the Python names stay constructor
keywords, and variables every machine or another program sets (HOME, SOURCE, API_KEY) are not
crowdsift's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import AliasChoices
from structlog.testing import capture_logs

from crowdsift.core.config import Settings
from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.config.loading import warn_about_legacy_home
from crowdsift.core.config.reddit import RedditConfig

FOREIGN = {
    "HOME": "/somewhere/else",
    "SOURCE": "reddit-api",
    "ENGINE": "openai",
    "API_KEY": "not-crowdsifts-key",
    "DATABASE_URL": "postgresql://other-app/db",
    "LOG_LEVEL": "DEBUG",
    "CONCURRENCY": "1",
    "RERANK_TOP": "3",
    "MAP_CHUNK_SIZE": "7",
}


def _python_aliases() -> set[str]:
    """Every lower-case alias of every setting whose upper-case form is no documented name
    ("reddit_password" is REDDIT_PASSWORD's; "home" is nobody's): what must never be read."""
    lower, documented = set(), set()
    for model in (Settings, RedditConfig, ExpertsConfig):
        for field in model.model_fields.values():
            alias = field.validation_alias
            if isinstance(alias, AliasChoices):
                names = [c for c in alias.choices if isinstance(c, str)]
                documented |= {c for c in names if c.isupper()}
                lower |= {c for c in names if not c.isupper()}
    return {name for name in lower if name.upper() not in documented}


def test_variables_of_other_programs_are_not_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CROWDSIFT_HOME", raising=False)
    for name, value in FOREIGN.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.home is None
    assert settings.data_dir != Path("/somewhere/else")
    assert settings.source == "auto" and settings.engine != "openai"
    assert settings.api_key is None and settings.database_url is None
    assert settings.reddit.rerank_top != 3 and settings.experts.map_chunk_size != 7


def test_no_python_alias_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lower-case alias, set upper-case as a shell would, changes nothing."""
    baseline = Settings().model_dump()
    for name in _python_aliases():
        monkeypatch.setenv(name.upper(), "1")
    assert Settings().model_dump() == baseline


def test_documented_names_and_constructor_keywords_still_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CROWDSIFT_HOME", str(tmp_path))
    monkeypatch.setenv("CROWDSIFT_SOURCE", "archive")
    monkeypatch.setenv("CROWDSIFT_REDDIT_RERANK_TOP", "9")
    monkeypatch.setenv("CROWDSIFT_SIDECAR_DRILL_TOP", "4")  # the older name of CROWDSIFT_REDDIT_*
    monkeypatch.setenv("MAP_MAX_PARALLEL", "7")
    settings = Settings()
    assert settings.data_dir == tmp_path and settings.source == "archive"
    assert settings.reddit.rerank_top == 9 and settings.experts.map_max_parallel == 7
    assert settings.reddit.drill_top == 4
    made = Settings(home=tmp_path / "x", archive=tmp_path / "a.sqlite", source="arctic-shift")
    assert made.data_dir == tmp_path / "x" and made.archive_path == tmp_path / "a.sqlite"
    assert made.source == "arctic-shift"


def test_a_cli_process_with_only_home_set_keeps_its_data_out_of_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROWDSIFT_")}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "xdg"))
    script = "from crowdsift.core.config import get_settings; print(get_settings().data_dir)"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(tmp_path / "xdg" / "crowdsift")


def test_data_left_in_home_by_earlier_versions_gets_one_warning_naming_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CROWDSIFT_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    home = tmp_path / "home"
    home.mkdir()
    (home / "author_salt").write_bytes(b"s" * 32)
    (home / "archive.sqlite").write_bytes(b"")
    with capture_logs() as logs:
        found = warn_about_legacy_home(Settings(), home)
    assert found == ["author_salt", "archive.sqlite"]
    (event,) = [e for e in logs if e["event"] == "data_dir_moved"]
    assert f"CROWDSIFT_HOME={home}" in event["note"] and "move these files" in event["note"]
    (tmp_path / "xdg" / "crowdsift").mkdir(parents=True)  # once the new place exists: quiet
    assert warn_about_legacy_home(Settings(), home) == []


def test_a_process_without_a_home_directory_still_loads_its_settings(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "CROWDSIFT_HOME")}
    env["XDG_DATA_HOME"] = str(tmp_path)
    script = (
        "import pathlib\n"
        "def no_home(): raise RuntimeError('Could not determine home directory')\n"
        "pathlib.Path.home = staticmethod(no_home)\n"
        "from crowdsift.core.config import load_settings; print(load_settings().data_dir)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "crowdsift")
