"""Importing dumps and saved API JSON: eras, bad lines, idempotence, interruption, reports."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from crowdsift.sources.archive import importer, writer
from crowdsift.sources.archive.importer import ImportProgress, import_files
from tests.sources.archive.conftest import stored_records

Dump = Callable[[str, list[Any]], Path]


def rows(archive: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(archive)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def fts_ids(archive: Path, word: str) -> list[str]:
    return [
        r[0]
        for r in rows(
            archive,
            "SELECT p.id FROM posts_fts JOIN posts p ON p.rowid = posts_fts.rowid "
            "WHERE posts_fts MATCH ? ORDER BY p.id",
            word,
        )
    ]


def assert_fts_consistent(archive: Path) -> None:
    """The index holds exactly the table's rows (SQLite checks against the content table)."""
    conn = sqlite3.connect(archive)
    try:
        conn.execute("INSERT INTO posts_fts(posts_fts) VALUES('integrity-check')")
        n_fts = conn.execute("SELECT count(*) FROM posts_fts_docsize").fetchone()[0]
        n_posts = conn.execute("SELECT count(*) FROM posts").fetchone()[0]
    finally:
        conn.close()
    assert n_fts == n_posts


def mixed_era_lines(kit: Any) -> list[Any]:
    return [
        {"_meta": {"dump": "RS_2012-01", "note": "header record"}},
        kit.post("a1", created=1325376000),  # int
        kit.post("a2", created=1325376000.75, extra_field={"nested": [1, 2]}),  # float, extra
        kit.post("a3", created="1325376000", permalink=None),  # string, no permalink
        '{"id": "a4", "subreddit": "Headphones", "title": "emoji \\ud83d\\ude00 sony"}',
        '{"id": "a5", "subreddit": "Headphones", "title": "lone \\ud83d surrogate sony"}',
        "this is not json",
        "[1, 2, 3]",
        "",
        '{"subreddit": "Headphones", "title": "no id"}',
        kit.comment("b1", "a1", parent="a1"),  # bare parent id
        kit.comment("b2", "a1", parent="t1_b1", _meta={"retrieved_2nd_on": 1700000000}),
    ]


def test_mixed_era_dump_is_imported_with_counts_and_bad_lines(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    path = dump("RS_mixed.zst", mixed_era_lines(kit))
    report = import_files([path], archive_path)
    (f,) = report.files
    assert f.format == "ndjson"
    assert (f.lines, f.posts, f.comments, f.skipped, f.bad_lines) == (11, 5, 2, 1, 3)
    assert [(b.line_no, b.reason.split(" (")[0]) for b in f.first_bad_lines] == [
        (7, "not JSON"),
        (8, "not a JSON object"),
        (10, "missing id"),
    ]
    assert report.ok and report.posts == 5 and report.bad_lines == 3
    assert rows(archive_path, "SELECT id, created_utc FROM posts WHERE id IN ('a1','a2','a3')") == [
        ("a1", 1325376000),
        ("a2", 1325376000),
        ("a3", 1325376000),
    ]
    assert rows(archive_path, "SELECT title FROM posts WHERE id IN ('a4','a5') ORDER BY id") == [
        ("emoji 😀 sony",),
        ("lone \ufffd surrogate sony",),
    ]
    assert rows(archive_path, "SELECT id, parent_id FROM comments ORDER BY id") == [
        ("b1", "t3_a1"),
        ("b2", "t1_b1"),
    ]
    assert fts_ids(archive_path, "sony") == ["a4", "a5"]
    assert_fts_consistent(archive_path)


def test_reimport_is_idempotent(dump: Dump, archive_path: Path, kit: Any) -> None:
    path = dump("RS_mixed.zst", mixed_era_lines(kit))
    first = import_files([path], archive_path)
    before = rows(archive_path, "SELECT id, doc FROM posts ORDER BY id")
    second = import_files([path], archive_path)
    assert first.model_dump(exclude={"elapsed_seconds"}) == second.model_dump(
        exclude={"elapsed_seconds"}
    )
    assert rows(archive_path, "SELECT id, doc FROM posts ORDER BY id") == before
    assert rows(archive_path, "SELECT count(*) FROM comments") == [(2,)]
    assert fts_ids(archive_path, "sony") == ["a4", "a5"]
    assert_fts_consistent(archive_path)


def test_newer_record_wins_and_fts_follows_the_update(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    old = kit.post("x", title="original words", retrieved_on=100)
    new = kit.post("x", title="edited phrasing", retrieved_on=200)
    import_files([dump("new.ndjson", [new])], archive_path)
    import_files([dump("old.ndjson", [old])], archive_path)  # older: must not win
    assert fts_ids(archive_path, "edited") == ["x"]
    assert fts_ids(archive_path, "original") == []
    newer = kit.post("x", title="final text", _meta={"retrieved_2nd_on": 300})
    import_files([dump("newer.ndjson", [newer])], archive_path)
    assert fts_ids(archive_path, "final") == ["x"]
    assert fts_ids(archive_path, "edited") == []
    assert rows(archive_path, "SELECT count(*) FROM posts") == [(1,)]
    assert_fts_consistent(archive_path)


def test_same_id_twice_in_one_batch_keeps_one_row(dump: Dump, archive_path: Path, kit: Any) -> None:
    path = dump("dup.ndjson", [kit.post("d", title="first"), kit.post("d", title="second")])
    report = import_files([path], archive_path)
    assert report.posts == 2  # records read
    assert rows(archive_path, "SELECT title FROM posts") == [("second",)]
    assert_fts_consistent(archive_path)


def test_saved_search_listing_is_imported(tmp_path: Path, archive_path: Path, kit: Any) -> None:
    listing = {
        "kind": "Listing",
        "data": {
            "after": None,
            "children": [
                {"kind": "t3", "data": kit.post("s1", title="api sony post")},
                {"kind": "t3", "data": kit.post("s2", title="api other post")},
            ],
        },
    }
    path = tmp_path / "search.json"
    path.write_text(json.dumps(listing, indent=2))
    report = import_files([path], archive_path)
    assert report.files[0].format == "api-json"
    assert (report.posts, report.comments, report.bad_lines) == (2, 0, 0)
    assert fts_ids(archive_path, "sony") == ["s1"]


def test_comments_array_is_flattened_keeping_every_comment(
    tmp_path: Path, archive_path: Path, kit: Any
) -> None:
    def t1(cid: str, parent: str, replies: Any = "") -> dict[str, Any]:
        data = kit.comment(cid, "p", parent=parent, body=f"body {cid}", replies=replies)
        return {"kind": "t1", "data": data}

    def listing(*children: Any) -> dict[str, Any]:
        return {"kind": "Listing", "data": {"children": list(children)}}

    deep = t1("c3", "t1_c2")
    tree = listing(
        t1("c1", "t3_p", replies=listing(t1("c2", "t1_c1", replies=listing(deep)))),
        t1("c4", "t3_p"),
        {"kind": "more", "data": {"id": "m1", "children": ["c9"]}},
        {"kind": "t1", "data": {"id": "bad", "subreddit": "Headphones", "body": "no link"}},
    )
    doc = [listing({"kind": "t3", "data": kit.post("p", title="thread")}), tree]
    path = tmp_path / "comments_p.json"
    path.write_text(json.dumps(doc))  # one minified line, as Reddit sends it
    report = import_files([path], archive_path)
    (f,) = report.files
    assert (f.format, f.posts, f.comments, f.skipped, f.bad_lines) == ("api-json", 1, 4, 1, 1)
    assert f.first_bad_lines[0].line_no == 7
    assert rows(archive_path, "SELECT id, parent_id FROM comments ORDER BY id") == [
        ("c1", "t3_p"),
        ("c2", "t1_c1"),
        ("c3", "t1_c2"),
        ("c4", "t3_p"),
    ]
    assert stored_records(archive_path, "comments")["c1"]["replies"] == ""


def test_ndjson_saved_with_a_json_suffix_is_streamed(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    path = dump("export.json", [kit.post("n1"), kit.post("n2"), "broken"])
    report = import_files([path], archive_path)
    (f,) = report.files
    assert (f.format, f.posts, f.bad_lines) == ("ndjson", 2, 1)
    assert f.first_bad_lines[0].line_no == 3


def test_unknown_json_and_missing_files_fail_alone(
    tmp_path: Path, dump: Dump, archive_path: Path, kit: Any
) -> None:
    error_json = tmp_path / "error.json"
    error_json.write_text('{"message": "Forbidden", "error": 403}')
    broken_json = tmp_path / "broken.json"
    broken_json.write_text('{"kind": "Listing",\n "data": ')
    good = dump("RS_good.ndjson", [kit.post("g1")])
    missing = tmp_path / "RS_missing.zst"
    report = import_files([error_json, missing, broken_json, tmp_path, good], archive_path)
    errors = [f.error for f in report.files]
    assert "a saved error answer, not data (error: 403)" in (errors[0] or "")
    assert "cannot read" in (errors[1] or "") and "RS_missing.zst" in (errors[1] or "")
    assert "is not valid JSON" in (errors[2] or "")
    assert "cannot read" in (errors[3] or "")
    assert errors[4] is None
    assert report.failed_files == 4 and not report.ok
    assert rows(archive_path, "SELECT id FROM posts") == [("g1",)]


def test_truncated_zstd_keeps_what_was_read_and_reports_the_file(
    tmp_path: Path, archive_path: Path, kit: Any
) -> None:
    lines = kit.to_lines([kit.post(f"t{i}", selftext="x" * 200) for i in range(2000)])
    data = zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "RS_cut.zst"
    path.write_bytes(data[: len(data) * 3 // 4])
    report = import_files([path], archive_path)
    (f,) = report.files
    assert f.error is not None and "truncated" in f.error
    assert 0 < f.posts < 2000
    assert rows(archive_path, "SELECT count(*) FROM posts") == [(f.posts,)]


def test_first_bad_lines_are_capped_but_all_are_counted(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    path = dump("RS_bad.ndjson", ["nope"] * 30 + [kit.post("ok")])
    (f,) = import_files([path], archive_path).files
    assert f.bad_lines == 30 and len(f.first_bad_lines) == importer.MAX_BAD_LINES_KEPT
    assert f.first_bad_lines[-1].line_no == importer.MAX_BAD_LINES_KEPT


def test_progress_reports_bytes_and_records_per_batch(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    path = dump("RS_p.zst", [kit.post(f"p{i}") for i in range(10)])
    events: list[ImportProgress] = []
    import_files([path], archive_path, progress=events.append, batch_size=4)
    assert [e.records for e in events] == [4, 8, 10]
    assert all(e.total_bytes == path.stat().st_size for e in events)
    assert events[-1].bytes_read == path.stat().st_size


def test_interrupted_import_leaves_a_consistent_db_and_rerun_completes(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    records = [kit.post(f"p{i}", title=f"sony number {i}") for i in range(10)]
    path = dump("RS_i.ndjson", records)

    def crash_after_first_batch(_event: ImportProgress) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_files([path], archive_path, progress=crash_after_first_batch, batch_size=4)
    assert rows(archive_path, "SELECT count(*) FROM posts") == [(4,)]
    assert len(fts_ids(archive_path, "sony")) == 4
    assert_fts_consistent(archive_path)

    report = import_files([path], archive_path, batch_size=4)
    assert report.posts == 10
    assert len(fts_ids(archive_path, "sony")) == 10
    assert_fts_consistent(archive_path)


def test_failure_inside_a_batch_rolls_the_batch_back(
    dump: Dump, archive_path: Path, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = dump("RS_f.ndjson", [kit.post(f"p{i}", title="sony") for i in range(6)])
    monkeypatch.setattr(writer, "_UPSERT_COMMENTS", "INSERT INTO no_such_table VALUES (?)")
    with_comment = dump("RC_f.ndjson", [kit.post("q"), kit.comment("c", "q")])
    with pytest.raises(sqlite3.OperationalError):
        import_files([path, with_comment], archive_path, batch_size=100)
    # The first file committed; the failed batch (post q + comment c) left nothing behind.
    assert rows(archive_path, "SELECT count(*) FROM posts") == [(6,)]
    assert_fts_consistent(archive_path)


def test_an_existing_foreign_database_is_refused(tmp_path: Path, dump: Dump, kit: Any) -> None:
    foreign = tmp_path / "other.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    from crowdsift.core.errors import ArchiveError

    with pytest.raises(ArchiveError, match="not a crowdsift archive"):
        import_files([dump("RS.ndjson", [kit.post("a")])], foreign)
