"""The comment store on real SQLite and the machine's real PostgreSQL: idempotent upserts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from crowdsift.core.errors import StoreError
from crowdsift.core.models import Comment
from crowdsift.core.store import CommentStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def comment(comment_id: str, post_id: str = "p1", karma: int = 1, body: str = "body") -> Comment:
    return Comment(
        comment_id=comment_id,
        post_id=post_id,
        body=body,
        comment_karma=karma,
        source="archive",
        fetched_at=T0,
    )


def exercise_store(store: CommentStore) -> None:
    assert store.upsert([comment("c1", karma=5), comment("c2", karma=9), comment("c1", "p2")]) == 3
    assert store.count() == 3
    # idempotent: the same records again change nothing
    store.upsert([comment("c1", karma=5), comment("c2", karma=9)])
    assert store.count() == 3
    # an update by key replaces the fields
    store.upsert([comment("c1", karma=50, body="edited")])
    records = store.for_post("p1")
    assert [(c.comment_id, c.comment_karma, c.body) for c in records] == [
        ("c1", 50, "edited"),
        ("c2", 9, "body"),
    ]
    assert all(c.fetched_at == T0 and c.fetched_at.tzinfo is not None for c in records)
    assert [c.comment_id for c in store.for_post("p2")] == ["c1"]
    assert store.for_post("nope") == []
    assert store.upsert([]) == 0


def test_sqlite_store(tmp_path: Path) -> None:
    store = CommentStore.from_url(f"sqlite:///{tmp_path / 'nested' / 'store.sqlite'}")
    try:
        exercise_store(store)
    finally:
        store.close()


def test_sqlite_store_keeps_records_across_reopen_and_normalises_zones(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = CommentStore.from_url(url)
    plus_two = timezone(timedelta(hours=2))
    store.upsert([comment("c1").model_copy(update={"fetched_at": T0.astimezone(plus_two)})])
    store.close()
    reopened = CommentStore.from_url(url)
    try:
        assert reopened.for_post("p1")[0].fetched_at == T0
    finally:
        reopened.close()


@pytest.mark.postgres
def test_postgres_store(postgres_url: str) -> None:
    store = CommentStore.from_url(postgres_url)
    try:
        exercise_store(store)
        many = [comment(f"m{i}", "big") for i in range(1_234)]
        assert store.upsert(many) == 1_234
        assert len(store.for_post("big")) == 1_234
    finally:
        store.close()


def test_unusable_database_url_says_what_to_check() -> None:
    with pytest.raises(StoreError, match="CROWDSIFT_DATABASE_URL"):
        CommentStore.from_url("nosuchdialect://x")


def test_password_never_appears_in_store_errors() -> None:
    with pytest.raises(StoreError) as info:
        CommentStore.from_url("postgresql+psycopg://u:hunter2secret@127.0.0.1:1/db")
    assert "hunter2secret" not in str(info.value)
