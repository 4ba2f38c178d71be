"""Reranking: the gate's relevant candidates blended with engagement, no new call.

Search engines rank by words and votes, so a viral meme that shares a word with the question
can sit above the thread that answers it. The rerank (seed 001, phase 3) scores
``final = w × relevance + (1 − w) × engagement`` with ``w = relevance_weight`` (0.8),
engagement being log-scaled votes plus comments normalised over the set, and keeps the top
``rerank_top`` (40). ``relevance`` is the score the relevance gate's one batched call already
gave each item (seed 002 judges the same items; judging them twice would double the cost), so
the rerank is pure. With ``w = 0.8`` an off-topic post can gain at most 0.2 from votes.

The judge's scores are never trusted blindly: where the gate failed open or its reply had no
usable scores, the lexical relevance the fetch computed (``Post.relevance_score``) stands in.
``heuristic_order`` (lexical, engagement, agreeing strategies) decides which candidates the
gate judges at all when a search finds more than it should pay to judge.

Engagement a source could not know yet is not ranked as if it were final: Arctic Shift reports
``score`` 1 and ``num_comments`` 0 until it fetches a post again about 36 h after posting, so a
fresh thread would otherwise lose to every older one. A candidate with
``engagement_known=False`` gets the median engagement of the candidates whose engagement is
known (``candidate_engagement``): neutral, neither rewarded nor punished; when none is known,
engagement is 0 for all and changes no order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.log import get_logger
from crowdsift.core.models import STRATEGIES, Candidate
from crowdsift.pipeline.reddit.models import RankedPost

log = get_logger(__name__)

H_LEXICAL, H_ENGAGEMENT, H_STRATEGIES = 0.6, 0.3, 0.1
"""Heuristic weights: lexical relevance leads; engagement and agreement of strategies help."""


def normalise_engagement(values: Sequence[int]) -> list[float]:
    """``log1p(v) / log1p(max)`` for each value (negatives count as 0): the most engaged post is
    1.0, and 10 000 votes do not dwarf 100 the way they would linearly. All zero → zeros."""
    logs = [math.log1p(max(v, 0)) for v in values]
    top = max(logs, default=0.0)
    if top == 0.0:
        return [0.0 for _ in logs]
    return [value / top for value in logs]


def candidate_engagement(candidates: Sequence[Candidate]) -> list[float]:
    """Each candidate's normalised engagement, normalised over the known ones only; unknown
    engagement (placeholders) is the median of the known values, 0.0 when none is known."""
    known = [c for c in candidates if c.engagement_known]
    scaled = iter(normalise_engagement([c.engagement for c in known]))
    values = [next(scaled) if c.engagement_known else None for c in candidates]
    ordered = sorted(v for v in values if v is not None)
    mid = len(ordered) // 2
    neutral = (ordered[mid] + ordered[~mid]) / 2 if ordered else 0.0
    return [neutral if value is None else value for value in values]


def heuristic_score(candidate: Candidate, engagement: float, *, ranked: bool = True) -> float:
    """``0.6 × retrieval + 0.3 × engagement + 0.1 × strategies/5``: the pre-rerank order.

    ``retrieval`` is where the searches ranked the post, fused (``Candidate.retrieval``); when
    no search of the set was ranked by relevance (``ranked`` False: a plan sorted by date or
    votes), the fetch's lexical ``post.relevance_score`` stands in. ``engagement`` is
    normalised over the set, and a post several strategies found independently is more
    likely on-topic.
    """
    share = len(set(candidate.strategies)) / len(STRATEGIES)
    relevance = candidate.retrieval if ranked else candidate.post.relevance_score
    return H_LEXICAL * relevance + H_ENGAGEMENT * engagement + H_STRATEGIES * share


def heuristic_order(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates by ``heuristic_score`` (highest first), ties by post id."""
    engagement = candidate_engagement(candidates)
    ranked = any(c.retrieval > 0.0 for c in candidates)
    scored = [
        (heuristic_score(c, e, ranked=ranked), c)
        for c, e in zip(candidates, engagement, strict=True)
    ]
    scored.sort(key=lambda item: (-item[0], item[1].post.id))
    return [candidate for _, candidate in scored]


def final_score(relevance: float, engagement: float, weight: float) -> float:
    """``weight × relevance + (1 − weight) × engagement``, inputs and result clamped to 0–1."""
    w, r, e = _clamp(weight), _clamp(relevance), _clamp(engagement)
    return _clamp(w * r + (1.0 - w) * e)


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


@dataclass
class Ranking:
    """The ranked top posts (best first), and whether lexical relevance stood in for the
    judge's scores (the gate failed open or its reply had no usable scores)."""

    ranked: list[RankedPost]
    fell_back: bool = False


def rerank(
    candidates: Sequence[Candidate],
    relevance: Mapping[str, float | None],
    *,
    config: RedditConfig,
) -> Ranking:
    """Rank the gate's relevant candidates: ``w × relevance + (1 − w) × engagement``, top
    ``config.rerank_top``. ``relevance`` maps post ids to the gate's score; a missing or None
    score falls back to the fetch's lexical relevance (``Post.relevance_score``)."""
    judged = [relevance.get(c.post.id) for c in candidates]
    fell_back = any(score is None for score in judged)
    scores = [
        c.post.relevance_score if score is None else _clamp(score)
        for c, score in zip(candidates, judged, strict=True)
    ]
    engagement = candidate_engagement(candidates)
    ranked = [
        _ranked(c, r, e, config.relevance_weight)
        for c, r, e in zip(candidates, scores, engagement, strict=True)
    ]
    ranked.sort(key=lambda p: (-p.final_score, p.post_id))
    log.info(
        "reranked", candidates=len(candidates), ranked=min(len(ranked), config.rerank_top),
        fallback=fell_back,
    )  # fmt: skip
    return Ranking(ranked=ranked[: config.rerank_top], fell_back=fell_back)


def _ranked(candidate: Candidate, relevance: float, engagement: float, weight: float) -> RankedPost:
    return RankedPost.of(
        candidate.post,
        strategies=list(candidate.strategies),
        relevance=relevance,
        engagement=engagement,
        final_score=final_score(relevance, engagement, weight),
    )
