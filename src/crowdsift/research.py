"""The research run behind ``crowdsift ask``: plan → fetch → gate → summarize.

Each stage takes the model its left neighbour produced. Every engine call goes through one
``CountingEngine`` so the result reports LLM usage (calls and tokens per phase) and each stage
is timed. I/O dependencies (engine, source, store, clock of progress) are injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from crowdsift.config import Settings
from crowdsift.engines.base import Engine, Usage
from crowdsift.engines.scripted import CountingEngine
from crowdsift.gate import GatedFetch, gated_fetch
from crowdsift.models import FetchReport, FetchResult, RejectReason, SearchPlan
from crowdsift.planner import SubredditProfile, plan
from crowdsift.reddit.fetcher import RedditFetcher, SearchOptions
from crowdsift.reddit.filtering import FilterConfig
from crowdsift.reddit.sources.base import RedditSource
from crowdsift.store import CommentStore
from crowdsift.summarizer.config import SelectorConfig, SummarizerConfig
from crowdsift.summarizer.models import SummarizeResult
from crowdsift.summarizer.orchestrator import run_summarizer

Progress = Callable[[str, str], None]

# Communities the planner may choose from when the source has no archive to profile.
DEFAULT_SUBREDDITS: tuple[SubredditProfile, ...] = tuple(
    SubredditProfile(name=name, description=description)
    for name, description in (
        ("homeimprovement", "home repair, renovation, contractors, materials, house projects"),
        ("diy", "do it yourself projects, building, fixing and making things at home"),
        ("tools", "power tools, hand tools, drills, impact drivers, battery platforms"),
        ("woodworking", "woodworking, saws, joinery, finishing, shop setup"),
        ("gadgets", "consumer electronics, gadgets, recorders, wearables, reviews"),
        ("productivity", "note taking, meetings, apps and devices for getting things done"),
        ("chatgptcoding", "AI coding assistants, Cursor, Copilot, LLM tools for programmers"),
        ("localllama", "running local LLMs, models, quantisation, inference hardware"),
        ("rag", "retrieval augmented generation, embeddings, vector databases, chunking"),
        ("dataengineering", "data pipelines, orchestration, Airflow, Dagster, warehouses"),
        ("programming", "software development, languages, tools and practices"),
        ("buyitforlife", "durable products that last, recommendations, warranties"),
    )
)


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


class ResearchResult(BaseModel):
    """Everything ``crowdsift ask --json`` reports about one question."""

    question: str
    status: str = Field(description="the summary's status: ok, partial or error")
    engine: str = Field(description='"local" (extractive, not an LLM) or "openai"')
    plan: SearchPlan
    fetch: FetchSummary
    summary: SummarizeResult
    timings_ms: dict[str, float]
    usage: Usage


@dataclass
class AskRun:
    """The result, plus the evidence it was built from (for eval and previews)."""

    result: ResearchResult
    evidence: FetchResult


@dataclass
class AskDeps:
    """What a research run needs; the CLI builds these from settings."""

    settings: Settings
    engine: Engine
    source: RedditSource
    store: CommentStore | None = None
    candidates: Sequence[SubredditProfile] = DEFAULT_SUBREDDITS
    progress: Progress = field(default=lambda stage, message: None)


async def ask(question: str, deps: AskDeps, *, subreddits: Sequence[str] = ()) -> AskRun:
    """Answer ``question`` with what the communities in the plan said."""
    settings = deps.settings
    engine = CountingEngine(deps.engine)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    deps.progress("plan", "planning searches")
    clock = time.perf_counter()
    planned = await plan(question, engine=engine, candidates=deps.candidates, subreddits=subreddits)
    timings["plan"] = _ms(clock)
    search_plan = planned.plan
    deps.progress(
        "fetch",
        f"searching r/{', r/'.join(search_plan.subreddits)} for "
        f"{', '.join(repr(t) for t in search_plan.search_terms)}",
    )

    clock = time.perf_counter()
    gated = await gated_fetch(
        search_plan,
        question,
        fetch=lambda p, limit: _fetch(deps, p, limit, question),
        engine=engine,
        initial_limit=settings.gate_initial_limit,
        min_yield=settings.gate_min_yield,
        source=deps.source.name,
    )
    timings["fetch_and_gate"] = _ms(clock)
    deps.progress(
        "summarize",
        f"{len(gated.result.posts)} relevant posts of {gated.fetched_posts} "
        f"(yield {gated.yield_ratio:.0%}{', refetched' if gated.refetched else ''}); summarizing",
    )

    clock = time.perf_counter()
    summary = await run_summarizer(
        gated.result,
        engine=engine,
        selector_config=SelectorConfig.from_settings(settings),
        summarizer_config=SummarizerConfig.from_settings(settings),
    )
    timings["summarize"] = _ms(clock)
    timings["total"] = _ms(started)

    result = ResearchResult(
        question=question,
        status=summary.status,
        engine=engine.name,
        plan=search_plan,
        fetch=_fetch_summary(deps.source.name, gated.report, gated),
        summary=summary,
        timings_ms=timings,
        usage=engine.usage,
    )
    return AskRun(result=result, evidence=gated.result)


def _fetch(
    deps: AskDeps, search_plan: SearchPlan, limit: int, question: str
) -> tuple[FetchResult, FetchReport]:
    options = SearchOptions.from_settings(deps.settings)
    options = options.model_copy(
        update={"max_posts_per_query": limit, "page_size": min(options.page_size, limit)}
    )
    fetcher = RedditFetcher(
        deps.source,
        filters=FilterConfig.from_settings(deps.settings),
        options=options,
        store=deps.store,
    )
    outcome = fetcher.fetch(search_plan, query=question)
    return outcome.result, outcome.report


def _fetch_summary(source: str, report: FetchReport, gated: GatedFetch) -> FetchSummary:
    return FetchSummary(
        source=source,
        posts_seen=report.posts_seen,
        posts_accepted=report.posts_accepted,
        posts_relevant=len(gated.result.posts),
        yield_ratio=gated.yield_ratio,
        refetched=gated.refetched,
        gate_failed_open=gated.failed_open,
        comments_accepted=report.comments_accepted,
        post_rejections=report.post_rejections,
        skipped_subreddits=report.skipped_subreddits,
        errors=report.errors,
    )


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
