"""The compressed archive: every record round-trips, comments are searchable and stay indexed
in step through updates and deletes, and old archives are refused with what to run, then
migrated in place."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from crowdsift.cli.archive import app
from crowdsift.core.errors import ArchiveError
from crowdsift.core.privacy import AuthorPolicy, is_person
from crowdsift.core.pseudonymize import scrub_reddit
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.migrate import migrate_archive
from crowdsift.sources.archive.scrub import scrub_data
from crowdsift.sources.archive.source import ArchiveSource
from tests.sources.archive.conftest import stored_records

Dump = Callable[[str, list[Any]], Path]
KEEP = AuthorPolicy(b"k" * 32, keep_usernames=True)
HASH = AuthorPolicy(b"h" * 32)
WORDS = ("the", "battery", "sony", "bose", "anc", "case", "fit", "clamp", "firmware", "app",
         "eq", "volume", "ear", "pad")  # fmt: skip


def full_records(count: int, seed: int = 3) -> list[dict[str, Any]]:
    """Dump-shaped records with full field sets: nested objects, nulls, floats, unicode,
    crossposts naming other people, a few deleted authors."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    for i in range(count):
        text = " ".join(rng.choices(WORDS, k=rng.randrange(3, 40))) + " ünïcode 😀"
        author = "[deleted]" if i % 17 == 0 else f"user_{rng.randrange(500)}"
        base: dict[str, Any] = {
            "id": f"r{i:05d}",
            "subreddit": "Headphones",
            "subreddit_id": "t5_2qh1c",
            "author": author,
            "author_fullname": f"t2_{rng.randrange(10**8):x}",
            "author_flair_richtext": [{"e": "text", "t": "Sony"}] if i % 5 == 0 else [],
            "created_utc": 1_650_000_000 + i * 37,
            "retrieved_on": 1_650_100_000 + i,
            "score": rng.randrange(-5, 900),
            "gildings": {"gid_1": 1} if i % 11 == 0 else {},
            "edited": 1_650_000_500.5 if i % 7 == 0 else False,
            "distinguished": None,
            "upvote_ratio": round(rng.random(), 2),
        }
        if i % 4 == 0:
            base.update(
                title=f"Thread {i}: " + " ".join(rng.choices(WORDS, k=8)),
                selftext=text,
                num_comments=rng.randrange(50),
                permalink=f"/r/Headphones/comments/r{i:05d}/slug/",
                media_embed={},
                crosspost_parent_list=(
                    [{"author": "someone_else", "author_fullname": "t2_x", "title": "x"}]
                    if i % 8 == 0
                    else []
                ),
            )
        else:
            link = f"r{(i // 4) * 4:05d}"
            base.update(
                body=text,
                link_id=f"t3_{link}",
                parent_id=f"t3_{link}",
                controversiality=0,
                approved_by="a_moderator" if i % 13 == 0 else None,
            )
        records.append(base)
    return records


def scrubbed(record: dict[str, Any], policy: AuthorPolicy) -> dict[str, Any]:
    """What the archive may keep of ``record`` under a hashing policy: no name, anywhere."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        name = out.get("author")
        if isinstance(name, str) and is_person(name):
            out["author"], out["author_hash"] = None, policy.hash(name)
        for key in ("author_fullname", "approved_by"):
            if isinstance(out.get(key), str):
                out[key] = None
        return out

    result: dict[str, Any] = walk(record)
    return result


def split(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [r for r in records if "title" in r], [r for r in records if "title" not in r]


@pytest.mark.parametrize("workers", [0, 1])
def test_every_record_comes_back_as_imported(dump: Dump, archive_path: Path, workers: int) -> None:
    records = full_records(800)
    posts, comments = split(records)
    files = [dump("RS_full.zst", posts), dump("RC_full.zst", comments)]
    report = import_files(files, archive_path, authors=KEEP, workers=workers, parallel_min_bytes=0)
    assert (report.posts, report.comments) == (len(posts), len(comments))
    assert stored_records(archive_path, "posts") == {r["id"]: r for r in posts}
    assert stored_records(archive_path, "comments") == {r["id"]: r for r in comments}
    conn = sqlite3.connect(archive_path)
    assert conn.execute("SELECT count(*) FROM zstd_dicts").fetchone() == (1,)  # trained
    conn.close()


def test_records_come_back_without_names_when_usernames_are_hashed(
    dump: Dump, archive_path: Path
) -> None:
    records = full_records(400)
    posts, comments = split(records)
    import_files([dump("RS.zst", posts), dump("RC.ndjson", comments)], archive_path, authors=HASH)
    assert stored_records(archive_path, "posts") == {r["id"]: scrubbed(r, HASH) for r in posts}
    assert stored_records(archive_path, "comments") == {
        r["id"]: scrubbed(r, HASH) for r in comments
    }
    assert b"user_" not in archive_path.read_bytes()  # not even compressed away by luck


def test_a_lone_surrogate_is_stored_replaced(dump: Dump, archive_path: Path) -> None:
    line = '{"id": "s1", "subreddit": "x", "title": "bad \\ud83d end", "selftext": "ok"}'
    import_files([dump("RS.ndjson", [line])], archive_path, authors=KEEP)
    assert stored_records(archive_path, "posts")["s1"]["title"] == "bad \ufffd end"


def test_an_integer_past_64_bits_in_saved_api_json_is_stored_as_written(
    tmp_path: Path, archive_path: Path
) -> None:
    """orjson writes no integer past 64 bits: such a record is written by the stdlib."""
    thing = {"id": "b1", "subreddit": "x", "title": "t", "gilded": 10**30}
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"kind": "Listing", "data": {"children": [
        {"kind": "t3", "data": thing}]}}))  # fmt: skip
    report = import_files([saved], archive_path, authors=KEEP)
    assert report.posts == 1, report
    assert stored_records(archive_path, "posts")["b1"]["gilded"] == 10**30


def comment_only_archive(dump: Dump, archive_path: Path, kit: Any) -> Path:
    posts = [
        kit.post("p1", title="Which headphones for flights?", selftext="long haul next month"),
        kit.post("p2", title="Sony battery", selftext="the battery question again"),
    ]
    comments = [
        kit.comment("c1", "p1", body="Get the Bose QuietComfort, the anc is unmatched"),
        kit.comment("c2", "p2", body="battery is fine"),
    ]
    import_files([dump("RS.zst", posts), dump("RC.zst", comments)], archive_path)
    return archive_path


def test_a_thread_is_found_through_a_comment_that_answers_it(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    comment_only_archive(dump, archive_path, kit)
    with ArchiveSource(archive_path, clock=kit.clock) as source:
        page = source.search_subreddit("headphones", "quietcomfort")
        assert [p["id"] for p in page.posts] == ["p1"]  # title and selftext do not match
        assert [p["id"] for p in source.search_subreddit("headphones", "bose anc").posts] == ["p1"]
        # a post matching in its own text ranks before one matched only through a comment
        ranked = source.search_subreddit("headphones", "battery OR anc").posts
        assert [p["id"] for p in ranked] == ["p2", "p1"]
        assert source.search_subreddit("headphones", '"quietcomfort anc"').posts[0]["id"] == "p1"


def test_comment_index_follows_updates_and_deletes(
    dump: Dump, archive_path: Path, kit: Any
) -> None:
    comment_only_archive(dump, archive_path, kit)
    newer = kit.comment("c1", "p1", body="Sennheiser Momentum instead", retrieved_on=10**10)
    import_files([dump("RC_newer.ndjson", [newer])], archive_path)
    with ArchiveSource(archive_path, clock=kit.clock) as source:
        assert source.search_subreddit("headphones", "quietcomfort").posts == []
        assert [p["id"] for p in source.search_subreddit("headphones", "sennheiser").posts] == [
            "p1"
        ]
    conn = db.connect(archive_path)  # as `archive purge-deleted` deletes
    conn.execute("DELETE FROM comments WHERE id = 'c1'")
    conn.execute("INSERT INTO comments_fts (comments_fts) VALUES ('integrity-check')")
    conn.execute("INSERT INTO posts_fts (posts_fts) VALUES ('integrity-check')")
    conn.close()
    with ArchiveSource(archive_path, clock=kit.clock) as source:
        assert source.search_subreddit("headphones", "sennheiser").posts == []


def old_archive(path: Path, posts: list[dict[str, Any]], comments: list[dict[str, Any]]) -> Path:
    """An archive as crowdsift wrote it before compression: schema 2, raw JSON rows."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA application_id = {db.APPLICATION_ID}")
    for step, script in enumerate(db.MIGRATIONS):
        conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {step + 1};\nCOMMIT;")
    conn.execute("INSERT INTO meta VALUES ('demo_content_hash', 'abc')")
    for r in posts:
        conn.execute(
            "INSERT INTO posts VALUES (?, ?, NULL, ?, ?, ?, ?, ?, 0, ?, ?)",
            (r["id"], r["subreddit"].lower(), r["title"], r["selftext"], r["score"],
             r["num_comments"], r["created_utc"], json.dumps(r), r.get("author_hash")),
        )  # fmt: skip
    for r in comments:
        conn.execute(
            "INSERT INTO comments VALUES (?, ?, ?, ?, NULL, ?, ?, ?, 0, ?, ?)",
            (r["id"], r["link_id"][3:], r["parent_id"], r["subreddit"].lower(), r["body"],
             r["score"], r["created_utc"], json.dumps(r), r.get("author_hash")),
        )  # fmt: skip
    conn.execute(
        "INSERT INTO posts_fts (rowid, title, selftext, subreddit) "
        "SELECT rowid, title, selftext, subreddit FROM posts"
    )
    conn.close()
    return path


def test_an_old_archive_is_refused_with_what_to_run_then_migrated_in_place(
    tmp_path: Path, kit: Any, settings_env: Path
) -> None:
    posts, comments = split([scrubbed(r, HASH) for r in full_records(120)])
    path = old_archive(tmp_path / "old.sqlite", posts, comments)
    for opener in (ArchiveSource, db.connect):
        with pytest.raises(ArchiveError, match="run `crowdsift archive migrate --archive"):
            opener(path)

    result = CliRunner().invoke(app, ["migrate", "--archive", str(path)], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "comments 90 of 90 (100%)" in result.stderr  # progress on stderr
    assert "migrated" in result.stdout
    assert stored_records(path, "posts") == {r["id"]: r for r in posts}
    assert stored_records(path, "comments") == {r["id"]: r for r in comments}
    conn = db.open_readonly(path)
    assert db.get_meta(conn, "demo_content_hash") == "abc"
    hashes = dict(conn.execute("SELECT id, author_hash FROM comments").fetchall())
    conn.close()
    assert hashes == {r["id"]: r.get("author_hash") for r in comments}  # pseudonyms kept
    word = comments[0]["body"].split()[0]
    with ArchiveSource(path, clock=kit.clock) as source:  # comments searchable now
        assert source.search_subreddit("headphones", word).posts
    again = migrate_archive(path)
    assert not again.migrated and again.from_version == db.SCHEMA_VERSION
    assert not list(tmp_path.glob(".old.sqlite.migrating*"))


_KEYS = st.sampled_from(
    ["author", "author_fullname", "approved_by", "banned_by", "link_author", "title", "x"]
)
_VALUES = st.recursive(
    st.none() | st.integers() | st.sampled_from(["u1", "[deleted]", "AutoModerator", "author"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(record=st.dictionaries(_KEYS, _VALUES, max_size=6), spaced=st.booleans())
def test_record_scrub_equals_the_raw_json_scrub(record: dict[str, Any], spaced: bool) -> None:
    """What the archive stores of a record has no more names than ``scrub_reddit`` leaves in
    its JSON, and no fewer: on the fast path (line at hand) and the walk alike."""
    line = json.dumps(record, separators=(", ", ": ") if spaced else (",", ":"))
    expected = json.loads(scrub_reddit(line, HASH))
    author = record.get("author") if isinstance(record.get("author"), str) else None
    digest = HASH.hash(author) if is_person(author) else None
    for hint in (line, line.encode(), ""):
        data = json.loads(line)
        scrub_data(data, HASH, author, digest, hint)
        assert data == expected
