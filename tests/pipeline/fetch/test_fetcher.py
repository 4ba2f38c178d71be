"""RedditFetcher over an in-memory source: exact counts, order, skips, failures, store."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crowdsift.core.errors import AuthError
from crowdsift.core.models import RejectReason, SearchPlan
from crowdsift.core.store import CommentStore
from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
from crowdsift.testing.factories import raw_comment, raw_post
from crowdsift.testing.memory_source import MemorySource

NOW = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
PLAN = SearchPlan(search_terms=["plaud", "voice recorder"], subreddits=["gadgets", "productivity"])


def corpus() -> MemorySource:
    body = "Long enough body about my plaud voice recorder and how I use it at work daily."
    gadgets_plaud = [
        raw_post("p1", selftext=body),
        raw_post("p2", selftext="[removed]"),
        raw_post("p3", over_18=True, selftext=body),
        raw_post("p4", author="AutoModerator", selftext=body),
        raw_post("p5", is_self=False, selftext=""),
        raw_post("p6", promoted=True, selftext=body),
        raw_post(
            "p7", title="Drill advice", selftext="Which hammer drill for concrete walls and brick?"
        ),
        raw_post("p8", selftext="plaud?", num_comments=0),
    ]
    gadgets_recorder = [raw_post("p1", selftext=body), raw_post("p9", selftext=body)]
    productivity_plaud = [
        raw_post(f"q{i}", subreddit="productivity", selftext=body) for i in range(5)
    ]
    source = MemorySource(
        posts={
            ("gadgets", "plaud"): gadgets_plaud,
            ("gadgets", "voice recorder"): gadgets_recorder,
            ("productivity", "plaud"): productivity_plaud,
        },
        comments={
            "p1": [
                raw_comment("c1", "p1", score=30),
                raw_comment("c2", "p1", body="[deleted]"),
                raw_comment("c3", "p1", body="short"),
                raw_comment("c4", "other", body="A comment from another thread, never here."),
            ],
            "p9": [raw_comment("c5", "p9", score=3)],
        },
    )
    return source


def fetch(source: MemorySource, **options: int) -> tuple[object, object]:
    fetcher = RedditFetcher(
        source, options=SearchOptions(page_size=2, **options), clock=lambda: NOW
    )
    outcome = fetcher.fetch(PLAN, query="is the plaud worth it?")
    return outcome.result, outcome.report


def test_plan_to_result_with_exact_counts() -> None:
    result, report = fetch(corpus())
    assert [p.id for p in result.posts] == ["p1", "p9", "q0", "q1", "q2", "q3", "q4"]
    assert result.query == "is the plaud worth it?"
    assert result.fetched_at == NOW and result.plan_id == PLAN.plan_id
    assert report.posts_seen == 15
    assert report.posts_accepted == 7
    assert report.post_rejections == {
        RejectReason.DELETED_OR_REMOVED: 1,
        RejectReason.NSFW_OR_AD: 2,
        RejectReason.METADATA_VETO: 2,
        RejectReason.BELOW_THRESHOLD: 1,
        RejectReason.TOO_SHORT: 1,
        RejectReason.DUPLICATE: 1,
    }
    p1 = result.posts[0]
    assert [c.comment_id for c in p1.comments] == ["c1"]
    assert report.comments_seen == 5 and report.comments_accepted == 2
    assert report.comment_rejections == {
        RejectReason.DELETED_OR_REMOVED: 1,
        RejectReason.TOO_SHORT: 1,
        RejectReason.METADATA_VETO: 1,
    }
    assert all(p.url.startswith("https://www.reddit.com/r/") for p in result.posts)


def test_concurrency_does_not_change_the_result() -> None:
    sequential, _ = fetch(corpus(), concurrency=1)
    concurrent, _ = fetch(corpus(), concurrency=8)
    assert concurrent == sequential


def test_pages_are_walked_and_capped() -> None:
    source = corpus()
    result, report = fetch(source, max_posts_per_query=3)
    assert report.full_queries == 2  # gadgets/plaud (8 posts) and productivity/plaud (5) hit 3
    searched = [call for call in source.calls if call[:3] == ("search", "gadgets", "plaud")]
    assert [call[3] for call in searched] == ["", "t3_p2"]  # 2 + 1 = cap of 3
    assert [p.id for p in result.posts if p.subreddit == "productivity"] == ["q0", "q1", "q2"]


def test_unavailable_subreddit_is_skipped_and_the_rest_continues() -> None:
    source = corpus()
    source.unavailable["productivity"] = "private"
    result, report = fetch(source)
    assert report.skipped_subreddits == {"productivity": "private"}
    assert [p.id for p in result.posts] == ["p1", "p9"]
    assert report.errors == []


def test_failed_comment_fetch_keeps_the_post_and_reports() -> None:
    source = corpus()
    source.failing_comments["p1"] = "HTTP 503 from /comments/p1 after 4 retries"
    result, report = fetch(source)
    assert result.posts[0].id == "p1" and result.posts[0].comments == []
    assert report.errors == ["comments of p1: HTTP 503 from /comments/p1 after 4 retries"]


def test_auth_errors_stop_the_fetch() -> None:
    class Refusing(MemorySource):
        def search_subreddit(self, *_args: object, **_kwargs: object):  # type: ignore[no-untyped-def]
            raise AuthError("Reddit refused the credentials; check REDDIT_CLIENT_ID")

    with pytest.raises(AuthError, match="REDDIT_CLIENT_ID"):
        fetch(Refusing())


def test_zero_comment_limit_skips_comment_requests() -> None:
    source = corpus()
    result, _ = fetch(source, max_comments_per_post=0)
    assert not [call for call in source.calls if call[0] == "comments"]
    assert all(post.comments == [] for post in result.posts)


def test_comments_are_persisted_and_nested_from_the_same_records(tmp_path: Path) -> None:
    store = CommentStore.from_url(f"sqlite:///{tmp_path / 'c.sqlite'}")
    try:
        outcome = RedditFetcher(corpus(), store=store, clock=lambda: NOW).fetch(PLAN)
        nested = [c for post in outcome.result.posts for c in post.comments]
        assert store.count() == len(nested) == 2
        for post in outcome.result.posts:
            assert store.for_post(post.id) == post.comments
        RedditFetcher(corpus(), store=store, clock=lambda: NOW).fetch(PLAN)
        assert store.count() == 2  # re-fetching is idempotent
    finally:
        store.close()


def test_a_refetch_goes_on_from_each_search_and_finds_what_a_fresh_larger_search_finds() -> None:
    """The gate's refetch (scale 2) continues every search from its cursor and leaves the
    searches whose listing ended alone: the same candidates as a fresh larger search, fewer
    requests, and nothing read twice."""
    options = SearchOptions(page_size=2, max_posts_per_query=2)
    source = corpus()
    fetcher = RedditFetcher(source, options=options, clock=lambda: NOW)
    fetcher.search(PLAN, scale=1)
    first = list(source.calls)
    again = fetcher.search(PLAN, scale=2)
    refetch = source.calls[len(first) :]

    fresh_source = corpus()
    fresh = RedditFetcher(fresh_source, options=options, clock=lambda: NOW).search(PLAN, scale=2)
    assert [c.post.id for c in again.candidates] == [c.post.id for c in fresh.candidates]
    assert again.report.posts_seen == fresh.report.posts_seen
    # gadgets/plaud (8 posts) and productivity/plaud (5) go on past their first page;
    # gadgets/voice recorder (2 posts, listing ended) and the empty searches are not asked again
    assert sorted(refetch) == [
        ("search", "gadgets", "plaud", "t3_p2"),
        ("search", "productivity", "plaud", "t3_q1"),
    ]
    assert len(refetch) < len(fresh_source.calls)


def test_another_plan_or_a_fetch_reads_afresh() -> None:
    options = SearchOptions(page_size=2, max_posts_per_query=2)
    source = corpus()
    fetcher = RedditFetcher(source, options=options, clock=lambda: NOW)
    fetcher.search(PLAN, scale=1)
    other = PLAN.model_copy(update={"plan_id": uuid.uuid4()})
    before = len(source.calls)
    fetcher.search(other, scale=2)
    assert ("search", "gadgets", "plaud", "") in source.calls[before:]
    before = len(source.calls)
    fetcher.fetch(other)
    assert ("search", "gadgets", "plaud", "") in source.calls[before:]
