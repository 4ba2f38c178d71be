"""Seed 004's contracts: SummarizeRequest and PostPayload in, SummarizeResult out; and the
one engine output (``AnswerDraft``) that holds the summary and the staff-engineer sections."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, HttpUrl, computed_field

from crowdsift.pipeline.reddit.models import DraftClaim, DraftPivot, DraftRow
from crowdsift.sources.models import SourceKind


class CommentPayload(BaseModel):
    """One comment as evidence, with its place in the thread (cited as ``[comment:ID]``)."""

    model_config = ConfigDict(frozen=True)

    comment_id: str
    excerpt: str = Field(description="cleaned and truncated (≤ max_comment_chars)")
    score: int
    depth: int = Field(0, ge=0, description="0 for a top-level comment")
    parent_id: str = Field("", description="t1_<comment> when it replies to a comment")
    created_at: AwareDatetime | None = None
    permalink: str = Field("", description="the comment's own permalink, when it has one")


class PostPayload(BaseModel):
    """One post as evidence: the only things the summarizer may cite."""

    model_config = ConfigDict(frozen=True)

    post_id: str
    kind: SourceKind = Field("reddit", description="where the item comes from")
    subreddit: str = Field(
        description="normalised, lower case; a YouTube channel or Amazon marketplace otherwise"
    )
    title: str
    url: HttpUrl = Field(description="canonical permalink (thread, video, product), no tracking")
    body_excerpt: str
    comments: list[CommentPayload] = Field(
        default_factory=list, description="the comments shown (best scores), in thread order"
    )
    post_karma: int
    num_comments: int = Field(ge=0, description="accepted comments of this post")
    relevance_score: float
    matched_keywords: list[str] = Field(default_factory=list)
    created_at: AwareDatetime | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def top_comment_excerpts(self) -> list[str]:
        """The shown comments' excerpts (seed 004's field), in the order shown."""
        return [comment.excerpt for comment in self.comments]


class SummarizeRequest(BaseModel):
    """The evidence and the limits the selector applied (seed 004)."""

    query: str
    plan_id: UUID
    post_payloads: list[PostPayload]
    prompt_version: str
    max_posts: int
    max_comments_per_post: int
    max_post_chars: int
    max_comment_chars: int


class Source(BaseModel):
    """A post (or video, or product) the summary used, validated against the evidence."""

    post_id: str
    kind: SourceKind = "reddit"
    url: HttpUrl
    subreddit: str
    title: str


class SummarizeResult(BaseModel):
    """Grounded, schema-constrained summary (seed 004, change note 2025-12-11).

    Texts cite evidence with ``[post:ID]`` / ``[comment:ID]`` markers
    (``crowdsift.core.citations``); renderers number them into one source list and print ``[n]``.
    """

    status: Literal["ok", "partial", "error"]
    summary: str = Field(description="the answer, with [post:ID]/[comment:ID] markers")
    highlights: list[str] = Field(default_factory=list, description="takeaways, each cited")
    cautions: list[str] = Field(default_factory=list, description="risks and gaps, each cited")
    sources: list[Source] = Field(default_factory=list)
    prompt_version: str
    engine: str = Field("", description='"local" for the extractive engine, else the LLM engine')
    reason: str | None = Field(None, description="why the status is partial or error")
    abstained: bool = Field(
        False,
        description="the evidence does not discuss the question's subject, so the answer says "
        "so and cites nothing (status partial, reason 'abstained: …'); the engine was not called",
    )


class SourceRef(BaseModel):
    """A source as an engine proposes it; checked against the evidence before use."""

    post_id: str
    url: str | None = None


class AnswerDraft(BaseModel):
    """What an engine returns for the one synthesis, before grounding checks.

    ``summary``, ``highlights`` and ``cautions`` cite evidence inline as ``[post:ID]`` or
    ``[comment:ID]``; the staff-engineer sections list their ids in ``cites``.
    """

    summary: str = Field(description="the answer; cite inline as [post:ID] / [comment:ID]")
    highlights: list[str] = Field(default_factory=list, description="one-sentence takeaways")
    cautions: list[str] = Field(default_factory=list, description="risks, disagreements, gaps")
    sources: list[SourceRef] = Field(default_factory=list)
    hidden_gems: list[DraftClaim] = Field(default_factory=list)
    minority_report: list[DraftClaim] = Field(default_factory=list)
    pivot_alerts: list[DraftPivot] = Field(default_factory=list)
    comparison_table: list[DraftRow] = Field(default_factory=list)
