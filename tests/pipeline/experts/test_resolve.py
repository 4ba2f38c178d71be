"""Phase 3, resolve: depth-1 links in both directions, recent-only, no duplicates, isolation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from crowdsift.pipeline.experts.resolve import resolve
from crowdsift.sources.experts.models import (
    Expert,
    ExpertPost,
    LinkKind,
    PostLink,
    Relevance,
    ScoredPost,
)
from crowdsift.testing.expert_store import MemoryExpertStore

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _rs_post(post_id: int, expert_id: str = "alpha") -> ExpertPost:
    return ExpertPost(
        expert_id=expert_id, post_id=post_id, text=f"{expert_id} post {post_id}",
        date=T0 + timedelta(days=post_id), url=f"https://t.me/{expert_id}_ch/{post_id}",
    )  # fmt: skip


def _rs_link(
    source: int, target: int, kind: LinkKind = "reply", expert_id: str = "alpha"
) -> PostLink:
    return PostLink(expert_id=expert_id, source_id=source, target_id=target, kind=kind)


def _rs_high(store: MemoryExpertStore, *post_ids: int) -> list[ScoredPost]:
    return [
        ScoredPost(post=post, relevance=Relevance.HIGH)
        for post in store.posts_by_id("alpha", list(post_ids))
    ]


@pytest.fixture
def rs_store() -> MemoryExpertStore:
    """alpha: 2 replies to 1, 3 replies to 2, 4 mentions 2, 5 forwards 6, 7 replies to 3,
    8 links to a deleted post 99. beta has the same post ids and a link 2 → 9 of its own."""
    store = MemoryExpertStore()
    for expert_id in ("alpha", "beta"):
        store.add_expert(Expert(expert_id=expert_id, name=expert_id, channel=f"{expert_id}_ch"))
    store.add_posts(_rs_post(pid) for pid in range(1, 11))
    store.add_posts(_rs_post(pid, "beta") for pid in range(1, 11))
    store.add_links([
        _rs_link(2, 1), _rs_link(3, 2), _rs_link(4, 2, "mention"), _rs_link(5, 6, "forward"),
        _rs_link(7, 3), _rs_link(8, 99, "mention"), _rs_link(2, 9, expert_id="beta"),
    ])  # fmt: skip
    return store


def _ids(posts: Sequence[ScoredPost]) -> list[tuple[int, str]]:
    return [(p.post.post_id, p.relevance.value) for p in posts]


def test_links_are_followed_in_both_directions(rs_store: MemoryExpertStore) -> None:
    resolved = resolve("alpha", _rs_high(rs_store, 2), rs_store)
    assert _ids(resolved) == [(2, "HIGH"), (1, "CONTEXT"), (3, "CONTEXT"), (4, "CONTEXT")]
    reasons = {p.post.post_id: p.reason for p in resolved}
    assert reasons[1] == "replied to by [post:2]"  # 2 is the source: 1 is its target
    assert reasons[3] == "reply to [post:2]"  # 2 is the target: 3 is the source
    assert reasons[4] == "mentions [post:2]"
    assert all(p.post.expert_id == "alpha" for p in resolved)


def test_a_target_only_high_post_gets_its_source(rs_store: MemoryExpertStore) -> None:
    assert _ids(resolve("alpha", _rs_high(rs_store, 6), rs_store)) == [(6, "HIGH"), (5, "CONTEXT")]
    assert _ids(resolve("alpha", _rs_high(rs_store, 5), rs_store)) == [(5, "HIGH"), (6, "CONTEXT")]


def test_depth_is_one(rs_store: MemoryExpertStore) -> None:
    resolved = resolve("alpha", _rs_high(rs_store, 1), rs_store)
    assert _ids(resolved) == [(1, "HIGH"), (2, "CONTEXT")]  # not 3 or 4, which link to 2


def test_a_linked_post_that_is_high_stays_high_once(rs_store: MemoryExpertStore) -> None:
    resolved = resolve("alpha", _rs_high(rs_store, 2, 3, 2), rs_store)
    assert _ids(resolved) == [
        (2, "HIGH"), (3, "HIGH"), (1, "CONTEXT"), (4, "CONTEXT"), (7, "CONTEXT"),
    ]  # fmt: skip


def test_two_high_posts_sharing_a_neighbour_bring_it_once(rs_store: MemoryExpertStore) -> None:
    resolved = resolve("alpha", _rs_high(rs_store, 3, 4), rs_store)
    assert _ids(resolved) == [(3, "HIGH"), (4, "HIGH"), (2, "CONTEXT"), (7, "CONTEXT")]
    assert resolved[2].reason == "replied to by [post:3]"  # the first HIGH post's link names it


def test_recent_only_drops_old_linked_posts(rs_store: MemoryExpertStore) -> None:
    since = T0 + timedelta(days=3)  # posts 1 and 2 are older
    resolved = resolve("alpha", _rs_high(rs_store, 3), rs_store, since=since)
    assert _ids(resolved) == [(3, "HIGH"), (7, "CONTEXT")]
    everything = resolve("alpha", _rs_high(rs_store, 3), rs_store)
    assert _ids(everything) == [(3, "HIGH"), (2, "CONTEXT"), (7, "CONTEXT")]


def test_links_to_missing_posts_are_skipped(rs_store: MemoryExpertStore) -> None:
    assert _ids(resolve("alpha", _rs_high(rs_store, 8), rs_store)) == [(8, "HIGH")]


def test_no_high_posts_no_context(rs_store: MemoryExpertStore) -> None:
    assert resolve("alpha", [], rs_store) == []


class _LeakyStore(MemoryExpertStore):
    """A broken store that ignores ``expert_id``: resolve must not pass its leaks on."""

    def links(self, _expert_id: str, post_ids: Sequence[int]) -> list[PostLink]:
        return [
            link for link in self._links
            if link.source_id in post_ids or link.target_id in post_ids
        ]  # fmt: skip

    def posts_by_id(self, _expert_id: str, post_ids: Sequence[int]) -> list[ExpertPost]:
        return [p for (_, pid), p in self._posts.items() if pid in post_ids]


def test_nothing_of_another_expert_gets_in_even_from_a_leaky_store() -> None:
    store = _LeakyStore()
    store.add_posts(_rs_post(pid, owner) for owner in ("alpha", "beta") for pid in (1, 2, 9))
    store.add_links([_rs_link(2, 1), _rs_link(2, 9, expert_id="beta")])
    high = [ScoredPost(post=_rs_post(2), relevance=Relevance.HIGH)]
    resolved = resolve("alpha", high, store)
    assert _ids(resolved) == [(2, "HIGH"), (1, "CONTEXT")]
    assert {p.post.expert_id for p in resolved} == {"alpha"}
