"""Seed 004's contracts: SummarizeRequest and PostPayload in, SummarizeResult out."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, HttpUrl

from crowdsift.sources.models import SourceKind


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
    top_comment_excerpts: list[str] = Field(default_factory=list)
    post_karma: int
    num_comments: int = Field(ge=0, description="accepted comments of this post")
    relevance_score: float
    matched_keywords: list[str] = Field(default_factory=list)


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
    """Grounded, schema-constrained summary (seed 004, change note 2025-12-11)."""

    status: Literal["ok", "partial", "error"]
    summary: str
    highlights: list[str] = Field(default_factory=list)
    cautions: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    prompt_version: str
    engine: str = Field("", description='"local" for the extractive engine, else the LLM engine')
    reason: str | None = Field(None, description="why the status is partial or error")


class SourceRef(BaseModel):
    """A source as an engine proposes it; checked against the evidence before use."""

    post_id: str
    url: str | None = None


class SummaryDraft(BaseModel):
    """What an engine returns for the summarize task, before grounding checks.

    ``summary``, ``highlights`` and ``cautions`` cite evidence inline as ``[post:ID]``.
    """

    summary: str
    highlights: list[str] = Field(default_factory=list)
    cautions: list[str] = Field(default_factory=list)
    sources: list[SourceRef] = Field(default_factory=list)
