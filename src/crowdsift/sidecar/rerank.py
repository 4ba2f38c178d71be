"""Phase 3, reranking: the top candidates scored for relevance, then blended with engagement.

Search engines rank by words and votes, so a viral meme that shares a word with the question
can sit above the thread that answers it. The rerank (seed 001, phase 3):

1. orders all candidates by a cheap heuristic (``heuristic_order``) and keeps the top
   ``rerank_top`` (40); the rest never appear in the result;
2. asks the engine once for a 0.0–1.0 relevance per kept post (``RerankTask``);
3. scores ``final = w × relevance + (1 − w) × engagement`` with ``w = relevance_weight``
   (0.8), engagement being log-scaled votes plus comments normalised over the kept set.

With ``w = 0.8`` an off-topic post can gain at most 0.2 from votes, so an on-topic thread
with modest engagement outranks it. The engine's scores are never trusted blindly: a reply of
the wrong length, with non-numbers, or an engine failure falls back to the lexical relevance
the fetch already computed (``Post.relevance_score``), with the error reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence
from crowdsift.errors import EngineError
from crowdsift.experts.map import blend_weights, content_terms
from crowdsift.log import get_logger
from crowdsift.sidecar.config import SidecarConfig
from crowdsift.sidecar.models import STRATEGIES, Candidate, RankedPost, RelevanceScores

log = get_logger(__name__)

SNIPPET_CHARS = 300
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


def heuristic_score(candidate: Candidate, engagement: float) -> float:
    """``0.6 × lexical + 0.3 × engagement + 0.1 × strategies/4``: the pre-rerank order.

    ``lexical`` is the fetch's ``post.relevance_score``, ``engagement`` normalised over the set,
    and a post several strategies found independently is more likely on-topic.
    """
    share = len(set(candidate.strategies)) / len(STRATEGIES)
    return (
        H_LEXICAL * candidate.post.relevance_score
        + H_ENGAGEMENT * engagement
        + H_STRATEGIES * share
    )


def heuristic_order(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates by ``heuristic_score`` (highest first), ties by post id."""
    engagement = normalise_engagement([c.engagement for c in candidates])
    scored = [(heuristic_score(c, e), c) for c, e in zip(candidates, engagement, strict=True)]
    scored.sort(key=lambda item: (-item[0], item[1].post.id))
    return [candidate for _, candidate in scored]


def final_score(relevance: float, engagement: float, weight: float) -> float:
    """``weight × relevance + (1 − weight) × engagement``, inputs and result clamped to 0–1."""
    w, r, e = _clamp(weight), _clamp(relevance), _clamp(engagement)
    return _clamp(w * r + (1.0 - w) * e)


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


@dataclass(frozen=True)
class RerankTask(Task[RelevanceScores]):
    """Score each candidate's relevance to the question, 0.0–1.0, in the order given."""

    question: str
    candidates: tuple[Candidate, ...]

    phase = "synthesis"
    output_model = RelevanceScores

    def messages(self) -> list[ChatMessage]:
        count = len(self.candidates)
        system = (
            "You judge whether Reddit threads help answer a question. Return JSON "
            f'{{"scores": [...]}} with exactly {count} numbers from 0.0 to 1.0, one per item, '
            "in the order the items are given. Score what the thread is about, not how "
            "popular it is: 1.0 answers the question directly, 0.5 is related background, "
            "0.0 is off-topic. Viral posts, memes and clickbait that only share a word with "
            "the question score low (0.1 or less) however many votes they have. " + FENCE_NOTE
        )
        items = "\n\n".join(
            f"Item {n}:\n{fence(f'item-{n}', snippet(c))}"
            for n, c in enumerate(self.candidates, start=1)
        )
        user = f"Question:\n{fence('question', self.question)}\n\n{count} items:\n\n{items}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def run_local(self, kit: LocalKit) -> RelevanceScores:
        """Cosine similarity of question and title+body embeddings, negatives clamped to 0,
        blended with the share of the question's content words the post contains — 0.75/0.25,
        or 0.35/0.65 for questions in non-Latin scripts (map's ``blend_weights``: the bundled
        English model cannot tell Cyrillic texts apart)."""
        if not self.candidates:
            return RelevanceScores(scores=[])
        texts = [c.post.text for c in self.candidates]
        vectors = kit.embedder.embed([self.question, *texts])
        cosine = np.asarray(vectors[1:] @ vectors[0]).tolist()
        terms = content_terms(self.question)
        w_sim, w_lex = blend_weights(self.question)
        scores = []
        for text, sim in zip(texts, cosine, strict=True):
            lexical = len(terms & content_terms(text)) / len(terms) if terms else 0.0
            scores.append(round(_clamp(w_sim * _clamp(float(sim)) + w_lex * lexical), 4))
        return RelevanceScores(scores=scores)


def snippet(candidate: Candidate) -> str:
    """Title, then the first ``SNIPPET_CHARS`` characters of the body."""
    body = candidate.post.selftext.strip()[:SNIPPET_CHARS]
    return f"{candidate.post.title}\n{body}" if body else candidate.post.title


@dataclass
class RerankOutcome:
    """The ranked top posts (best first), what the engine call cost, and what went wrong."""

    ranked: list[RankedPost]
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)


async def rerank(
    question: str,
    candidates: Sequence[Candidate],
    *,
    engine: Engine,
    config: SidecarConfig,
) -> RerankOutcome:
    """Rank the top ``config.rerank_top`` candidates (see the module docstring)."""
    top = heuristic_order(candidates)[: config.rerank_top]
    if not top:
        return RerankOutcome(ranked=[])
    usage = Usage()
    errors: list[str] = []
    relevance: list[float] | None = None
    try:
        reply = await engine.run(RerankTask(question, tuple(top)))
        usage = reply.usage
        relevance, problem = _checked(reply.output.scores, len(top))
        if problem:
            errors.append(f"{problem}; ranked by lexical relevance instead")
    except EngineError as exc:
        errors.append(f"rerank by the engine failed ({exc}); ranked by lexical relevance instead")
    if relevance is None:
        relevance = [c.post.relevance_score for c in top]
        log.warning("sidecar_rerank_fallback", errors=errors)
    engagement = normalise_engagement([c.engagement for c in top])
    ranked = [
        _ranked(c, r, e, config.relevance_weight)
        for c, r, e in zip(top, relevance, engagement, strict=True)
    ]
    ranked.sort(key=lambda p: (-p.final_score, p.post_id))
    log.info(
        "sidecar_reranked", candidates=len(candidates), ranked=len(ranked),
        fallback=bool(errors),
    )  # fmt: skip
    return RerankOutcome(ranked=ranked, usage=usage, errors=errors)


def _checked(scores: Sequence[float], expected: int) -> tuple[list[float] | None, str]:
    """Scores clamped to 0–1, or None and why they cannot be used."""
    if len(scores) != expected:
        return None, f"rerank returned {len(scores)} scores for {expected} posts"
    if not all(isinstance(s, int | float) and math.isfinite(s) for s in scores):
        return None, "rerank returned scores that are not numbers"
    return [_clamp(float(s)) for s in scores], ""


def _ranked(candidate: Candidate, relevance: float, engagement: float, weight: float) -> RankedPost:
    post = candidate.post
    return RankedPost(
        post_id=post.id,
        url=post.url,
        title=post.title,
        subreddit=post.subreddit,
        post_karma=post.post_karma,
        num_comments=post.num_comments,
        created_at=post.created_at,
        strategies=list(candidate.strategies),
        relevance=relevance,
        engagement=engagement,
        final_score=final_score(relevance, engagement, weight),
    )
