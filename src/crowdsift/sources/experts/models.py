"""The Experts Panel vocabulary: what the importer stores and every phase passes along.

An *expert* is one Telegram channel (plus, optionally, its linked discussion group). Posts are
channel messages; their ids are Telegram message ids, unique only within a channel, so every
record carries ``expert_id`` and every store query filters by it (expert isolation). Citations
in answers are ``[post:ID]`` with the Telegram message id; post URLs are
``https://t.me/<channel>/<id>``.

``ExpertStore`` is the read/write interface the phases get injected;
``crowdsift.sources.experts.db`` implements it with SQLAlchemy (SQLite default, PostgreSQL via
``CROWDSIFT_DATABASE_URL``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crowdsift.core.models import AwareDatetime

EXPERT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TME_URL_RE = re.compile(r"^https://t\.me/(?:[A-Za-z0-9_]+|c/\d+)/\d+$")
"""A post link: ``t.me/<username>/<id>``, or ``t.me/c/<channel id>/<id>`` without a username."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Relevance(StrEnum):
    """Map-phase marks, plus CONTEXT for posts the resolve phase pulled in by links."""

    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"
    CONTEXT = "CONTEXT"


RELEVANCE_ORDER: dict[Relevance, int] = {
    Relevance.HIGH: 0,
    Relevance.MEDIUM: 1,
    Relevance.LOW: 2,
    Relevance.CONTEXT: 3,
}

LinkKind = Literal["reply", "forward", "mention"]


class Expert(_Model):
    """One imported channel."""

    expert_id: str = Field(description="lower-case slug, e.g. 'homelab_notes'")
    name: str = Field(description="the channel's display name")
    channel: str = Field(description="t.me username used in post URLs")
    language: str | None = Field(None, description="ISO 639-1 code of most posts, if known")

    @field_validator("expert_id")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not EXPERT_ID_RE.fullmatch(value):
            raise ValueError(
                f"expert_id {value!r} must be 1-64 lower-case letters, digits, '_' or '-'"
            )
        return value


class ExpertSummary(Expert):
    """``crowdsift experts list``: an expert with counts and the date range of its posts."""

    posts: int = 0
    comments: int = 0
    first_post_at: AwareDatetime | None = None
    last_post_at: AwareDatetime | None = None


class ExpertPost(_Model):
    """One channel post. ``post_id`` is the Telegram message id (cited as ``[post:ID]``)."""

    expert_id: str
    post_id: int = Field(ge=1)
    text: str
    date: AwareDatetime
    url: str = Field(description="https://t.me/<channel>/<post_id>")
    views: int | None = None
    forwarded_from: str | None = None

    @field_validator("url")
    @classmethod
    def _tme(cls, url: str) -> str:
        if not TME_URL_RE.fullmatch(url):
            raise ValueError(f"url must look like https://t.me/<channel>/<id>, got {url!r}")
        return url


class PostLink(_Model):
    """A directed edge between two posts of one expert (reply, forward of own post, mention)."""

    expert_id: str
    source_id: int
    target_id: int
    kind: LinkKind


class ExpertComment(_Model):
    """A message in the linked discussion group, attached to the channel post it discusses."""

    expert_id: str
    comment_id: int
    post_id: int = Field(description="the channel post this comment thread belongs to")
    author: str
    author_is_expert: bool = False
    text: str
    date: AwareDatetime
    reply_to_comment_id: int | None = None


class DriftGroup(_Model):
    """A topic-drift comment group: a discussion under one post that wandered to a new topic."""

    expert_id: str
    group_id: str
    post_id: int = Field(description="the channel post whose comments drifted")
    topic: str
    keywords: list[str] = Field(default_factory=list)
    comment_ids: list[int] = Field(default_factory=list)
    date: AwareDatetime = Field(description="newest comment in the group (recent-only filter)")


class ScoredPost(_Model):
    """A post with its mark from map (or CONTEXT from resolve) and, for MEDIUM, its score."""

    post: ExpertPost
    relevance: Relevance
    score: float | None = Field(None, ge=0.0, le=1.0)
    reason: str | None = None


class ExpertSource(_Model):
    """A post the answer rests on, as the response lists it."""

    post_id: int
    url: str
    date: AwareDatetime
    relevance: Relevance
    excerpt: str = ""


class CommentSection(_Model):
    """One of the comment synthesis' four sections; ``title`` is in the query's language."""

    kind: Literal["expert_notes", "community_notes", "expert_drift", "community_opinions"]
    title: str
    text: str
    comment_ids: list[int] = Field(default_factory=list)


class ExpertResponse(_Model):
    """The panel's answer for one expert."""

    expert_id: str
    status: Literal["ok", "partial", "no_results", "failed"] = "ok"
    answer: str = ""
    language: str = Field("en", description="ISO 639-1 code of the answer")
    main_sources: list[ExpertSource] = Field(default_factory=list)
    comment_sections: list[CommentSection] = Field(default_factory=list)
    removed_citations: list[str] = Field(
        default_factory=list,
        description=(
            "citations dropped because they were not in the evidence: [post:ID] from the "
            "answer, '<section>: comment:ID' from comment sections"
        ),
    )
    notes: list[str] = Field(
        default_factory=list, description="degradations, e.g. a language mismatch"
    )
    counts: dict[str, int] = Field(default_factory=dict, description="posts per phase")
    timings_ms: dict[str, float] = Field(default_factory=dict, description="wall time per phase")
    engine: str = "local"


class ExpertStore(Protocol):
    """What the phases read and write. Every method filters by ``expert_id``."""

    def experts(self) -> list[ExpertSummary]: ...

    def get_expert(self, expert_id: str) -> Expert | None: ...

    def posts(self, expert_id: str, *, since: datetime | None = None) -> list[ExpertPost]: ...

    def posts_by_id(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertPost]: ...

    def links(self, expert_id: str, post_ids: Sequence[int]) -> list[PostLink]:
        """Edges where any of ``post_ids`` is the source or the target."""
        ...

    def comments(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertComment]: ...

    def all_comments(self, expert_id: str) -> list[ExpertComment]: ...

    def drift_groups(
        self, expert_id: str, *, since: datetime | None = None
    ) -> list[DriftGroup]: ...

    def replace_drift_groups(self, expert_id: str, groups: Sequence[DriftGroup]) -> None: ...
