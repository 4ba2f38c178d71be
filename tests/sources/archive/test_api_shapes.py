"""Saved API answers in the shapes people keep them: one ``/comments`` answer or Listing per
NDJSON line, and Pushshift / Arctic Shift search answers (``{"data": [...]}``) with integer
ids. Every record is kept, ``more`` stubs are skipped, and a file that gives nothing fails."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from typer.testing import CliRunner

from crowdsift.cli.archive import app
from crowdsift.core.log import configure_logging
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.parse import bare_id, base36, parent_fullname

runner = CliRunner()


@pytest.fixture
def cli_logs() -> Iterator[None]:
    """Logs as the ``crowdsift`` command has them by default (warnings and worse), so what a
    person sees is what is counted."""
    saved = structlog.get_config()
    configure_logging("WARNING", stream=sys.stderr)
    yield
    structlog.configure(**saved)


def rows(archive: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(archive)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def listing(*children: Any) -> dict[str, Any]:
    return {"kind": "Listing", "data": {"after": None, "children": list(children)}}


def t1(kit: Any, cid: str, post: str, parent: str, replies: Any = "") -> dict[str, Any]:
    data = kit.comment(cid, post, parent=parent, body=f"reply {cid}", replies=replies)
    return {"kind": "t1", "data": data}


def comments_answer(kit: Any, post: str) -> list[Any]:
    """``GET /comments/<post>.json``: the post's Listing, then the tree with a ``more`` stub."""
    deep = t1(kit, f"{post}c3", post, f"t1_{post}c2")
    tree = listing(
        t1(
            kit,
            f"{post}c1",
            post,
            f"t3_{post}",
            replies=listing(t1(kit, f"{post}c2", post, f"t1_{post}c1", replies=listing(deep))),
        ),
        t1(kit, f"{post}c4", post, f"t3_{post}"),
        {"kind": "more", "data": {"id": "_", "count": 7, "children": ["x1", "x2"]}},
    )
    return [listing({"kind": "t3", "data": kit.post(post, title=f"thread {post}")}), tree]


def write_lines(path: Path, docs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


@pytest.mark.parametrize("workers", [0, 1], ids=["in-process", "worker-process"])
def test_ndjson_of_comments_answers_keeps_every_comment_and_skips_more_stubs(
    tmp_path: Path, kit: Any, workers: int
) -> None:
    search = listing({"kind": "t3", "data": kit.post("s1", title="from a saved search")})
    path = write_lines(
        tmp_path / "threads.ndjson",
        [comments_answer(kit, "pa"), comments_answer(kit, "pb"), search],
    )
    archive = tmp_path / "a.sqlite"
    report = import_files([path], archive, workers=workers, parallel_min_bytes=0)
    (f,) = report.files
    assert (f.error, f.lines, f.posts, f.comments, f.skipped, f.bad_lines) == (
        None,
        3,
        3,
        8,
        2,
        0,
    )
    assert rows(
        archive, "SELECT id, link_id, parent_id FROM comments WHERE link_id = 'pa' ORDER BY id"
    ) == [
        ("pac1", "pa", "t3_pa"),
        ("pac2", "pa", "t1_pac1"),
        ("pac3", "pa", "t1_pac2"),
        ("pac4", "pa", "t3_pa"),
    ]
    assert sorted(r[0] for r in rows(archive, "SELECT id FROM posts")) == ["pa", "pb", "s1"]


def test_a_bad_comment_inside_an_answer_line_is_reported_with_the_line_number(
    tmp_path: Path, kit: Any
) -> None:
    answer = comments_answer(kit, "pa")
    answer[1]["data"]["children"].append({"kind": "t1", "data": {"id": "nolink", "body": "x"}})
    path = write_lines(tmp_path / "threads.ndjson", [kit.post("first"), answer])
    report = import_files([path], tmp_path / "a.sqlite")
    (f,) = report.files
    assert (f.posts, f.comments, f.bad_lines) == (2, 4, 1)
    assert [(b.line_no, b.reason) for b in f.first_bad_lines] == [
        (2, "t1_nolink: missing subreddit")
    ]


def test_integer_ids_are_the_base36_ids_they_stand_for() -> None:
    assert base36(int("h9z3rd8", 36)) == "h9z3rd8"
    assert bare_id(int("abc", 36)) == "abc"
    assert parent_fullname(int("c1", 36), "p1") == "t1_c1"
    assert parent_fullname(int("p1", 36), "p1") == "t3_p1"
    assert parent_fullname(None, "p1") == "t3_p1"


def pushshift_comment(cid: str, link: str, parent: Any, **extra: Any) -> dict[str, Any]:
    """A comment as Pushshift's search API answered it: integer parent, no ``kind``."""
    return {
        "id": cid,
        "link_id": link,
        "parent_id": parent,
        "subreddit": "Science",
        "author": "someone",
        "body": f"body of {cid}",
        "score": 3,
        "created_utc": 1_650_000_000,
        "retrieved_on": None,
        "retrieved_utc": 1_650_500_000,
        **extra,
    }


def test_pushshift_search_answer_keeps_comments_whose_posts_are_not_in_the_archive(
    tmp_path: Path,
) -> None:
    answer = {
        "data": [
            pushshift_comment("c1", "t3_p1", None),
            pushshift_comment("c2", "t3_p1", int("c1", 36)),
            pushshift_comment("c3", "p2", int("p2", 36)),  # bare link_id, parent = the post
        ],
        "error": None,
        "metadata": {"es_query": {"size": 3}, "total_results": 3},
    }
    path = tmp_path / "search.json"
    path.write_text(json.dumps(answer, indent=1))
    archive = tmp_path / "a.sqlite"
    report = import_files([path], archive)
    (f,) = report.files
    assert (f.error, f.format, f.posts, f.comments, f.bad_lines) == (None, "api-json", 0, 3, 0)
    assert rows(archive, "SELECT id, link_id, parent_id, subreddit FROM comments ORDER BY id") == [
        ("c1", "p1", "t3_p1", "science"),
        ("c2", "p1", "t1_c1", "science"),
        ("c3", "p2", "t3_p2", "science"),
    ]


def test_pushshift_answers_one_per_line_and_submissions_are_imported(
    tmp_path: Path, kit: Any
) -> None:
    posts = {"data": [kit.post("p1"), kit.post("p2")], "metadata": {}}
    comments = {"data": [pushshift_comment("c1", "t3_p1", None)], "metadata": {}}
    path = write_lines(tmp_path / "answers.ndjson", [posts, comments])
    report = import_files([path], tmp_path / "a.sqlite")
    (f,) = report.files
    assert (f.lines, f.posts, f.comments, f.bad_lines) == (2, 2, 1, 0)


def test_a_saved_error_answer_is_a_failure_that_says_so(tmp_path: Path) -> None:
    path = tmp_path / "answer.json"
    path.write_text(json.dumps({"data": None, "error": "Too many requests"}))
    (f,) = import_files([path], tmp_path / "a.sqlite").files
    assert f.error is not None and "saved error answer" in f.error
    assert "Too many requests" in f.error


def test_garbage_exits_1_with_its_first_reason_said_once(
    tmp_path: Path, settings_env: Path, cli_logs: None
) -> None:
    garbage = tmp_path / "noise.bin"
    garbage.write_bytes(bytes(range(256)) * 8 + b"\nsome prose, not data\n")
    result = runner.invoke(app, ["import", str(garbage), "--no-embed"], catch_exceptions=False)
    assert result.exit_code == 1
    output = result.stdout + result.stderr
    assert output.count("not JSON") == 1, output
    assert f"error: {garbage}: nothing imported: all " in result.stderr
    assert "lines were bad, the first (line 1) because: not JSON" in result.stderr
    assert "failed" in result.stdout  # the table's status


def test_a_text_file_of_prose_fails_with_one_message(
    tmp_path: Path, settings_env: Path, cli_logs: None
) -> None:
    prose = tmp_path / "notes.txt"
    prose.write_text("Dear diary,\nthe weather was fine.\nNothing else happened.\n")
    result = runner.invoke(app, ["import", str(prose), "--no-embed"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr.count(str(prose)) == 1, result.stderr
    assert "3 of its 3 lines were bad, the first (line 1)" in result.stderr


def test_a_partly_bad_file_keeps_its_records_and_says_how_many_were_bad(
    tmp_path: Path, kit: Any, settings_env: Path
) -> None:
    lines = [kit.post("g1"), "{oops", kit.post("g2"), "[1, 2]", "not json", kit.post("g3")]
    path = tmp_path / "RS_part.ndjson"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    archive = tmp_path / "a.sqlite"
    result = runner.invoke(
        app, ["import", str(path), "--archive", str(archive), "--no-embed"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert f"{path}:2: not JSON" in result.stderr  # an example, with its line number
    assert f"{path}: 3 bad lines left out (above); 3 records imported" in result.stderr
    assert sorted(r[0] for r in rows(archive, "SELECT id FROM posts")) == ["g1", "g2", "g3"]


def test_the_file_error_is_printed_once(tmp_path: Path, settings_env: Path, cli_logs: None) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"items": [1, 2]}))
    result = runner.invoke(app, ["import", str(path), "--no-embed"], catch_exceptions=False)
    assert result.exit_code == 1
    assert (result.stdout + result.stderr).count("is JSON, but not a Reddit Listing") == 1
