"""Selector and synthesis limits (seed 004): config objects, separate from the DTOs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from crowdsift.core.config import ScoringConfig, Settings


class SelectorConfig(BaseModel):
    """How much evidence the selector hands the engine."""

    model_config = ConfigDict(frozen=True)

    max_posts: int = Field(12, ge=1, le=100)
    max_comments_per_post: int = Field(3, ge=0, le=50)
    max_post_chars: int = Field(600, ge=50)
    max_comment_chars: int = Field(300, ge=30)
    max_evidence_chars: int = Field(
        120_000, ge=1000, description="evidence characters shared by all posts (~30k tokens)"
    )

    @classmethod
    def for_drilled_threads(cls, threads: int = 15) -> SelectorConfig:
        """Deep evidence for the staff-engineer sections: every drilled thread, its 40
        best-scored comments (hidden gems live deep in threads), longer excerpts."""
        return cls(
            max_posts=max(1, min(threads, 100)),
            max_comments_per_post=40,
            max_post_chars=1500,
            max_comment_chars=600,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> SelectorConfig:
        return cls(
            max_posts=settings.summary_max_posts,
            max_comments_per_post=settings.summary_max_comments_per_post,
            max_post_chars=settings.max_post_chars,
            max_comment_chars=settings.max_comment_chars,
        )


class SynthesisConfig(BaseModel):
    """What the summary may be: its character budget, how many highlights and cautions."""

    model_config = ConfigDict(frozen=True)

    summary_char_budget: PositiveInt = 1200
    max_highlights: int = Field(5, ge=0, le=20)
    max_cautions: int = Field(5, ge=0, le=20)
    min_evidence_posts: int = Field(3, ge=0, description="fewer posts → partial, thin evidence")
    scoring: ScoringConfig = Field(
        default_factory=lambda: ScoringConfig.model_construct(),
        description="the local engine's claim-scorer weights (defaults unless given)",
    )

    @classmethod
    def from_settings(cls, settings: Settings) -> SynthesisConfig:
        return cls(
            summary_char_budget=settings.summary_char_budget,
            max_highlights=settings.max_highlights,
            max_cautions=settings.max_cautions,
            min_evidence_posts=settings.min_evidence_posts,
            scoring=settings.scoring,
        )
