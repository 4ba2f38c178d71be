"""FeedRetriever against real Chroma collections: seed 003's behaviours B1-B5 and error table."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from crowdsift.core.models import Post
from crowdsift.feed.retriever import SLOT_KEY, FeedRetriever
from crowdsift.testing.factories import make_post
from tests.feed.conftest import new_retriever


def test_b1_preference_returns_most_similar_first(collection: Any, topic_posts: list[Post]) -> None:
    retriever = new_retriever(collection, feed_size=3)
    retriever.add_posts(topic_posts)

    feed = retriever.get_feed(interests=["sourdough", "bread", "baking"])

    assert [post.id[:-1] for post in feed] == ["cooking"] * 3
    assert len({post.id for post in feed}) == 3


def test_b1_closest_post_comes_first(collection: Any, topic_posts: list[Post]) -> None:
    retriever = new_retriever(collection, feed_size=4)
    retriever.add_posts(topic_posts)
    target = next(p for p in topic_posts if p.id == "laptops2")

    feed = retriever.get_feed(interests=target.text.split())

    assert feed[0].id == "laptops2"


def test_b1_preference_is_the_default_mode_and_joins_interests(
    collection: Any, topic_posts: list[Post]
) -> None:
    retriever = new_retriever(collection, feed_size=2)
    retriever.add_posts(topic_posts)

    feed = retriever.get_feed(["bitcoin", "wallet", "exchange"])

    assert {post.id[:-1] for post in feed} == {"crypto"}
    assert len(feed) == 2


def test_b1_results_are_equal_posts_with_comments(collection: Any) -> None:
    post = make_post("abc1", "Bitcoin wallet question", "Which wallet?", comments=3)
    retriever = new_retriever(collection)
    retriever.add_post(post)

    (returned,) = retriever.get_feed(["bitcoin"])

    assert returned == post
    assert len(returned.comments) == 3


def test_b2_random_mode_ignores_interests_and_samples_distinct_posts(
    collection: Any, topic_posts: list[Post]
) -> None:
    retriever = new_retriever(collection, feed_size=5, rng=random.Random(7))
    retriever.add_posts(topic_posts)

    feed = retriever.get_feed(interests=["sourdough"], mode="random")

    assert len(feed) == 5
    assert len({post.id for post in feed}) == 5
    assert {post.id for post in feed} <= {post.id for post in topic_posts}


def test_b2_random_default_mode_needs_no_interests(
    collection: Any, topic_posts: list[Post]
) -> None:
    retriever = new_retriever(collection, feed_size=4, default_mode="random")
    retriever.add_posts(topic_posts)

    assert len(retriever.get_feed()) == 4


def test_b2_same_seed_same_feeds(ephemeral_collection: Any, topic_posts: list[Post]) -> None:
    first = new_retriever(ephemeral_collection, rng=random.Random(3))
    first.add_posts(topic_posts)
    second = new_retriever(ephemeral_collection, rng=random.Random(3))

    runs = [[p.id for p in first.get_feed(mode="random")] for _ in range(5)]
    again = [[p.id for p in second.get_feed(mode="random")] for _ in range(5)]

    assert runs == again
    assert len({tuple(run) for run in runs}) > 1  # not the same feed every time


def test_b2_random_sampling_is_uniform(ephemeral_collection: Any) -> None:
    """Chi-square over 20 posts x 1,000 feeds of 5 (fixed seed, so never flaky).

    Each post is expected 250 times; with 19 degrees of freedom the 99.9 % critical value is
    43.8. A sampler that favoured early slots, or never reached the last one, lands far above.
    """
    posts = [make_post(f"p{n}", f"post number {n}") for n in range(20)]
    retriever = new_retriever(ephemeral_collection, feed_size=5, rng=random.Random(12345))
    retriever.add_posts(posts)

    counts: Counter[str] = Counter()
    for _ in range(1000):
        feed = retriever.get_feed(mode="random")
        assert len({p.id for p in feed}) == 5
        counts.update(p.id for p in feed)

    expected = 1000 * 5 / 20
    chi_square = sum((counts[p.id] - expected) ** 2 / expected for p in posts)
    assert set(counts) == {p.id for p in posts}
    assert chi_square < 43.8


def test_b3_upsert_replaces_and_keeps_one_record(collection: Any) -> None:
    retriever = new_retriever(collection)
    retriever.add_post(make_post("same1", "Old title about bitcoin", karma=1))
    retriever.add_post(make_post("same1", "New title about bitcoin", karma=99))

    assert retriever.count() == 1
    (post,) = retriever.get_feed(["bitcoin"])
    assert post.title == "New title about bitcoin"
    assert post.post_karma == 99


def test_b3_stores_id_text_and_metadata(collection: Any) -> None:
    post = make_post("meta1", "A title", "A body", comments=2)
    new_retriever(collection).add_post(post)

    stored = collection.get(ids=["meta1"], include=["documents", "metadatas"])

    assert stored["ids"] == ["meta1"]
    assert stored["documents"] == [post.text]
    metadata = dict(stored["metadatas"][0])
    assert metadata.pop(SLOT_KEY) == 0
    assert metadata == post.to_metadata()


def test_b3_invalid_post_raises_value_error_and_writes_nothing(collection: Any) -> None:
    good = make_post("good1", "fine")
    bad = Post.model_construct(**{**make_post("bad1", "x").model_dump(), "relevance_score": 7.0})
    retriever = new_retriever(collection)

    with pytest.raises(ValueError, match="not a valid Post"):
        retriever.add_posts([good, bad])

    assert retriever.count() == 0


def test_b3_unencodable_text_is_a_value_error(collection: Any) -> None:
    retriever = new_retriever(collection)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        retriever.add_post(make_post("sur1", "broken \ud800 title"))
    assert retriever.count() == 0


def test_b3_repeated_ids_in_one_call_last_wins(collection: Any) -> None:
    retriever = new_retriever(collection)
    retriever.add_posts([make_post("dup1", "first"), make_post("dup1", "second")])

    assert retriever.count() == 1
    assert retriever.get_feed(mode="random")[0].title == "second"


def test_b4_empty_collection(collection: Any) -> None:
    retriever = new_retriever(collection)

    assert retriever.count() == 0
    retriever.clear()  # no-op, no error
    assert retriever.count() == 0
    with pytest.raises(RuntimeError, match=r"^Collection is empty$"):
        retriever.get_feed(["anything"])
    with pytest.raises(RuntimeError, match=r"^Collection is empty$"):
        retriever.get_feed(mode="random")


def test_b4_clear_removes_everything_then_slots_restart(
    collection: Any, topic_posts: list[Post]
) -> None:
    retriever = new_retriever(collection, batch_size=5)
    retriever.add_posts(topic_posts)
    assert retriever.count() == len(topic_posts)

    retriever.clear()

    assert retriever.count() == 0
    retriever.add_post(make_post("fresh1", "fresh"))
    stored = collection.get(ids=["fresh1"], include=["metadatas"])
    assert stored["metadatas"][0][SLOT_KEY] == 0


def test_b5_fewer_posts_than_feed_size_returns_all(collection: Any) -> None:
    posts = [make_post(f"few{n}", f"bitcoin post {n}") for n in range(3)]
    retriever = new_retriever(collection, feed_size=10)
    retriever.add_posts(posts)

    assert {p.id for p in retriever.get_feed(["bitcoin"])} == {p.id for p in posts}
    assert {p.id for p in retriever.get_feed(mode="random")} == {p.id for p in posts}


@pytest.mark.parametrize("size", [0, 21, -1, 100])
def test_error_invalid_feed_size(ephemeral_collection: Any, size: int) -> None:
    with pytest.raises(ValueError, match=r"^feed_size must be between 1 and 20$"):
        new_retriever(ephemeral_collection, feed_size=size)


@pytest.mark.parametrize("size", [1, 20])
def test_feed_size_bounds_are_inclusive(ephemeral_collection: Any, size: int) -> None:
    assert new_retriever(ephemeral_collection, feed_size=size).feed_size == size


def test_error_preference_without_interests(collection: Any, topic_posts: list[Post]) -> None:
    retriever = new_retriever(collection)
    retriever.add_posts(topic_posts)
    with pytest.raises(ValueError, match=r"^interests required for preference mode$"):
        retriever.get_feed(None, mode="preference")


@pytest.mark.parametrize("interests", [[], [""], ["  ", ""]])
def test_error_empty_interests(
    collection: Any, topic_posts: list[Post], interests: list[str]
) -> None:
    retriever = new_retriever(collection)
    retriever.add_posts(topic_posts)
    with pytest.raises(ValueError, match=r"^interests must be non-empty$"):
        retriever.get_feed(interests)


def test_error_unknown_mode(ephemeral_collection: Any) -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        new_retriever(ephemeral_collection, default_mode="chronological")  # type: ignore[arg-type]


def test_persistent_collection_survives_reopening(
    persistent_factory: Callable[[], Any], topic_posts: list[Post]
) -> None:
    new_retriever(persistent_factory()).add_posts(topic_posts)

    reopened = new_retriever(persistent_factory(), feed_size=3)

    assert reopened.count() == len(topic_posts)
    assert {p.id[:-1] for p in reopened.get_feed(["tomatoes", "garden", "compost"])} == {
        "gardening"
    }
    reopened.add_post(make_post("late1", "a later post"))
    slots = [m[SLOT_KEY] for m in persistent_factory().get(include=["metadatas"])["metadatas"]]
    assert sorted(slots) == list(range(len(topic_posts) + 1))


def test_random_mode_survives_posts_deleted_behind_its_back(ephemeral_collection: Any) -> None:
    posts = [make_post(f"h{n}", f"post {n}") for n in range(10)]
    retriever = new_retriever(ephemeral_collection, feed_size=8, rng=random.Random(1))
    retriever.add_posts(posts)
    ephemeral_collection.delete(ids=["h0", "h1", "h2", "h3"])  # holes in slots 0-3

    feed = retriever.get_feed(mode="random")

    assert len(feed) == 6
    assert {p.id for p in feed} == {f"h{n}" for n in range(4, 10)}


def test_foreign_records_are_skipped_not_fatal(ephemeral_collection: Any) -> None:
    retriever = new_retriever(ephemeral_collection)
    retriever.add_post(make_post("ours1", "bitcoin wallets"))
    ephemeral_collection.upsert(ids=["alien"], documents=["bitcoin wallets"], metadatas=[{"x": 1}])

    feed = retriever.get_feed(["bitcoin", "wallets"])

    assert [p.id for p in feed] == ["ours1"]


def test_batches_report_progress(ephemeral_collection: Any, topic_posts: list[Post]) -> None:
    seen: list[int] = []
    new_retriever(ephemeral_collection, batch_size=5).add_posts(topic_posts, on_batch=seen.append)
    assert seen == [5, 5, 2]


def test_slot_table_records_every_slot_and_the_size(
    persistent_factory: Callable[[], Any], topic_posts: list[Post]
) -> None:
    main = persistent_factory()
    table = persistent_factory.client.get_or_create_collection("posts_slots")  # type:
    # ignore[attr-defined]
    FeedRetriever(main, slots=table, batch_size=5).add_posts(topic_posts)

    size = table.get(ids=["size"], include=["metadatas"])["metadatas"][0]["n"]
    entries = table.get(ids=[f"slot:{n}" for n in range(size)], include=["metadatas"])

    assert size == len(topic_posts)
    assert sorted(m["post_id"] for m in entries["metadatas"]) == sorted(p.id for p in topic_posts)


def test_slot_table_is_backfilled_for_an_index_built_without_it(
    persistent_factory: Callable[[], Any], topic_posts: list[Post]
) -> None:
    FeedRetriever(persistent_factory()).add_posts(topic_posts)  # no table yet
    table = persistent_factory.client.get_or_create_collection("posts_slots")  # type:
    # ignore[attr-defined]
    retriever = FeedRetriever(persistent_factory(), feed_size=4, slots=table)

    feed = retriever.get_feed(mode="random")

    assert len({p.id for p in feed}) == 4
    assert table.get(ids=["size"], include=["metadatas"])["metadatas"][0]["n"] == len(topic_posts)


def test_slot_table_sampling_is_uniform(persistent_factory: Callable[[], Any]) -> None:
    """The same chi-square bound as without the table (20 posts, 1,000 feeds of 5)."""
    main = persistent_factory()
    table = persistent_factory.client.get_or_create_collection("posts_slots")  # type:
    # ignore[attr-defined]
    posts = [make_post(f"u{n}", f"post number {n}") for n in range(20)]
    retriever = FeedRetriever(main, feed_size=5, rng=random.Random(99), slots=table)
    retriever.add_posts(posts)

    counts: Counter[str] = Counter()
    for _ in range(1000):
        counts.update(p.id for p in retriever.get_feed(mode="random"))

    expected = 250
    assert sum((counts[p.id] - expected) ** 2 / expected for p in posts) < 43.8


def test_clear_empties_the_slot_table_too(persistent_factory: Callable[[], Any]) -> None:
    main = persistent_factory()
    table = persistent_factory.client.get_or_create_collection("posts_slots")  # type:
    # ignore[attr-defined]
    retriever = FeedRetriever(main, slots=table)
    retriever.add_posts([make_post("c1", "one"), make_post("c2", "two")])

    retriever.clear()

    assert table.count() == 0
    with pytest.raises(RuntimeError, match=r"^Collection is empty$"):
        retriever.get_feed(mode="random")


class _CountingCollection:
    """A real collection that counts the calls which read the whole collection."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.scans = 0

    def count(self) -> int:
        self.scans += 1
        return int(self._inner.count())

    def get(self, **kwargs: Any) -> Any:
        if "ids" not in kwargs:
            self.scans += 1
        return self._inner.get(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_random_feeds_with_a_slot_table_only_look_up_by_id(
    persistent_factory: Callable[[], Any], topic_posts: list[Post]
) -> None:
    main = persistent_factory()
    table = persistent_factory.client.get_or_create_collection("posts_slots")  # type:
    # ignore[attr-defined]
    FeedRetriever(main, slots=table).add_posts(topic_posts)
    watched = _CountingCollection(main)
    retriever = FeedRetriever(watched, feed_size=5, rng=random.Random(4), slots=table)  # type:
    # ignore[arg-type]

    for _ in range(20):
        assert len(retriever.get_feed(mode="random")) == 5

    assert watched.scans == 0
