"""``archive stats`` and the archive search agree on what a subreddit holds: names are stored
as the search looks them up, and comments without their posts are said to be unsearchable
by both instead of one counting them and the other finding nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crowdsift.cli.archive import app
from crowdsift.cli.main import app as main_app
from crowdsift.core.errors import SubredditUnavailableError
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.search import held_subreddits
from crowdsift.sources.archive.stats import archive_stats

runner = CliRunner()


def test_a_subreddit_written_any_way_is_stored_and_found_as_one_name(
    tmp_path: Path, dump: Any, kit: Any
) -> None:
    posts = dump("RS.ndjson", [kit.post("a", subreddit="r/Tea"), kit.post("b", subreddit="TEA")])
    archive = tmp_path / "a.sqlite"
    assert import_files([posts], archive).posts == 2
    assert [(s.subreddit, s.posts) for s in archive_stats(archive)] == [("tea", 2)]
    conn = db.open_readonly(archive)
    try:
        assert held_subreddits(conn, "/r/Tea/", "archive") == ["tea"]
    finally:
        conn.close()


def test_comments_without_their_posts_are_counted_and_said_unsearchable_by_both(
    tmp_path: Path, dump: Any, kit: Any, settings_env: Path
) -> None:
    answer = {"data": [kit.comment("c1", "p1", subreddit="Science")], "metadata": {}}
    path = tmp_path / "search.json"
    path.write_text(json.dumps(answer))
    archive = tmp_path / "a.sqlite"
    assert import_files([path], archive).comments == 1
    stats = runner.invoke(app, ["stats", "--archive", str(archive)], catch_exceptions=False)
    assert "r/science holds 1 comment but none of their posts" in stats.stderr
    conn = db.open_readonly(archive)
    try:
        with pytest.raises(SubredditUnavailableError, match="none of their posts"):
            held_subreddits(conn, "science", "archive")
        with pytest.raises(SubredditUnavailableError, match="lists the subreddits it holds"):
            held_subreddits(conn, "gardening", "archive")
    finally:
        conn.close()


def test_an_answer_over_comments_without_their_posts_says_why_nothing_was_searched(
    tmp_path: Path, kit: Any, settings_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {"data": [kit.comment("c1", "p1", subreddit="Science")], "metadata": {}}
    path = tmp_path / "search.json"
    path.write_text(json.dumps(answer))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    imported = runner.invoke(main_app, ["archive", "import", str(path)], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    asked = runner.invoke(
        main_app,
        ["ask", "Is quantum computing close?", "--source", "archive", "--engine", "local",
         "-r", "science"],
        catch_exceptions=False,
    )  # fmt: skip
    said = " ".join(asked.stdout.split())
    assert "No thread could be searched for this question." in said  # not "found no thread"
    assert "r/science was not searched:" in said and "import the posts too" in said


def test_stats_dates_ignore_records_without_a_time(tmp_path: Path, kit: Any, dump: Any) -> None:
    records = [kit.post("a", created=1_700_000_000), kit.comment("c", "a", created=0)]
    archive = tmp_path / "a.sqlite"
    import_files([dump("R.ndjson", records)], archive)
    (row,) = archive_stats(archive)
    assert row.first_created is not None and row.first_created.year == 2023
