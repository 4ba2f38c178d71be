"""``crowdsift archive import|stats`` in-process with typer's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from crowdsift.cli.archive import app

Dump = Callable[[str, list[Any]], Path]
runner = CliRunner()


def test_import_json_report_into_explicit_archive(
    dump: Dump, tmp_path: Path, kit: Any, settings_env: Path
) -> None:
    posts = dump("RS_a.zst", [kit.post("a1"), kit.post("a2"), "garbage"])
    comments = dump("RC_a.ndjson", [kit.comment("c1", "a1")])
    target = tmp_path / "nested" / "dir" / "mine.sqlite"
    result = runner.invoke(
        app,
        ["import", str(posts), str(comments), "--archive", str(target), "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["posts"], report["comments"], report["bad_lines"]) == (2, 1, 1)
    assert report["files"][0]["first_bad_lines"] == [
        {"line_no": 3, "reason": report["files"][0]["first_bad_lines"][0]["reason"]}
    ]
    assert target.is_file()
    assert not (settings_env / "archive.sqlite").exists()


def test_import_defaults_to_the_data_dir_and_prints_a_table(
    dump: Dump, kit: Any, settings_env: Path
) -> None:
    posts = dump("RS_b.ndjson", [kit.post("b1"), "{oops"])
    result = runner.invoke(app, ["import", str(posts)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (settings_env / "archive.sqlite").is_file()
    assert "RS_b.ndjson" in result.stdout and "total" in result.stdout
    assert f"{posts}:2: not JSON" in result.stderr  # file:line: reason, no progress bar


def test_import_uses_crowdsift_archive_when_set(
    dump: Dump, kit: Any, settings_env: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    from crowdsift.core.config import get_settings

    configured = tmp_path / "configured.sqlite"
    monkeypatch.setenv("CROWDSIFT_ARCHIVE", str(configured))
    get_settings.cache_clear()
    result = runner.invoke(app, ["import", str(dump("RS_c.ndjson", [kit.post("c")]))])
    assert result.exit_code == 0, result.output
    assert configured.is_file()


def test_missing_file_exits_1_after_importing_the_others(
    dump: Dump, kit: Any, settings_env: Path, tmp_path: Path
) -> None:
    good = dump("RS_good.ndjson", [kit.post("g1")])
    missing = tmp_path / "RS_missing.zst"
    target = tmp_path / "a.sqlite"
    result = runner.invoke(app, ["import", str(missing), str(good), "--archive", str(target)])
    assert result.exit_code == 1
    assert "RS_missing.zst" in result.stderr and "cannot read" in result.stderr
    stats = runner.invoke(app, ["stats", "--archive", str(target), "--json"])
    assert stats.exit_code == 0, stats.output
    payload = json.loads(stats.stdout)
    assert payload["demo"] is False
    assert [(s["subreddit"], s["posts"]) for s in payload["subreddits"]] == [("headphones", 1)]


def test_stats_table(small_archive: Path, settings_env: Path) -> None:
    result = runner.invoke(app, ["stats", "--archive", str(small_archive)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if "headphones" in line]
    assert lines and "5" in lines[0]
    assert "audiophile" in result.stdout


def test_stats_of_a_missing_archive_exits_1_with_advice(tmp_path: Path, settings_env: Path) -> None:
    result = runner.invoke(app, ["stats", "--archive", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 1
    assert "none.sqlite" in result.stderr and "crowdsift archive import" in result.stderr


def test_import_into_a_foreign_database_exits_1(
    dump: Dump, kit: Any, tmp_path: Path, settings_env: Path
) -> None:
    foreign = tmp_path / "notes.sqlite"
    foreign.write_text("not a database, just text that is long enough to be checked" * 20)
    result = runner.invoke(
        app, ["import", str(dump("RS.ndjson", [kit.post("x")])), "--archive", str(foreign)]
    )
    assert result.exit_code == 1
    assert "notes.sqlite" in result.stderr


def test_progress_bar_spans_all_files_on_a_terminal(dump: Dump, kit: Any, tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from crowdsift.cli.archive import _import_with_bar

    first = dump("RS_1.zst", [kit.post(f"a{i}") for i in range(3)])
    second = dump("RS_2.zst", [kit.post(f"b{i}") for i in range(3)])
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    report = _import_with_bar([first, second], tmp_path / "bar.sqlite", console)
    assert report.posts == 6
    assert "RS_2.zst: 3 records" in out.getvalue()
