"""Medium scoring (seed 001, phase 2): the few MEDIUM posts worth putting before reduce.

Map's MEDIUM mark is coarse: some of those posts answer part of the question, most are
background. One engine call scores them 0.0–1.0; those at or above
``medium_score_threshold`` (0.7, inclusive) are kept, at most ``medium_max_selected`` (5), best
first. Ties keep the map's order (a stable sort), so equal inputs give equal output.

At most ``medium_max_posts`` (50) posts are scored: the *first* 50 in the map's order, which is
the order the store returned the posts in (newest first) — recent posts win the cap, the same
preference the reduce phase applies within a relevance group. Scoring is a refinement, never a
gate: any engine failure returns no posts and logs a warning, and the answer is built from the
HIGH posts alone.

The local engine scores with map's blended similarity, calibrated so that the MEDIUM threshold
maps to 0.5 and the HIGH threshold to 1.0 (linear in between, clipped): a post must sit in the
upper part of the MEDIUM band (60 % of the way to HIGH) to reach 0.7.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineError
from crowdsift.core.log import get_logger
from crowdsift.core.sentences import truncate_words
from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage
from crowdsift.pipeline.experts.map import local_scores, posts_message
from crowdsift.sources.experts.models import ExpertPost, ScoredPost

log = get_logger(__name__)


class MediumScore(BaseModel):
    """One post's score; values outside 0–1 are clipped (models overshoot, they do not lie)."""

    post_id: int
    score: float

    @field_validator("score")
    @classmethod
    def _clip(cls, value: float) -> float:
        return min(max(value, 0.0), 1.0)


class MediumScores(BaseModel):
    """Scores of the MEDIUM posts, one per post."""

    scores: list[MediumScore] = Field(default_factory=list)


def calibrate(blended: float, medium_threshold: float, high_threshold: float) -> float:
    """Map's blended similarity as a 0–1 score: MEDIUM threshold → 0.5, HIGH threshold → 1.0."""
    span = max(high_threshold - medium_threshold, 1e-6)
    return round(min(max(0.5 + 0.5 * (blended - medium_threshold) / span, 0.0), 1.0), 3)


@dataclass(frozen=True)
class MediumScoringTask(Task[MediumScores]):
    """Score each post 0.0–1.0 for how much it helps answer the question."""

    question: str
    posts: tuple[ExpertPost, ...]
    post_chars: int = 1200
    high_threshold: float = 0.40
    medium_threshold: float = 0.22

    phase = "medium_scoring"
    output_model = MediumScores

    def messages(self) -> list[ChatMessage]:
        system = (
            "You score posts from one expert's Telegram channel for how much each helps answer "
            "the user's question, from 0.0 to 1.0: 1.0 answers it directly with specifics; "
            "0.7 answers an important part of it; 0.4 is useful background only; 0.0 is "
            'unrelated. Return JSON {"scores": [{"post_id": int, "score": float}]} with one '
            "entry per post, using only the listed post IDs. " + FENCE_NOTE
        )
        user = posts_message(self.question, self.posts, self.post_chars)
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def parse(self, data: Any) -> MediumScores:
        """Accept a bare list as well as ``{"scores": [...]}``."""
        if isinstance(data, list):
            data = {"scores": data}
        return super().parse(data)

    def run_local(self, kit: LocalKit) -> MediumScores:
        """Map's blended similarity, calibrated to 0–1 (see ``calibrate``)."""
        texts = [truncate_words(p.text.strip(), self.post_chars) for p in self.posts]
        blended = local_scores(self.question, texts, kit.embedder)
        return MediumScores(
            scores=[
                MediumScore(
                    post_id=post.post_id,
                    score=calibrate(value, self.medium_threshold, self.high_threshold),
                )
                for post, value in zip(self.posts, blended, strict=True)
            ]
        )


def select_medium(
    posts: Sequence[ScoredPost], scores: MediumScores, *, threshold: float, limit: int
) -> list[ScoredPost]:
    """Posts scoring at least ``threshold``, best first (stable), at most ``limit``.

    Scores for ids that are not among ``posts`` are ignored; a post without a score is not
    selected; if a reply scores one post twice, the first score counts.
    """
    by_id: dict[int, float] = {}
    for item in scores.scores:
        by_id.setdefault(item.post_id, item.score)
    kept = [
        post.model_copy(update={"score": by_id[post.post.post_id]})
        for post in posts
        if by_id.get(post.post.post_id, -1.0) >= threshold
    ]
    kept.sort(key=lambda p: -(p.score or 0.0))
    return kept[:limit]


async def run_medium_scoring(
    question: str,
    medium: Sequence[ScoredPost],
    engine: Engine,
    config: ExpertsConfig,
    *,
    usage: Usage | None = None,
) -> list[ScoredPost]:
    """The selected MEDIUM posts with ``score`` set; ``[]`` on any engine failure.

    ``usage``, if given, accumulates what the call cost (the contract returns only the posts).
    """
    if not medium or config.medium_max_selected == 0:
        return []
    capped = list(medium[: config.medium_max_posts])
    if len(medium) > len(capped):
        log.info("medium_capped", posts=len(medium), scored=len(capped))
    task = MediumScoringTask(
        question,
        tuple(p.post for p in capped),
        post_chars=config.map_post_chars,
        high_threshold=config.map_local_high,
        medium_threshold=config.map_local_medium,
    )
    try:
        reply = await engine.run(task)
    except EngineError as exc:
        log.warning("medium_scoring_failed", posts=len(capped), error=str(exc)[:300])
        return []
    if usage is not None:
        usage.add(reply.usage)
    selected = select_medium(
        capped,
        reply.output,
        threshold=config.medium_score_threshold,
        limit=config.medium_max_selected,
    )
    log.info("medium_scoring", scored=len(capped), selected=len(selected))
    return selected
