"""Placeholder engagement (Arctic Shift before its second retrieval) is neutral in the rerank."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.models import Candidate, FetchReport
from crowdsift.core.source import ENGAGEMENT_PENDING
from crowdsift.pipeline.fetch.filtering import FilterConfig
from crowdsift.pipeline.fetch.queries import SearchCall, SearchReply, screen_replies
from crowdsift.pipeline.reddit.rerank import candidate_engagement, heuristic_order, rerank
from crowdsift.testing.factories import make_post, raw_post

CONFIG = RedditConfig(rerank_top=40, relevance_weight=0.8)


def _candidate(
    post_id: str, karma: int, *, known: bool = True, relevance: float = 0.5
) -> Candidate:
    post = make_post(post_id, "Home Assistant on a Raspberry Pi", "", karma=karma)
    post = post.model_copy(update={"relevance_score": relevance, "num_comments": 0})
    return Candidate(post=post, strategies=["targeted"], engagement_known=known)


def test_unknown_engagement_is_the_median_of_the_known() -> None:
    values = candidate_engagement(
        [
            _candidate("a", 0),
            _candidate("b", 9),
            _candidate("c", 99),
            _candidate("f", 1, known=False),
        ]
    )
    assert values == pytest.approx([0.0, 0.5, 1.0, 0.5])


def test_unknown_engagement_is_not_normalised_with_the_known() -> None:
    # A placeholder of 10**6 would otherwise set the scale and flatten every real count.
    values = candidate_engagement(
        [_candidate("a", 9), _candidate("b", 99), _candidate("f", 10**6, known=False)]
    )
    assert values[:2] == pytest.approx([0.5, 1.0])


def test_nothing_known_changes_no_order() -> None:
    assert candidate_engagement(
        [_candidate("a", 1, known=False), _candidate("b", 50, known=False)]
    ) == [0.0, 0.0]


def test_a_fresh_thread_is_not_ranked_below_older_ones_for_its_placeholder_votes() -> None:
    old = [_candidate(f"old{i}", karma) for i, karma in enumerate((3, 40, 500))]
    fresh = _candidate("fresh", 1, known=False)  # Arctic Shift's score=1 before the re-fetch
    scores = {c.post.id: 0.5 for c in [*old, fresh]}

    ranked = [p.post_id for p in rerank([*old, fresh], scores, config=CONFIG).ranked]
    assert ranked.index("fresh") < ranked.index("old0")  # neutral, not last
    as_final = fresh.model_copy(update={"engagement_known": True})
    ranked_as_final = [p.post_id for p in rerank([*old, as_final], scores, config=CONFIG).ranked]
    assert ranked_as_final[-1] == "fresh"  # what the placeholder did before
    assert [c.post.id for c in heuristic_order([*old, fresh])].index("fresh") < 3


def test_screening_carries_the_sources_mark_onto_the_candidate() -> None:
    call = SearchCall("gadgets", "plaud", "new", "all", 25)
    reply = SearchReply(call, posts=[raw_post("p1", **{ENGAGEMENT_PENDING: True}), raw_post("p2")])
    screened = screen_replies(
        [reply],
        search_terms=["plaud"],
        filters=FilterConfig(),
        source="arctic-shift",
        fetched_at=datetime(2024, 6, 1, tzinfo=UTC),
        report=FetchReport(source="arctic-shift"),
    )
    known = {c.post.id: c.engagement_known for c in screened.candidates}
    assert known == {"p1": False, "p2": True}
