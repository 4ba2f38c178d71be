"""What one research run takes and reports: ``AskDeps`` in; ``ResearchResult`` (the JSON of
``crowdsift ask --json``, the API's job result) and its ``FetchSummary`` out.

Kept apart from ``crowdsift.pipeline.research`` (which runs the research) and imports no pipeline
code, so that readers of results — the API, the MCP server, the renderers, the job store — and the
wiring that builds a run's dependencies depend on the shape, not on the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from crowdsift.core.models import RejectReason, SearchPlan, SourceStatus
from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import SourceFetch

if TYPE_CHECKING:
    from datetime import datetime

    from crowdsift.core.config import Settings
    from crowdsift.core.config.experts import ExpertsConfig
    from crowdsift.core.config.reddit import RedditConfig
    from crowdsift.core.models import FetchResult
    from crowdsift.core.source import RedditSource
    from crowdsift.core.store import CommentStore
    from crowdsift.engines.base import Engine
    from crowdsift.engines.embedding import Embedder
    from crowdsift.pipeline.gate.run_sources import ExtraSource, SourceTool
    from crowdsift.pipeline.reddit.communities import DirectoryLoader
    from crowdsift.pipeline.reddit.topicality import SubredditProfile
    from crowdsift.sources.experts.models import ExpertStore

Progress = Callable[[str, str], None]
"""``progress(stage, message)``: what the run is doing, for a terminal, a job log or SSE."""


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
    posts_judged: int = Field(0, description="candidates the relevance gate judged")
    requests: int = Field(0, description="HTTP requests the source made (cache hits excluded)")
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
    sample_data: bool = Field(
        False,
        description="true when the bundled demo archive answered: its posts and permalinks are "
        "sample data written by the crowdsift project, not real Reddit content",
    )
    source_status: list[SourceStatus] = Field(
        default_factory=list,
        description="each Reddit source tried, in order: ok | empty | unreachable | "
        "rate_limited | auth_failed | not_configured | skipped, with detail and requests",
    )
    window: str | None = Field(
        None,
        description='the time window searched, as the answer states it: "threads since '
        '2026-10-26" with --since (plan.since holds the bound), else the automatic one '
        '(a fast-moving topic: "threads from the last month …")',
    )


def _quiet(stage: str, message: str) -> None:
    """The default progress callback: say nothing."""


@dataclass
class AskDeps:
    """What a research run needs; ``crowdsift.pipeline.wiring`` builds these from settings."""

    settings: Settings
    engine: Engine
    source: RedditSource | None
    store: CommentStore | None = None
    candidates: Sequence[SubredditProfile] = ()
    """Subreddits the formulation may choose: an archive's own; empty for a live source, whose
    candidates come from ``directory`` per question."""
    candidates_closed: bool = True
    """True when ``candidates`` are all the source has (an archive); a live source takes any
    valid subreddit the formulation names."""
    progress: Progress = field(default=_quiet)
    expert_store: ExpertStore | None = None
    experts_config: ExpertsConfig | None = None
    """None = ``settings.experts``."""
    reddit_config: RedditConfig | None = None
    """None = ``settings.reddit``."""
    source_tools: Mapping[ExtraSource, SourceTool] | None = None
    """YouTube / Amazon fetch tools; None = the APIs configured in settings."""
    budget_usd: float | None = None
    """Stop LLM calls once the run cost this much; None = ``settings.budget_usd``."""
    sample_data: bool = False
    """The Reddit source is the bundled demo archive (``ResearchResult.sample_data``)."""
    since: datetime | None = None
    """``--since``: every source (Reddit, YouTube, experts) keeps only what is newer."""
    directory: DirectoryLoader | None = None
    """The user's directory of real subreddits, read (or built the first time) when a live
    question names no community: its candidates are the communities closest to the question.
    None = no directory (an archive, or a caller that always names communities)."""
    embedder: Embedder | None = None
    """What the directory is matched with (the local engine's embedder, or MiniLM beside an
    LLM engine); None without a directory."""
    fallback: Engine | None = None
    """The local engine an LLM's answer falls back to when it keeps no citation of the evidence
    (``answer_request``); None: no fallback (the local engine itself, or a caller's choice)."""

    def budget(self) -> float | None:
        return self.budget_usd if self.budget_usd is not None else self.settings.budget_usd


@dataclass
class AskRun:
    """The result, plus the evidence it was built from (for eval and previews)."""

    result: ResearchResult
    evidence: FetchResult
