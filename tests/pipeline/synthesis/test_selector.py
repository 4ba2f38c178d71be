"""The selector (``select_threads``, over a FetchResult through ``tests.support.answers``): which
posts and comments an engine sees, and how much of each."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from crowdsift.core.models import FetchResult, Post
from crowdsift.core.sentences import truncate_words
from crowdsift.pipeline.synthesis.config import SelectorConfig
from tests.support.answers import select_evidence

MakePost = Callable[..., Post]


def test_posts_ordered_by_relevance_then_karma_then_id(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    posts = [
        make_post("low", relevance=0.2, karma=500),
        make_post("tieb", relevance=0.8, karma=5),
        make_post("tiea", relevance=0.8, karma=5),
        make_post("tiekarma", relevance=0.8, karma=50),
        make_post("top", relevance=0.95, karma=1),
    ]
    request = select_evidence(make_fetch(posts), SelectorConfig(), prompt_version="v1")
    assert [p.post_id for p in request.post_payloads] == ["top", "tiekarma", "tiea", "tieb", "low"]


def test_duplicate_post_ids_keep_the_best_copy_and_max_posts_caps(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    posts = [
        make_post("dup", relevance=0.3, body="the weaker copy of the same post, long enough"),
        make_post("dup", relevance=0.9, body="the stronger copy of the same post, long enough"),
        make_post("b", relevance=0.5),
        make_post("c", relevance=0.4),
    ]
    request = select_evidence(make_fetch(posts), SelectorConfig(max_posts=2), prompt_version="v1")
    assert [p.post_id for p in request.post_payloads] == ["dup", "b"]
    assert request.post_payloads[0].body_excerpt.startswith("the stronger copy")


def test_body_is_truncated_on_a_word_boundary_with_an_ellipsis(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    body = " ".join(f"word{n}" for n in range(100))
    request = select_evidence(
        make_fetch([make_post("a", body=body)]),
        SelectorConfig(max_post_chars=60),
        prompt_version="v1",
    )
    excerpt = request.post_payloads[0].body_excerpt
    assert len(excerpt) <= 60
    assert excerpt.endswith("…")
    kept = excerpt[:-1]
    assert body.startswith(kept)
    assert body[len(kept)] == " "  # the cut falls between two words
    assert len(kept) > 40


def test_top_comments_by_karma_truncated_and_counted(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    comments = [
        ("a modest comment that people liked a little", 5),
        ("the most upvoted comment " + "with many more words " * 20, 90),
        ("the second best comment in this thread", 40),
        ("a comment nobody liked at all in the thread", -3),
    ]
    request = select_evidence(
        make_fetch([make_post("a", comments=comments)]),
        SelectorConfig(max_comments_per_post=2, max_comment_chars=60),
        prompt_version="v1",
    )
    payload = request.post_payloads[0]
    assert payload.num_comments == 4
    assert len(payload.top_comment_excerpts) == 2
    first, second = payload.top_comment_excerpts
    assert first.startswith("the most upvoted comment") and first.endswith("…")
    assert len(first) <= 60
    assert second == "the second best comment in this thread"


def test_zero_comment_cap_shows_no_comments_but_counts_them(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    post = make_post("a", comments=[("a perfectly fine comment text", 3)])
    request = select_evidence(
        make_fetch([post]), SelectorConfig(max_comments_per_post=0), prompt_version="v1"
    )
    assert request.post_payloads[0].top_comment_excerpts == []
    assert request.post_payloads[0].num_comments == 1


def test_url_is_canonical_subreddit_lower_case_title_cleaned(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    post = make_post(
        "abc1",
        title="**Plaud** &amp; [battery](https://example.com) review",
        subreddit="HomeImprovement",
        url=(
            "https://www.reddit.com/r/HomeImprovement/comments/abc1/plaud_review/"
            "?utm_source=share&utm_medium=web#comments"
        ),
    )
    payload = select_evidence(make_fetch([post]), SelectorConfig(), prompt_version="v1")
    evidence = payload.post_payloads[0]
    assert str(evidence.url) == (
        "https://www.reddit.com/r/HomeImprovement/comments/abc1/plaud_review/"
    )
    assert evidence.subreddit == "homeimprovement"
    assert evidence.title == "Plaud & battery review"


def test_request_records_query_plan_version_and_limits(
    make_post: MakePost, make_fetch: Callable[..., FetchResult]
) -> None:
    config = SelectorConfig(
        max_posts=7, max_comments_per_post=2, max_post_chars=400, max_comment_chars=120
    )
    fetched = make_fetch([make_post("a")], query="which recorder?")
    request = select_evidence(fetched, config, prompt_version="v9")
    assert request.query == "which recorder?"
    assert request.plan_id == fetched.plan_id
    assert request.prompt_version == "v9"
    assert (
        request.max_posts,
        request.max_comments_per_post,
        request.max_post_chars,
        request.max_comment_chars,
    ) == (7, 2, 400, 120)


def test_truncate_words_leaves_short_text_alone_and_cuts_long_words() -> None:
    assert truncate_words("short text", 50) == "short text"
    assert truncate_words("x" * 100, 10) == "x" * 9 + "…"
    assert truncate_words("alpha beta, gamma", 12) == "alpha beta…"


@given(st.text(min_size=0, max_size=300), st.integers(min_value=2, max_value=200))
def test_truncate_words_never_exceeds_the_limit_and_keeps_a_prefix(text: str, limit: int) -> None:
    cut = truncate_words(text, limit)
    assert len(cut) <= limit
    if cut != text:
        assert cut.endswith("…")
        assert text.startswith(cut[:-1])
