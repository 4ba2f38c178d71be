"""What every non-Reddit source hands on: one ``EvidenceItem`` per video or product.

Items carry their source ``kind`` and a canonical URL, so a summary citing one can be checked
and linked like a Reddit thread. No usernames are kept: comments are text and counts only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, HttpUrl

SourceKind = Literal["reddit", "youtube", "amazon"]


class EvidenceComment(BaseModel):
    """A top comment (YouTube) or review excerpt: text and how much it was liked."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    likes: int = Field(0, ge=0)


class EvidenceItem(BaseModel):
    """One video or product as evidence."""

    model_config = ConfigDict(frozen=True)

    kind: SourceKind
    id: str = Field(min_length=1, description="video id, ASIN …")
    title: str
    text: str = Field(description="description, or the product's features joined")
    url: HttpUrl = Field(description="canonical: youtube.com/watch?v=ID, amazon …/dp/ASIN")
    where: str = Field(description="channel title, or the marketplace")
    published_at: AwareDatetime | None = None
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="views, likes, comments (YouTube); rating, reviews (Amazon) — when offered",
    )
    comments: list[EvidenceComment] = Field(default_factory=list)


class SourceFetch(BaseModel):
    """What one gated source fetch returned and what the gate did."""

    kind: SourceKind
    query: str
    items: list[EvidenceItem] = Field(default_factory=list, description="relevant items only")
    fetched: int = Field(0, description="items the last fetch returned, before the gate")
    yield_ratio: float = 1.0
    refetched: bool = False
    failed_open: bool = False
    skipped: str | None = Field(None, description="why the source did not run (no credentials…)")
    errors: list[str] = Field(default_factory=list)
