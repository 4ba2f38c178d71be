"""CSV files with a header: columns mapped by name or ``--columns``, posts or comments by the
file's columns, ids derived for comments without them, every good row kept."""

from __future__ import annotations

import csv
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from typer.testing import CliRunner

from crowdsift.cli.archive import app
from crowdsift.core.errors import DumpFormatError
from crowdsift.core.log import configure_logging
from crowdsift.sources.archive.csv_rows import (
    decide_kind,
    field_of_column,
    parse_columns_option,
    plan_layout,
)
from crowdsift.sources.archive.importer import import_files

runner = CliRunner()
JAN_2 = 1_704_153_600  # 2024-01-02T00:00:00Z
LINK = "https://www.reddit.com/r/Tea/comments/p1/first/"


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def rows(archive: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(archive)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def cli_logs() -> Iterator[None]:
    """Logs as the ``crowdsift`` command has them by default (warnings and worse)."""
    saved = structlog.get_config()
    configure_logging("WARNING", stream=sys.stderr)
    yield
    structlog.configure(**saved)


def test_columns_map_by_their_common_names_and_prefixes() -> None:
    assert field_of_column("Title") == "title"
    assert field_of_column("post_title") == "title"
    assert field_of_column("comment_text") == "text"
    assert field_of_column("poster_username") == "author"
    assert field_of_column("post_id") == "link_id"  # a post reference, unless mapped as id
    assert field_of_column("URL") == "permalink"
    assert field_of_column("is_solution") is None


def test_the_kind_follows_the_columns() -> None:
    assert decide_kind({"id", "title", "selftext"}) == "t3"
    assert decide_kind({"body", "link_id"}) == "t1"
    assert decide_kind({"body", "permalink", "title"}) == "t1"  # comments repeating the title
    assert decide_kind({"text", "link_id"}) == "t1"
    assert decide_kind({"body", "score"}) is None


def test_the_columns_option_names_fields_by_any_known_name() -> None:
    assert parse_columns_option("body=comment_text, post_id=submission") == {
        "body": "comment_text",
        "link_id": "submission",
    }
    with pytest.raises(ValueError, match="write field=column"):
        parse_columns_option("bodytext")
    with pytest.raises(ValueError, match="fields:"):
        parse_columns_option("colour=blue")


def test_a_named_column_that_is_missing_is_a_file_error_naming_the_columns() -> None:
    with pytest.raises(DumpFormatError, match="its columns are: a, title"):
        plan_layout(["a", "title"], {"id": "nope"}, "x.csv")


def test_posts_with_common_columns_import_with_iso_dates_and_long_quoted_text(
    tmp_path: Path,
) -> None:
    long_text = "line one\nline two, with a comma\n" + "x" * 200_000
    path = write_csv(
        tmp_path / "posts.csv",
        ["id", "title", "selftext", "score", "created_utc", "url", "num_comments", "subreddit"],
        [
            ["p1", "First", long_text, "12", "2024-01-02", LINK, "3", "r/Tea"],
            ["p2", "Second", "", "x", "2024-01-02", "", "0", "Tea"],  # score is not a number
            ["p3", "Third", "body", "5", f"{JAN_2}", "https://example.com/a", "0", "tea"],
        ],
    )  # fmt: skip
    archive = tmp_path / "a.sqlite"
    (f,) = import_files([path], archive).files
    assert (f.format, f.lines, f.posts, f.bad_lines, f.error) == ("csv-posts", 3, 2, 1, None)
    assert [(b.line_no, b.reason) for b in f.first_bad_lines] == [
        (5, "score 'x' is not a number")  # the row starts on line 5: the text spans 3 lines
    ]
    assert rows(archive, "SELECT id, subreddit, score, created_utc, title FROM posts") == [
        ("p1", "tea", 12, JAN_2, "First"),
        ("p3", "tea", 5, JAN_2, "Third"),
    ]
    assert len(rows(archive, "SELECT 1 FROM posts_fts WHERE posts_fts MATCH 'comma'")) == 1


def test_comments_without_ids_or_parents_hang_on_their_posts_with_stable_ids(
    tmp_path: Path,
) -> None:
    posts = write_csv(
        tmp_path / "posts.csv", ["id", "title", "subreddit"], [["p1", "Kettle?", "Tea"]]
    )
    comments = write_csv(
        tmp_path / "comments.csv",
        ["body", "score", "is_solution", "post_id"],
        [["Descale it", "4", "True", "p1"], ["Same", "1", "False", "p1"], ["Same", "2", "", "p1"]],
    )
    archive = tmp_path / "a.sqlite"
    report = import_files([posts, comments], archive)
    assert [(f.format, f.posts, f.comments, f.bad_lines) for f in report.files] == [
        ("csv-posts", 1, 0, 0),
        ("csv-comments", 0, 3, 0),
    ]
    stored = rows(archive, "SELECT id, link_id, parent_id, subreddit FROM comments ORDER BY id")
    assert len({row[0] for row in stored}) == 3  # the two identical replies are both kept
    assert {row[1:] for row in stored} == {("p1", "t3_p1", "tea")}
    again = import_files([comments], archive)
    assert again.comments == 3
    assert rows(archive, "SELECT id FROM comments ORDER BY id") == [(row[0],) for row in stored]


def test_comments_whose_posts_are_unknown_say_what_to_do(tmp_path: Path) -> None:
    comments = write_csv(tmp_path / "c.csv", ["body", "post_id"], [["hello", "p9"]])
    (f,) = import_files([comments], tmp_path / "a.sqlite").files
    assert f.comments == 0 and f.error is not None
    assert "post t3_p9 is not in the archive; import the posts first" in f.error


def test_columns_option_maps_names_that_say_nothing(
    tmp_path: Path, settings_env: Path, cli_logs: None
) -> None:
    path = write_csv(
        tmp_path / "export.csv",
        ["comment_text", "submission", "sub", "when"],
        [["Use filtered water", "p1", "Tea", "2024-01-02T00:00:00+00:00"]],
    )
    archive = tmp_path / "a.sqlite"
    result = runner.invoke(
        app,
        [
            "import", str(path), "--archive", str(archive), "--no-embed",
            "--columns", "body=comment_text,post_id=submission,subreddit=sub,date=when",
        ],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "ok (comments)" in result.stdout
    assert rows(archive, "SELECT link_id, parent_id, subreddit, created_utc FROM comments") == [
        ("p1", "t3_p1", "tea", JAN_2)
    ]


def test_prefixed_post_columns_need_only_their_id_named(
    tmp_path: Path, settings_env: Path, cli_logs: None
) -> None:
    header = [
        "post_id",
        "post_title",
        "post_text",
        "post_date",
        "poster_username",
        "subreddit_name",
    ]
    row = ["p1", "Kettle?", "Mine hums", "2024-01-02 00:00:00", "u", "Tea"]
    path = write_csv(tmp_path / "posts.csv", header, [row])
    archive = tmp_path / "a.sqlite"
    plain = runner.invoke(app, ["import", str(path), "--archive", str(archive), "--no-embed"])
    assert plain.exit_code == 1
    assert "--columns id=COLUMN" in plain.stderr and plain.stderr.count("error:") == 1
    mapped = runner.invoke(
        app,
        ["import", str(path), "--archive", str(archive), "--no-embed", "--columns", "id=post_id"],
    )
    assert mapped.exit_code == 0, mapped.output
    assert "ok (posts)" in mapped.stdout
    assert rows(archive, "SELECT id, title, created_utc FROM posts") == [("p1", "Kettle?", JAN_2)]


def test_a_comments_export_read_as_posts_fails_and_says_how_to_read_it(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "c.csv",
        ["post_id", "post_title", "post_text", "post_url", "subreddit_name"],
        [["c1", "", "a reply", "/r/Tea/comments/p1/kettle/c1/", "Tea"]],
    )
    (f,) = import_files([path], tmp_path / "a.sqlite").files
    assert f.posts == 0 and f.error is not None and "--columns body=COLUMN" in f.error
    (g,) = import_files([path], tmp_path / "a.sqlite", columns={"body": "post_text"}).files
    assert g.comments == 0 and "map it with --columns id=post_id" in (g.error or "")
    archive = tmp_path / "b.sqlite"
    (h,) = import_files([path], archive, columns={"body": "post_text", "id": "post_id"}).files
    assert (h.format, h.comments, h.error) == ("csv-comments", 1, None)
    assert rows(archive, "SELECT id, link_id, parent_id, subreddit FROM comments") == [
        ("c1", "p1", "t3_p1", "tea")
    ]


def test_a_csv_of_garbage_exits_1_with_one_message(
    tmp_path: Path, settings_env: Path, cli_logs: None
) -> None:
    path = tmp_path / "noise.csv"
    path.write_bytes(b"\x00\x01qq,\xff\xfe\nrandom,bytes\n")
    result = runner.invoke(app, ["import", str(path), "--no-embed"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr.count("is not a CSV of Reddit posts or comments") == 1, result.stderr


def test_a_malformed_columns_option_exits_2(tmp_path: Path, settings_env: Path) -> None:
    path = write_csv(tmp_path / "p.csv", ["id", "title", "subreddit"], [["p1", "t", "s"]])
    result = runner.invoke(app, ["import", str(path), "--columns", "colour=blue"])
    assert result.exit_code == 2 and "fields:" in result.stderr
