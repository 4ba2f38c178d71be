"""``crowdsift archive purge-deleted`` against the local Reddit and Arctic Shift servers.

The stores are real (an imported archive, the SQLite comment store, a persistent Chroma index
built by ``crowdsift index``); the servers hold the posts' *current* state: some still live,
some removed by moderators, deleted by their authors, or gone.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings
from typer.testing import CliRunner, Result

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import HttpStatusError, SourceError
from crowdsift.core.models import Comment, FetchResult
from crowdsift.core.source import RawThing
from crowdsift.core.store import CommentStore
from crowdsift.feed.retriever import SLOT_KEY, FeedRetriever
from crowdsift.feed.slots import SlotTable
from crowdsift.service.purge import Verdict, run_purge, verdict
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.reddit.lookup import RedditInfoLookup
from crowdsift.testing.factories import make_post
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.reddit_server import RedditProtocolServer

NOW_TS = 1_717_243_200
runner = CliRunner()


def invoke(*args: str, code: int = 0) -> Result:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def raw_post(post_id: str, **changes: Any) -> dict[str, Any]:
    record = {
        "id": post_id, "subreddit": "gadgets", "author": f"author_{post_id}",
        "title": f"Voice recorder thread {post_id}",
        "selftext": f"Long enough body about recorders, marker word{post_id} inside it.",
        "score": 3, "num_comments": 1, "created_utc": NOW_TS,
        "permalink": f"/r/gadgets/comments/{post_id}/thread/", "is_self": True, "over_18": False,
    }  # fmt: skip
    record.update(changes)
    return record


def raw_comment(post_id: str) -> dict[str, Any]:
    return {"id": f"c{post_id}", "link_id": f"t3_{post_id}", "parent_id": f"t3_{post_id}",
            "subreddit": "gadgets", "author": "commenter", "score": 1, "created_utc": NOW_TS,
            "body": f"A comment long enough on {post_id}."}  # fmt: skip


REMOVED = {"removed_by_category": "moderator", "selftext": "[removed]"}
DELETED = {"author": "[deleted]", "selftext": "[deleted]"}


def build_archive(path: Path, ids: Sequence[str]) -> Path:
    dump = path.with_suffix(".ndjson")
    records = [raw_post(i) for i in ids] + [raw_comment(i) for i in ids]
    dump.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert import_files([dump], path).ok
    return path


def archive_state(path: Path) -> tuple[list[str], list[str], list[int]]:
    """Post ids, comment post ids, FTS hits for word 'worda2'."""
    conn = sqlite3.connect(path)
    try:
        posts = [r[0] for r in conn.execute("SELECT id FROM posts ORDER BY id")]
        comments = [r[0] for r in conn.execute("SELECT link_id FROM comments ORDER BY link_id")]
        hits = [
            r[0] for r in conn.execute("SELECT rowid FROM posts_fts WHERE posts_fts MATCH 'worda2'")
        ]
    finally:
        conn.close()
    return posts, comments, hits


@pytest.fixture
def reddit(monkeypatch: pytest.MonkeyPatch) -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer() as server:
        for name, value in {
            "REDDIT_CLIENT_ID": server.client_id, "REDDIT_CLIENT_SECRET": "test-secret",
            "REDDIT_API_BASE_URL": server.base_url, "REDDIT_AUTH_URL": server.auth_url,
            "CROWDSIFT_FEED_EMBEDDER": "hashing",
        }.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        yield server


@pytest.fixture
def stores(isolated_environment: Path, tmp_path: Path, reddit: RedditProtocolServer) -> Path:
    """Archive a1-a5; comment store rows for a1, a2 and live-fetched r1; an index of the
    archive plus r1, r2 (fetched from Reddit) and d1 (from some other archive, e.g. the demo).
    Reddit now: a1, a5, r2 live; a2, r1 removed; a3 deleted; a4 gone."""
    archive = build_archive(tmp_path / "archive.sqlite", ["a1", "a2", "a3", "a4", "a5"])
    reddit.add_posts("gadgets", [raw_post("a1"), raw_post("a2", **REMOVED),
                                 raw_post("a3", **DELETED), raw_post("a5"),
                                 raw_post("r1", **REMOVED), raw_post("r2")])  # fmt: skip
    store = CommentStore.from_url(Settings().resolved_database_url)
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    store.upsert(
        Comment(comment_id=f"c{pid}", post_id=pid, body="a stored comment", comment_karma=1,
                source=source, fetched_at=stamp)
        for pid, source in (("a1", "archive"), ("a2", "archive"), ("r1", "reddit-api"))
    )  # fmt: skip
    store.close()
    invoke("index", "--archive", str(archive), "--json")
    live = [make_post(i, f"Fetched thread {i}", "body").model_copy(update={"source": "reddit-api"})
            for i in ("r1", "r2")] + [make_post("d1", "Demo thread", "made-up body")]  # fmt: skip
    result = FetchResult(query="q", plan_id=UUID(int=1), search_terms=["x"], subreddits=["gadgets"],
                         fetched_at=stamp, posts=live)  # fmt: skip
    (tmp_path / "fetched.json").write_text(result.model_dump_json())
    invoke("index", str(tmp_path / "fetched.json"), "--json")
    return archive


def open_index(home: Path) -> tuple[Any, FeedRetriever]:
    client = chromadb.PersistentClient(
        path=str(home / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    main = client.get_collection("crowdsift_posts")
    return main, FeedRetriever(main, slots=client.get_collection("crowdsift_posts_slots"))


def index_slots(home: Path) -> dict[str, int]:
    main, _ = open_index(home)
    found = main.get(include=["metadatas"])
    return {
        i: (m or {})[SLOT_KEY] for i, m in zip(found["ids"], found["metadatas"] or [], strict=True)
    }


def store_posts() -> list[str]:
    store = CommentStore.from_url(Settings().resolved_database_url)
    try:
        return sorted(c.post_id for pid in ("a1", "a2", "r1") for c in store.for_post(pid))
    finally:
        store.close()


def test_verdicts_follow_reddits_markers() -> None:
    assert verdict(None) is Verdict.MISSING
    assert verdict(raw_post("x")) is Verdict.LIVE
    assert verdict(raw_post("x", **REMOVED)) is Verdict.REMOVED
    assert verdict(raw_post("x", removed_by_category="reddit")) is Verdict.REMOVED
    assert verdict(raw_post("x", **DELETED)) is Verdict.DELETED
    assert verdict(raw_post("x", author="[deleted]")) is Verdict.DELETED


def test_dry_run_lists_and_changes_nothing(stores: Path, isolated_environment: Path) -> None:
    before = (archive_state(stores), store_posts(), index_slots(isolated_environment))

    result = invoke("archive", "purge-deleted", "--archive", str(stores), "--dry-run")

    lines = result.stdout.splitlines()
    assert sorted(line for line in lines if line.startswith("would purge")) == [
        "would purge a2 (r/gadgets): removed", "would purge a3 (r/gadgets): deleted",
        "would purge a4 (r/gadgets): missing", "would purge r1 (r/gadgets): removed",
    ]  # fmt: skip
    assert "checked 7 posts at reddit-api: 3 live, 1 deleted, 2 removed, 1 missing" in lines
    assert (archive_state(stores), store_posts(), index_slots(isolated_environment)) == before


def test_purge_removes_posts_everywhere_keeps_slots_dense_and_reruns_clean(
    stores: Path, isolated_environment: Path, reddit: RedditProtocolServer
) -> None:
    reddit.reset_log()
    result = invoke("archive", "purge-deleted", "--archive", str(stores), "--json")

    report = json.loads(result.stdout)
    assert sorted(p["id"] for p in report["posts"]) == ["a2", "a3", "a4", "r1"]
    assert (report["archive_posts"], report["archive_comments"]) == (3, 3)
    assert (report["comment_store_rows"], report["index_posts"]) == (2, 4)
    assert archive_state(stores) == (["a1", "a5"], ["a1", "a5"], [])  # FTS forgot a2 too
    assert store_posts() == ["a1"]
    slots = index_slots(isolated_environment)
    assert sorted(slots) == ["a1", "a5", "d1", "r2"] and sorted(slots.values()) == [0, 1, 2, 3]
    _, retriever = open_index(isolated_environment)
    feed = retriever.get_feed(mode="random", size=4)
    assert sorted(p.id for p in feed) == ["a1", "a5", "d1", "r2"]
    asked = {i for r in reddit.requests if r.path == "/api/info" for i in r.params["id"].split(",")}
    assert "t3_d1" not in asked  # another archive's post is never "missing" from Reddit

    again = json.loads(
        invoke("archive", "purge-deleted", "--archive", str(stores), "--json").stdout
    )
    assert again["checked"] == 3 and again["posts"] == [] and again["verdicts"] == {"live": 3}


def test_an_interrupted_purge_is_finished_by_the_next_run(
    tmp_path: Path, reddit: RedditProtocolServer, isolated_environment: Path
) -> None:
    ids = [f"b{n:03d}" for n in range(150)]
    archive = build_archive(tmp_path / "big.sqlite", ids)
    gone = {"b005", "b120", "b149"}
    reddit.add_posts("gadgets", [raw_post(i, **REMOVED) if i in gone else raw_post(i)
                                 for i in ids])  # fmt: skip
    settings = Settings()

    class CrashAfterOneBatch:
        name = "reddit-api"
        missing_means_gone = True

        def __init__(self) -> None:
            self.real = RedditInfoLookup.from_settings(settings)
            self.calls = 0

        def posts(self, post_ids: Sequence[str]) -> dict[str, RawThing]:
            self.calls += 1
            if self.calls > 1:
                raise SourceError("connection lost")
            return self.real.posts(post_ids)

        def close(self) -> None:
            self.real.close()

    with pytest.raises(SourceError):
        run_purge(settings, archive=archive, lookup=CrashAfterOneBatch())  # type: ignore[arg-type]
    assert len(archive_state(archive)[0]) == 149  # the first batch's removal was committed

    report = run_purge(settings, archive=archive, source="reddit-api")
    assert [p.id for p in report.posts] == ["b120", "b149"] and report.checked == 149
    posts, comments, _ = archive_state(archive)
    assert len(posts) == 147 and not gone & set(posts) and not gone & set(comments)


def test_arctic_shift_purges_removals_it_knows_and_keeps_posts_it_lacks(
    tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = build_archive(tmp_path / "archive.sqlite", ["a1", "a2", "a4"])
    with ArcticShiftServer() as arctic:
        arctic.add_posts("gadgets", [raw_post("a1"), raw_post("a2", **REMOVED)])
        monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", arctic.base_url)
        get_settings.cache_clear()
        result = invoke("archive", "purge-deleted", "--archive", str(archive),
                        "--source", "arctic-shift")  # fmt: skip
        assert [r.params["ids"] for r in arctic.requests] == ["a1,a2,a4"]
    assert "purged a2 (r/gadgets): removed" in result.stdout
    assert "kept 1 posts arctic-shift does not hold" in result.stdout
    assert archive_state(archive)[0] == ["a1", "a4"]


def test_missing_archive_and_unknown_source_are_one_line_errors(tmp_path: Path) -> None:
    missing = invoke("archive", "purge-deleted", "--archive", str(tmp_path / "no.sqlite"),
                     "--source", "arctic-shift", code=1)  # fmt: skip
    assert missing.stderr.startswith("error: archive ") and missing.stderr.count("\n") == 1
    bad = invoke("archive", "purge-deleted", "--source", "pushshift", code=2)
    assert "use reddit-api or arctic-shift" in bad.stderr


def test_info_endpoint_and_lookup_hold_reddits_limit_of_100(reddit: RedditProtocolServer) -> None:
    reddit.add_posts("gadgets", [raw_post("a1")])
    lookup = RedditInfoLookup.from_settings(Settings())
    try:
        assert list(lookup.posts(["t3_a1", "zz"])) == ["a1"]
        with pytest.raises(ValueError, match="at most 100"):
            lookup.posts([f"p{n}" for n in range(101)])
        with pytest.raises(HttpStatusError):
            lookup.transport.get_json("/api/info", {"id": ",".join(f"t3_p{n}" for n in range(101))})
    finally:
        lookup.close()


@pytest.mark.parametrize("with_table", [True, False])
def test_remove_posts_refills_freed_slots_from_the_top(tmp_path: Path, with_table: bool) -> None:
    client = chromadb.PersistentClient(
        path=str(tmp_path / "c"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    main = client.get_or_create_collection("posts", embedding_function=None)
    slots = client.get_or_create_collection("posts_slots") if with_table else None
    retriever = FeedRetriever(main, slots=slots)
    posts = [make_post(f"p{n}", f"title {n}") for n in range(6)]
    vectors = np.eye(6, 3, dtype=np.float32) + 0.1
    for post, vector in zip(posts, vectors, strict=True):
        meta = {**post.to_metadata(), SLOT_KEY: int(post.id[1:])}
        main.add(ids=[post.id], embeddings=[vector], metadatas=[meta], documents=[post.text])
    if slots is not None:
        SlotTable(slots).assign({n: f"p{n}" for n in range(6)}, 6)

    assert retriever.remove_posts(["p1", "p4", "nope", "p1"]) == 2

    found = main.get(include=["metadatas"])
    placed = {
        i: (m or {})[SLOT_KEY] for i, m in zip(found["ids"], found["metadatas"] or [], strict=True)
    }
    assert placed == {"p0": 0, "p5": 1, "p2": 2, "p3": 3}
    if slots is not None:
        table = SlotTable(slots)
        assert table.size() == 4 and table.lookup([0, 1, 2, 3, 4, 5]) == {
            0: "p0", 1: "p5", 2: "p2", 3: "p3"
        }  # fmt: skip
    assert sorted(p.id for p in retriever.get_feed(mode="random", size=4)) == [
        "p0",
        "p2",
        "p3",
        "p5",
    ]
    assert retriever.remove_posts([]) == 0 and retriever.remove_posts(["p1"]) == 0
    client.delete_collection("posts")


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_comment_store_lists_live_source_posts_and_deletes_by_post(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'store.sqlite'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    store = CommentStore.from_url(url)
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        store.upsert(
            Comment(comment_id=f"c{n}", post_id=pid, body="a stored comment", comment_karma=n,
                    source=source, fetched_at=stamp)
            for n, (pid, source) in enumerate([("p1", "reddit-api"), ("p1", "reddit-api"),
                                               ("p2", "arctic-shift"), ("p3", "archive")])
        )  # fmt: skip
        assert store.post_ids(sources=("reddit-api", "arctic-shift")) == ["p1", "p2"]
        assert store.delete_posts(["p1", "p3", "p1", "nope"]) == 3
        assert [c.comment_id for c in store.for_post("p2")] == ["c2"] and store.count() == 1
        assert store.delete_posts([]) == 0
    finally:
        store.close()
