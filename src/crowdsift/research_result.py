"""What one research run reports: ``ResearchResult`` (the JSON of ``crowdsift ask --json``, the
API's job result) and its ``FetchSummary``.

Kept apart from ``crowdsift.research`` (which runs the research) so that readers of results
— the API, the MCP server, the renderers — depend on the shape, not on the pipeline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from crowdsift.engines.base import Usage
from crowdsift.experts.models import ExpertResponse
from crowdsift.models import RejectReason, SearchPlan
from crowdsift.sidecar.models import RedditResponse
from crowdsift.sources.models import SourceFetch
from crowdsift.summarizer.models import SummarizeResult


class FetchSummary(BaseModel):
    """The fetch and the gate in numbers (the posts themselves are in the sources)."""

    source: str
    posts_seen: int
    posts_accepted: int
    posts_relevant: int
    yield_ratio: float
    refetched: bool
    gate_failed_open: bool
    comments_accepted: int
    post_rejections: dict[RejectReason, int] = Field(default_factory=dict)
    skipped_subreddits: dict[str, str] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)


ResearchStatus = Literal["ok", "partial", "error"]


class ResearchResult(BaseModel):
    """Everything ``crowdsift ask --json`` reports about one question.

    ``plan``, ``fetch`` and ``summary`` describe the Reddit answer and are null when Reddit
    search is off; ``expert_responses`` is empty when no expert was asked (Reddit-only mode).
    """

    question: str
    status: ResearchStatus = Field(
        description="ok when every part is ok; error when every part failed; else partial"
    )
    engine: str = Field(description='"local" (extractive, not an LLM) or "openai"')
    plan: SearchPlan | None = None
    fetch: FetchSummary | None = None
    summary: SummarizeResult | None = None
    expert_responses: list[ExpertResponse] = Field(default_factory=list)
    reddit_response: RedditResponse | None = None
    source_fetches: list[SourceFetch] = Field(
        default_factory=list,
        description="YouTube / Amazon: what each gated source returned, or why it was skipped",
    )
    timings_ms: dict[str, float]
    usage: Usage
