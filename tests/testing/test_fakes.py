"""``crowdsift.testing``: the fakes a user's own tests swap in behave as their documents say."""

from __future__ import annotations

import pytest

from crowdsift.core.errors import SourceError, SubredditUnavailableError
from crowdsift.testing.clock import Sleeps
from crowdsift.testing.factories import raw_comment, raw_post
from crowdsift.testing.memory_source import MemorySource


def test_sleeps_moves_the_clock_instead_of_waiting() -> None:
    sleeps = Sleeps(start=10.0)
    sleeps.sleep(2.5)
    sleeps.sleep(0.5)
    assert sleeps.calls == [2.5, 0.5]
    assert sleeps.clock() == 13.0


def test_memory_source_pages_with_t3_cursors_and_records_calls() -> None:
    posts = [raw_post(f"p{n}") for n in range(3)]
    source = MemorySource(posts={("gadgets", "plaud"): posts})
    first = source.search_subreddit("gadgets", "plaud", limit=2)
    assert [item["id"] for item in first.posts] == ["p0", "p1"]
    assert first.after == "t3_p1"
    second = source.search_subreddit("gadgets", "plaud", limit=2, after=first.after)
    assert [item["id"] for item in second.posts] == ["p2"]
    assert second.after is None
    assert source.calls == [
        ("search", "gadgets", "plaud", ""),
        ("search", "gadgets", "plaud", "t3_p1"),
    ]
    assert source.stats.requests == 2


def test_memory_source_raises_what_a_real_source_raises() -> None:
    source = MemorySource(unavailable={"private": "private"}, failing_comments={"p1": "boom"})
    with pytest.raises(SubredditUnavailableError):
        source.search_subreddit("private", "anything")
    with pytest.raises(SourceError, match="boom"):
        source.fetch_post_comments("p1")
    with pytest.raises(SourceError, match="boom"):
        source.fetch_comment_tree("t3_p1")


def test_memory_source_builds_the_comment_tree_from_flat_comments() -> None:
    top = raw_comment("c1", post_id="p1")
    source = MemorySource(comments={"p1": [top]})
    assert [item["id"] for item in source.fetch_comment_tree("t3_p1")] == ["c1"]
    assert source.fetch_post_comments("p1") == [top]
