"""Dump lines and dump files: ``parse_line`` gives a row, None or a BadRecordError (a typed
ArchiveError); ``import_files`` never raises, keeps every valid record of a file mixing good and
bad lines, counts each bad one, and stores a valid record's fields unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    any_text,
    dump_comments,
    dump_posts,
    dumps,
    examples,
    hostile_json_text,
    mutated,
)

from crowdsift.core.errors import ArchiveError, CrowdsiftError
from crowdsift.sources.archive import db
from crowdsift.sources.archive.codec import text_field, to_json
from crowdsift.sources.archive.importer import MAX_BAD_LINES_KEPT, import_files
from crowdsift.sources.archive.parse import BadRecordError, CommentRow, PostRow, parse_line


def _parse(text: str) -> PostRow | CommentRow | None:
    """``parse_line``, checking its contract: storable rows, or a BadRecordError with a reason."""
    try:
        row = parse_line(text)
    except BadRecordError as exc:
        assert isinstance(exc, ArchiveError) and exc.reason
        return None
    if row is not None:
        assert row.id and row.subreddit == row.subreddit.lower()
        for value in row[1:-1]:
            if isinstance(value, str):
                value.encode("utf-8")  # a lone surrogate here would fail the SQLite insert
        to_json(row.data).decode("utf-8")  # what the archive stores: no lone surrogate
    return row


LINES = st.one_of(
    any_text(),
    hostile_json_text(["id", "subreddit", "title", "body", "link_id", "kind", "data"]),
    dump_posts().flatmap(mutated).map(dumps),
    dump_comments().flatmap(mutated).map(dumps),
    dump_posts().map(lambda p: dumps({"kind": "t3", "data": p})),
)


@examples(300)
@given(text=LINES)
def test_any_line_is_a_row_none_or_a_bad_record(text: str) -> None:
    _parse(text)


def test_a_bad_record_is_a_typed_error() -> None:
    with pytest.raises(CrowdsiftError):
        parse_line("[" * 5000)


# --- whole files through the importer -------------------------------------------------------


def _rows(archive: Path, table: str) -> dict[str, tuple[Any, ...]]:
    """Columns, with the text read back out of each stored (compressed) record."""
    conn = db.open_readonly(archive)
    decode = db.codec_of(conn).decode
    try:
        if table == "posts":
            query = "SELECT id, subreddit, title, doc, score, num_comments, created_utc FROM posts"
            key = "selftext"
        else:
            query = "SELECT id, link_id, parent_id, doc, score, created_utc FROM comments"
            key = "body"
        return {
            row[0]: (*row[:3], text_field(decode(row[3]), key), *row[4:])
            for row in conn.execute(query)
        }
    finally:
        conn.close()


BAD_LINES = st.one_of(
    st.sampled_from(["{not json", "[1, 2]", '"text"', "null", '{"title": "no id"}']),
    hostile_json_text(["id", "title"]).filter(lambda t: not t.lstrip().startswith("{")),
    st.builds(lambda p: dumps({**p, "subreddit": " "}), dump_posts()),
    st.just("[" * 3000 + "]" * 3000),
    st.just('{"id": ' + "9" * 5000 + "}"),
)
"""Lines that can never become a row (not an object, no id, no subreddit, undecodable)."""


def _write(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    if path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor(level=1).compress(data)
    elif path.name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


@examples(40)
@given(
    posts=st.lists(dump_posts(), max_size=6, unique_by=lambda p: p["id"]),
    comments=st.lists(dump_comments(), max_size=6, unique_by=lambda c: c["id"]),
    bad=st.lists(BAD_LINES, max_size=6),
    name=st.sampled_from(["RS_x.ndjson", "RC_x.zst", "RS_x.gz"]),
    order=st.randoms(use_true_random=False),
)
def test_a_dump_keeps_every_valid_record_and_counts_every_bad_line(
    tmp_path: Path,
    posts: list[dict[str, Any]],
    comments: list[dict[str, Any]],
    bad: list[str],
    name: str,
    order: Any,
) -> None:
    lines = [json.dumps(r) for r in posts + comments] + bad
    order.shuffle(lines)
    archive = tmp_path / f"{len(list(tmp_path.iterdir()))}.sqlite"
    report = import_files([_write(tmp_path / name, lines)], archive)
    (file_report,) = report.files
    if posts or comments:
        assert file_report.error is None, file_report.error
    else:  # a file that gives no record is a failure, never an empty success
        assert "nothing imported" in (file_report.error or "")
    assert (file_report.posts, file_report.comments) == (len(posts), len(comments))
    assert file_report.bad_lines == len(bad)
    assert file_report.lines == len(posts) + len(comments) + len(bad)
    assert len(file_report.first_bad_lines) == min(len(bad), MAX_BAD_LINES_KEPT)
    stored_posts, stored_comments = _rows(archive, "posts"), _rows(archive, "comments")
    for post in posts:  # (c) the fields come back as written
        assert stored_posts[post["id"]] == (
            post["id"],
            post["subreddit"].lower(),
            post["title"],
            post["selftext"],
            post["score"],
            post["num_comments"],
            post["created_utc"],
        )
    for comment in comments:
        assert stored_comments[comment["id"]][:4] == (
            comment["id"],
            comment["link_id"][3:],
            comment["parent_id"],
            comment["body"],
        )


@examples(60)
@given(
    content=st.one_of(st.binary(max_size=200), any_text().map(str.encode)),
    name=st.sampled_from(["RS_x.ndjson", "RC_x.zst", "saved.json", "saved.json.zst", "RS_x.xz"]),
)
def test_any_file_gives_a_report_never_an_exception(
    tmp_path: Path, content: bytes, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    report = import_files([path], tmp_path / "archive.sqlite")
    (file_report,) = report.files
    counted = file_report.posts + file_report.comments + file_report.skipped
    assert file_report.lines == counted + file_report.bad_lines
    assert report.failed_files == (file_report.error is not None)


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000,
        b'{"kind": "Listing", "data": {"children": ' + b"[" * 995 + b"]" * 995 + b"}}",
    ],
    ids=["far-too-deep", "just-under-the-limit"],
)
def test_deep_saved_api_json_is_a_file_error_or_imported(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "saved.json"
    path.write_bytes(content)
    report = import_files([path], tmp_path / "archive.sqlite")
    (file_report,) = report.files
    assert file_report.posts == file_report.comments == 0
