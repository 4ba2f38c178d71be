"""The models the Reddit branch (seed 001's "sidecar") passes between its stages.

formulate → ``QueryAnalysis`` → ``SearchPlan`` of ``PlanQuery`` · fetcher → ``Candidate`` (both
in ``crowdsift.core.models``) · gate + rerank → ``RankedPost`` · drill → ``DrilledThread`` ·
the one synthesis → ``RedditSynthesis`` (with the engine's draft, in
``crowdsift.pipeline.synthesis.models``: the answer's models live with the answer) · all of it →
``RedditResponse``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.core.config import TimeFilter
from crowdsift.core.models import AwareDatetime, PlanQuery, Post, Strategy
from crowdsift.engines.base import Usage
from crowdsift.pipeline.synthesis.models import RedditSynthesis

Intent = Literal["how_to", "comparison", "troubleshooting", "general"]
AIMode = Literal["building_ai", "using_ai", "none"]
Temporal = Literal["fast_moving", "evergreen"]
RedditStatus = Literal["ok", "partial", "no_results", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- Query formulation --------------------------------------------------------------------


class FormulationDraft(_Model):
    """What an engine proposes for a question (validated and corrected by ``formulate``)."""

    english_question: str = Field(description="the question in English search language")
    intent: Intent = "general"
    ai_mode: AIMode = "none"
    temporal: Temporal = "evergreen"
    keywords: list[str] = Field(
        default_factory=list, description="core search phrases in English, most specific first"
    )
    ai_queries: list[str] = Field(
        default_factory=list, description="up to 3 Reddit search queries written for the intent"
    )
    subreddits: list[str] = Field(default_factory=list, description="names without r/")
    compared: list[str] = Field(
        default_factory=list, description='the options of an "X vs Y" question, else empty'
    )


class Subject(_Model):
    """What the question is about, and the token sequences any of which counts as a mention.

    Read from the question once, when it is formulated
    (``crowdsift.pipeline.synthesis.subject.derive_subject``), so every later stage judges the
    same subject. ``name`` is for people ("the Sony WH-1000XM6"); each term is a tuple of
    lower-case tokens.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    terms: tuple[tuple[str, ...], ...] = ()


class QueryAnalysis(_Model):
    """The formulated question every later stage reads."""

    question: str
    language: str = Field(description="ISO 639-1 code of the question's language")
    english_question: str
    intent: Intent
    ai_mode: AIMode
    temporal: Temporal
    time_filter: TimeFilter = Field(description='"month" for fast-moving topics, else "all"')
    keywords: list[str] = Field(min_length=1)
    ai_queries: list[str] = Field(default_factory=list)
    subreddits: list[str] = Field(min_length=1)
    compared: list[str] = Field(default_factory=list)
    subject: Subject | None = Field(
        None,
        description="the named products or compared options, else the content terms; None when "
        "the question names nothing the evidence could be checked against",
    )


# --- Rerank ---------------------------------------------------------------------------------


class RankedPost(_Model):
    """A candidate with its scores: ``final = w × relevance + (1 − w) × engagement``."""

    post_id: str
    url: str
    title: str
    subreddit: str
    post_karma: int
    num_comments: int
    created_at: AwareDatetime | None = None
    strategies: list[Strategy]
    relevance: float = Field(ge=0.0, le=1.0)
    engagement: float = Field(ge=0.0, le=1.0, description="engagement normalised to 0–1")
    final_score: float = Field(ge=0.0, le=1.0)

    @classmethod
    def of(
        cls,
        post: Post,
        *,
        strategies: list[Strategy],
        relevance: float,
        engagement: float,
        final_score: float,
    ) -> RankedPost:
        """``post``'s identity and counts with the given scores."""
        return cls(
            post_id=post.id, url=post.url, title=post.title, subreddit=post.subreddit,
            post_karma=post.post_karma, num_comments=post.num_comments,
            created_at=post.created_at, strategies=strategies, relevance=relevance,
            engagement=engagement, final_score=final_score,
        )  # fmt: skip


# --- Deep drill -----------------------------------------------------------------------------


class ThreadComment(_Model):
    """One approved comment of a drilled thread, with its place in the tree."""

    comment_id: str
    post_id: str
    parent_id: str = Field(description="t3_<post> for top-level comments, else t1_<comment>")
    depth: int = Field(ge=0, description="0 for a top-level comment")
    body: str
    score: int
    created_at: AwareDatetime | None = None
    author_hash: str | None = None
    permalink: str


class DrilledThread(_Model):
    """A top post and up to ``drill_comments`` of its comments, down to ``drill_depth``."""

    post: Post = Field(description="the post; comments are in ``comments`` with tree data")
    rank: RankedPost
    comments: list[ThreadComment] = Field(default_factory=list)
    error: str | None = Field(None, description="why the comments could not be fetched")


# --- The response --------------------------------------------------------------------------------


class RedditResponse(_Model):
    """The Reddit branch as ``ResearchResult.reddit_response``: what it found and concluded."""

    status: RedditStatus
    engine: str = Field(description='"local" (extractive, not an LLM), "openai" or "scripted"')
    source: str
    analysis: QueryAnalysis | None = None
    queries: list[PlanQuery] = Field(default_factory=list)
    candidates_found: int = 0
    duplicates_removed: int = 0
    ranked: list[RankedPost] = Field(default_factory=list)
    rerank_fell_back: bool = Field(
        False, description="the engine's relevance was unusable; lexical relevance ranked instead"
    )
    threads_drilled: int = 0
    comments_drilled: int = 0
    synthesis: RedditSynthesis | None = None
    timed_out: bool = False
    errors: list[str] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
