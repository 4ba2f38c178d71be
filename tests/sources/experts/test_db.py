"""SqlExpertStore on a real SQLite file and the machine's PostgreSQL: upserts, reads, isolation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy

from crowdsift.core.errors import StoreError
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.models import (
    DriftGroup,
    Expert,
    ExpertComment,
    ExpertPost,
    PostLink,
)
from crowdsift.testing.expert_store import MemoryExpertStore

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def expert(expert_id: str) -> Expert:
    return Expert(expert_id=expert_id, name=expert_id.title(), channel=f"{expert_id}_chan")


def post(expert_id: str, post_id: int, days: int = 0, text: str = "") -> ExpertPost:
    return ExpertPost(
        expert_id=expert_id,
        post_id=post_id,
        text=text or f"{expert_id} post {post_id}",
        date=T0 + timedelta(days=days),
        url=f"https://t.me/{expert_id}_chan/{post_id}",
    )


def link(expert_id: str, source: int, target: int, kind: str = "reply") -> PostLink:
    return PostLink(expert_id=expert_id, source_id=source, target_id=target, kind=kind)  # type:
    # ignore[arg-type]


def comment(expert_id: str, comment_id: int, post_id: int, minutes: int = 0) -> ExpertComment:
    return ExpertComment(
        expert_id=expert_id,
        comment_id=comment_id,
        post_id=post_id,
        author="Reader",
        author_is_expert=comment_id % 2 == 0,
        text=f"{expert_id} comment {comment_id}",
        date=T0 + timedelta(minutes=minutes),
        reply_to_comment_id=comment_id - 1 if comment_id % 3 == 0 else None,
    )


def drift(expert_id: str, group_id: str, days: int) -> DriftGroup:
    return DriftGroup(
        expert_id=expert_id,
        group_id=group_id,
        post_id=1,
        topic=f"topic {group_id}",
        keywords=["nas", "ups"],
        comment_ids=[1, 2],
        date=T0 + timedelta(days=days),
    )


def load(store: SqlExpertStore | MemoryExpertStore, expert_id: str) -> None:
    """Three posts, two links, three comments; ids overlap across experts on purpose."""
    posts = [post(expert_id, 1, 0), post(expert_id, 2, 10), post(expert_id, 3, 20)]
    links = [link(expert_id, 2, 1), link(expert_id, 3, 2, "mention")]
    comments = [comment(expert_id, 7, 1, 5), comment(expert_id, 8, 1, 1), comment(expert_id, 9, 3)]
    if isinstance(store, SqlExpertStore):
        store.write_import(expert(expert_id), posts, links, comments)
    else:
        store.add_expert(expert(expert_id))
        store.add_posts(posts)
        store.add_links(links)
        store.add_comments(comments)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqlExpertStore]:
    store = SqlExpertStore(f"sqlite:///{tmp_path / 'deep' / 'experts.sqlite'}")
    yield store
    store.close()


def exercise(store: SqlExpertStore) -> None:
    load(store, "alpha")
    load(store, "alpha")  # idempotent
    load(store, "beta")
    summaries = {s.expert_id: s for s in store.experts()}
    assert list(summaries) == ["alpha", "beta"]
    assert (summaries["alpha"].posts, summaries["alpha"].comments) == (3, 3)
    assert summaries["alpha"].first_post_at == T0
    assert summaries["alpha"].last_post_at == T0 + timedelta(days=20)
    assert store.get_expert("alpha") == expert("alpha")
    assert store.get_expert("nobody") is None

    assert [p.post_id for p in store.posts("alpha")] == [3, 2, 1]  # newest first
    assert [p.post_id for p in store.posts("alpha", since=T0 + timedelta(days=10))] == [3, 2]
    plus_three = timezone(timedelta(hours=3))
    since = (T0 + timedelta(days=10)).astimezone(plus_three)  # same instant, other zone
    assert [p.post_id for p in store.posts("alpha", since=since)] == [3, 2]
    assert store.posts("alpha")[0].date.tzinfo is not None
    assert [p.post_id for p in store.posts_by_id("alpha", [3, 99, 1])] == [3, 1]
    assert {(k.source_id, k.target_id, k.kind) for k in store.links("alpha", [2])} == {
        (2, 1, "reply"),
        (3, 2, "mention"),
    }
    assert [c.comment_id for c in store.comments("alpha", [1])] == [8, 7]  # oldest first
    assert [c.comment_id for c in store.all_comments("alpha")] == [9, 8, 7]
    assert store.all_comments("alpha")[2].reply_to_comment_id is None
    assert store.comments("alpha", [1])[0].author_is_expert is True

    # updates replace fields by key
    store.upsert_posts([post("alpha", 1, 0, text="edited")])
    assert store.posts_by_id("alpha", [1])[0].text == "edited"
    assert store.posts_by_id("beta", [1])[0].text == "beta post 1"

    # drift groups: replaced wholesale, order kept, since honoured, per expert
    store.replace_drift_groups("alpha", [drift("alpha", "g2", 30), drift("alpha", "g1", 1)])
    store.replace_drift_groups("beta", [drift("beta", "g9", 1)])
    assert [g.group_id for g in store.drift_groups("alpha")] == ["g2", "g1"]
    assert [g.group_id for g in store.drift_groups("alpha", since=T0 + timedelta(days=5))] == ["g2"]
    store.replace_drift_groups("alpha", [drift("alpha", "g3", 2)])
    assert [g.group_id for g in store.drift_groups("alpha")] == ["g3"]
    assert store.drift_groups("alpha")[0].keywords == ["nas", "ups"]
    assert [g.group_id for g in store.drift_groups("beta")] == ["g9"]
    with pytest.raises(ValueError, match="expert 'beta'"):
        store.replace_drift_groups("alpha", [drift("beta", "gx", 1)])


def test_sqlite_store(sqlite_store: SqlExpertStore) -> None:
    exercise(sqlite_store)


@pytest.mark.postgres
def test_postgres_store(postgres_url: str) -> None:
    store = SqlExpertStore(postgres_url)
    try:
        exercise(store)
        many = [post("big", i, i % 50) for i in range(1, 1_235)]
        store.write_import(expert("big"), many, [], [])
        assert len(store.posts("big")) == 1_234
        assert len(store.posts_by_id("big", list(range(1, 1_235)))) == 1_234
    finally:
        store.close()


def test_isolation_two_experts_with_the_same_message_ids(sqlite_store: SqlExpertStore) -> None:
    """Every read for one expert returns only that expert's rows, whatever ids overlap."""
    load(sqlite_store, "alpha")
    load(sqlite_store, "beta")
    sqlite_store.replace_drift_groups("beta", [drift("beta", "g1", 1)])
    ids = [1, 2, 3, 7, 8, 9]
    reads = [
        sqlite_store.posts("alpha"),
        sqlite_store.posts("alpha", since=T0 - timedelta(days=1)),
        sqlite_store.posts_by_id("alpha", ids),
        sqlite_store.links("alpha", ids),
        sqlite_store.comments("alpha", ids),
        sqlite_store.all_comments("alpha"),
        sqlite_store.drift_groups("alpha"),
    ]
    rows = [row for read in reads for row in read]
    assert rows and {row.expert_id for row in rows} == {"alpha"}
    assert all("beta" not in getattr(row, "text", "") for row in rows)
    assert sqlite_store.drift_groups("alpha") == []


def test_reads_match_the_in_memory_store(tmp_path: Path) -> None:
    """The phases are tested on MemoryExpertStore; the real store must answer the same (with
    names kept: how commenters are pseudonymised is tested in tests/privacy/test_privacy.py)."""
    kept = AuthorPolicy(b"k" * 32, keep_usernames=True)
    sqlite_store = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.sqlite'}", authors=kept)
    memory = MemoryExpertStore()
    for store in (sqlite_store, memory):
        load(store, "alpha")
        load(store, "beta")
    assert sqlite_store.experts() == memory.experts()
    assert sqlite_store.posts("alpha") == memory.posts("alpha")
    assert sqlite_store.posts_by_id("beta", [3, 1]) == memory.posts_by_id("beta", [3, 1])
    assert sqlite_store.comments("alpha", [1, 3]) == memory.comments("alpha", [1, 3])
    assert sqlite_store.all_comments("beta") == memory.all_comments("beta")
    assert sorted(sqlite_store.links("alpha", [1]), key=str) == sorted(
        memory.links("alpha", [1]), key=str
    )
    sqlite_store.close()


def test_large_id_lists_are_chunked(sqlite_store: SqlExpertStore) -> None:
    posts = [post("alpha", i) for i in range(1, 2_001)]
    links = [link("alpha", i + 1, i) for i in range(1, 2_000)]
    sqlite_store.write_import(expert("alpha"), posts, links, [])
    wanted = list(range(2_000, 0, -1))
    assert [p.post_id for p in sqlite_store.posts_by_id("alpha", wanted)] == wanted
    assert len(sqlite_store.links("alpha", wanted)) == 1_999  # no duplicates across chunks


def test_a_write_for_the_wrong_expert_is_refused_and_nothing_is_written(
    sqlite_store: SqlExpertStore,
) -> None:
    with pytest.raises(ValueError, match="expert 'beta' was written as expert 'alpha'"):
        sqlite_store.write_import(expert("alpha"), [post("alpha", 1), post("beta", 2)], [], [])
    assert sqlite_store.experts() == []


def test_a_failed_import_leaves_the_previous_state(sqlite_store: SqlExpertStore) -> None:
    load(sqlite_store, "alpha")
    with sqlite_store.engine.begin() as conn:  # sabotage: comments can no longer be written
        conn.execute(sqlalchemy.text("DROP TABLE expert_comments"))
    with pytest.raises(StoreError, match="importing expert alpha"):
        sqlite_store.write_import(
            expert("alpha"), [post("alpha", 50)], [], [comment("alpha", 1, 50)]
        )
    assert [p.post_id for p in sqlite_store.posts("alpha")] == [3, 2, 1]


def test_digest_is_kept_per_expert(sqlite_store: SqlExpertStore) -> None:
    sqlite_store.upsert_expert(expert("alpha"), digest="abc")
    sqlite_store.upsert_expert(expert("beta"))
    assert sqlite_store.source_digest("alpha") == "abc"
    assert sqlite_store.source_digest("beta") is None
    assert sqlite_store.source_digest("nobody") is None


def test_unsupported_or_unusable_databases_are_store_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        SqlExpertStore(f"sqlite:///{blocker / 'sub' / 'db.sqlite'}")
    with pytest.raises(StoreError, match="SQLite and PostgreSQL"):
        SqlExpertStore(sqlalchemy.create_mock_engine("mysql://", print))  # type: ignore[arg-type]
