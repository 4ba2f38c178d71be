"""The rerank: 0.8 × the gate's relevance + 0.2 × engagement, pure, top N (seed 001 phase 3)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.models import Candidate
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.gate.judge import judge
from crowdsift.pipeline.reddit.rerank import (
    Ranking,
    final_score,
    heuristic_order,
    normalise_engagement,
    rerank,
)
from crowdsift.testing.factories import make_post

CONFIG = RedditConfig(rerank_top=40, relevance_weight=0.8)
QUESTION = "How do I set up Home Assistant on a Raspberry Pi?"


def _candidate(
    post_id: str,
    title: str = "Home Assistant on a Raspberry Pi 4",
    body: str = "",
    *,
    relevance: float = 0.5,
    karma: int = 0,
    comments: int = 0,
    strategies: list[Any] | None = None,
) -> Candidate:
    post = make_post(post_id, title, body, karma=karma).model_copy(
        update={"relevance_score": relevance, "num_comments": comments}
    )
    return Candidate(post=post, strategies=strategies or ["targeted"])


def _rerank(
    candidates: list[Candidate],
    scores: Mapping[str, float | None],
    config: RedditConfig = CONFIG,
) -> Ranking:
    return rerank(candidates, scores, config=config)


def test_normalise_engagement_is_log_scaled_by_the_max() -> None:
    # log1p(9) = ln 10 and log1p(99) = ln 100 = 2 ln 10
    assert normalise_engagement([0, 9, 99]) == pytest.approx([0.0, 0.5, 1.0])
    assert normalise_engagement([0, 0]) == [0.0, 0.0]
    assert normalise_engagement([-5, 3]) == [0.0, 1.0]
    assert normalise_engagement([]) == []


def test_final_score_arithmetic_and_clamping() -> None:
    assert final_score(0.9, 0.5, 0.8) == pytest.approx(0.82)  # 0.72 + 0.10
    assert final_score(0.2, 1.0, 0.8) == pytest.approx(0.36)  # 0.16 + 0.20
    assert final_score(1.5, 2.0, 0.8) == 1.0
    assert final_score(-1.0, -1.0, 0.8) == 0.0
    assert final_score(0.3, 0.9, 1.7) == pytest.approx(0.3)  # weight clamped to 1


def test_heuristic_order_blends_lexical_engagement_and_strategies() -> None:
    # engagement: a=0, b=99, c=9 → normalised 0, 1, 0.5
    a = _candidate("a", relevance=0.9)  # 0.54 + 0 + 0.025 = 0.565
    b = _candidate("b", relevance=0.5, karma=99)  # 0.30 + 0.30 + 0.025 = 0.625
    c = _candidate("c", relevance=0.6, karma=9, strategies=["targeted", "sniper", "timeless"])
    # c: 0.36 + 0.15 + 0.075 = 0.585
    d = _candidate("d", relevance=0.9)  # ties with a: by id
    assert [x.post.id for x in heuristic_order([d, a, c, b])] == ["b", "c", "a", "d"]


def test_hand_computed_final_scores_and_order() -> None:
    # engagement: a = 9 → 0.5, b = 99 → 1.0, c = 0 → 0.0
    candidates = [
        _candidate("a", karma=5, comments=4),
        _candidate("b", karma=90, comments=9),
        _candidate("c"),
    ]
    ranking = _rerank(candidates, {"a": 0.9, "b": 0.2, "c": 0.6})
    by_id = {p.post_id: p for p in ranking.ranked}
    assert by_id["a"].final_score == pytest.approx(0.82)  # 0.8×0.9 + 0.2×0.5
    assert by_id["b"].final_score == pytest.approx(0.36)  # 0.8×0.2 + 0.2×1.0
    assert by_id["c"].final_score == pytest.approx(0.48)  # 0.8×0.6 + 0.2×0
    assert [p.post_id for p in ranking.ranked] == ["a", "c", "b"]
    assert by_id["a"].engagement == pytest.approx(0.5) and by_id["a"].relevance == 0.9
    assert not ranking.fell_back


def test_viral_off_topic_post_falls_below_modest_on_topic_one() -> None:
    viral = _candidate("viral", "This cat meme broke the internet", karma=50_000, comments=4_000)
    modest = _candidate("modest", "My Home Assistant Pi setup after a year", karma=12, comments=3)
    ranking = _rerank([viral, modest], {"viral": 0.05, "modest": 0.9})
    assert [p.post_id for p in ranking.ranked] == ["modest", "viral"]
    assert ranking.ranked[1].engagement == 1.0
    assert ranking.ranked[1].final_score == pytest.approx(0.8 * 0.05 + 0.2)


def test_the_local_gates_scores_put_the_viral_post_below() -> None:
    viral = _candidate("viral", "This cat meme broke the internet", karma=50_000, comments=4_000)
    modest = _candidate(
        "modest", "How I set up Home Assistant on a Raspberry Pi", "zigbee dongle", karma=12
    )
    items = [viral, modest]
    engine = LocalEngine(embedder=HashingEmbedder())
    gate = asyncio.run(
        judge(QUESTION, items, "archive", engine=engine, text_of=lambda c: (c.post.title, ""))
    )
    assert all(score is not None for score in gate.scores)
    scores = {c.post.id: s for c, s in zip(gate.relevant, gate.scores, strict=True)}
    kept = [c for c in items if c.post.id in scores]
    assert _rerank(kept, scores).ranked[0].post_id == "modest"


def test_only_the_top_n_are_kept() -> None:
    candidates = [_candidate(f"p{i}") for i in range(6)]
    scores = {f"p{i}": i / 10 for i in range(6)}
    ranking = _rerank(candidates, scores, RedditConfig(rerank_top=3))
    assert [p.post_id for p in ranking.ranked] == ["p5", "p4", "p3"]


def test_scores_are_clamped() -> None:
    ranking = _rerank([_candidate("a"), _candidate("b")], {"a": 1.7, "b": -0.3})
    assert [p.relevance for p in ranking.ranked] == [1.0, 0.0]


def test_ties_are_ordered_by_id() -> None:
    candidates = [_candidate("b"), _candidate("a"), _candidate("c")]
    ranking = _rerank(candidates, {"a": 0.5, "b": 0.5, "c": 0.5})
    assert [p.post_id for p in ranking.ranked] == ["a", "b", "c"]


def test_missing_scores_fall_back_to_lexical_relevance_and_say_so() -> None:
    candidates = [
        _candidate("lo", relevance=0.2, karma=99),
        _candidate("hi", relevance=0.9, karma=9),
    ]
    ranking = _rerank(candidates, {"lo": None})
    assert [p.post_id for p in ranking.ranked] == ["hi", "lo"] and ranking.fell_back
    by_id = {p.post_id: p for p in ranking.ranked}
    assert by_id["hi"].relevance == 0.9
    assert by_id["hi"].final_score == pytest.approx(0.8 * 0.9 + 0.2 * 0.5)
    assert by_id["lo"].final_score == pytest.approx(0.8 * 0.2 + 0.2 * 1.0)


def test_no_candidates_ranks_nothing() -> None:
    ranking = _rerank([], {})
    assert ranking.ranked == [] and not ranking.fell_back


def test_ranked_post_carries_the_post_fields() -> None:
    candidate = _candidate("a", karma=7, comments=2, strategies=["ai_intent", "sniper"])
    [ranked] = _rerank([candidate], {"a": 0.4}).ranked
    post = candidate.post
    assert (ranked.url, ranked.title, ranked.subreddit) == (post.url, post.title, post.subreddit)
    assert (ranked.post_karma, ranked.num_comments) == (7, 2)
    assert ranked.created_at == post.created_at
    assert ranked.strategies == ["ai_intent", "sniper"]
    assert ranked.engagement == 1.0  # the only post is the most engaged one
