"""The research run behind ``crowdsift ask``, and the ``ResearchResult`` it produces.

``run_research`` runs the Experts Panel (phases 1–7, one response per expert) and the Reddit
sidecar (phase 8) **in parallel**; the sidecar's drilled threads are then summarised (seed 004),
so ``plan``, ``fetch`` and ``summary`` keep meaning what they meant before the sidecar existed.
No experts and Reddit on is Reddit-only mode: phases 1–7 are skipped entirely. Experts with
Reddit off skips phase 8 and leaves ``plan``/``fetch``/``summary`` empty.

``ask`` (in ``crowdsift.quick_ask``, still importable from here) is the lighter pipeline
(plan → relevance-gated fetch → summarize) that came first; it stays a library function for
programs that want one summary without the sidecar's drill.

Every engine call goes through one ``CountingEngine`` so the result reports LLM usage (calls and
tokens per phase) and each stage is timed. I/O dependencies are injected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import uuid4

from crowdsift.config import Settings
from crowdsift.engines.base import Engine, Usage
from crowdsift.engines.scripted import CountingEngine
from crowdsift.errors import ConfigError, CrowdsiftError, PlanError
from crowdsift.experts.config import ExpertsConfig
from crowdsift.experts.models import ExpertResponse, ExpertStore
from crowdsift.models import FetchResult, SearchPlan
from crowdsift.planner import SubredditProfile
from crowdsift.reddit.filtering import FilterConfig
from crowdsift.reddit.sources.base import RedditSource
from crowdsift.research_result import FetchSummary as FetchSummary
from crowdsift.research_result import ResearchResult as ResearchResult
from crowdsift.research_result import ResearchStatus as ResearchStatus
from crowdsift.sidecar.config import SidecarConfig
from crowdsift.sidecar.models import RedditResponse
from crowdsift.sidecar.pipeline import SidecarDeps, SidecarRun, run_sidecar
from crowdsift.sources.models import SourceFetch
from crowdsift.sources.run import (
    ExtraSource,
    SourceTool,
    evidence_items,
    fetch_sources,
    tools_from_settings,
)
from crowdsift.store import CommentStore
from crowdsift.summarizer.config import SelectorConfig, SummarizerConfig
from crowdsift.summarizer.models import SummarizeResult
from crowdsift.summarizer.orchestrator import run_summarizer
from crowdsift.tracing import (
    COST_USD,
    ENGINE,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    STATUS,
    Attributes,
    observe,
    stage_span,
)

Progress = Callable[[str, str], None]


def __getattr__(name: str) -> object:
    """``crowdsift.research.ask`` keeps working; it lives in ``crowdsift.quick_ask`` now."""
    if name == "ask":
        from crowdsift.quick_ask import ask

        return ask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    source: RedditSource | None
    store: CommentStore | None = None
    candidates: Sequence[SubredditProfile] = DEFAULT_SUBREDDITS
    progress: Progress = field(default=lambda stage, message: None)
    expert_store: ExpertStore | None = None
    experts_config: ExpertsConfig | None = None
    sidecar_config: SidecarConfig | None = None
    source_tools: Mapping[ExtraSource, SourceTool] | None = None
    budget_usd: float | None = None
    """Stop LLM calls once the run cost this much; None = ``settings.budget_usd``."""

    def budget(self) -> float | None:
        return self.budget_usd if self.budget_usd is not None else self.settings.budget_usd

    def tools(self) -> Mapping[ExtraSource, SourceTool]:
        """The YouTube / Amazon fetch tools: given ones, else the configured APIs."""
        return self.source_tools or tools_from_settings(self.settings)

    def reddit(self) -> RedditSource:
        if self.source is None:
            raise ConfigError("this run has no Reddit source; build it with Reddit search on")
        return self.source


def elapsed_ms(since: float) -> float:
    """Milliseconds since a ``time.perf_counter()`` reading, for ``timings_ms``."""
    return round((time.perf_counter() - since) * 1000, 1)


# --- The research run: experts and the Reddit sidecar in parallel ----------------------------


def research(
    question: str,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    use_recent_only: bool = False,
    *,
    settings: Settings | None = None,
    **options: object,
) -> ResearchResult:
    """Answer ``question`` from the chosen experts and Reddit (blocking; for programs).

    Settings come from the environment unless given. ``options`` are those of
    ``crowdsift.ask_command.research_deps`` (``source``, ``engine``, ``archive``, ``persist``)
    plus ``subreddits``. From async code, await ``crowdsift.ask_command.research_async``.
    """
    from crowdsift.ask_command import research_async
    from crowdsift.config import get_settings

    return asyncio.run(
        research_async(
            settings or get_settings(),
            question,
            experts=experts,
            search_reddit=search_reddit,
            use_recent_only=use_recent_only,
            **options,  # type: ignore[arg-type]
        )
    )


@dataclass
class _RedditPart:
    response: RedditResponse | None
    plan: SearchPlan | None = None
    fetch: FetchSummary | None = None
    summary: SummarizeResult | None = None
    evidence: FetchResult | None = None


def _research_attributes(
    question: str,
    deps: AskDeps,
    *,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    sources: Sequence[str] = (),
    **_: object,
) -> Attributes:
    """The root span's inputs: the question (the only untrusted text a span carries)."""
    return {
        "crowdsift.question": question[:500],
        "crowdsift.experts": list(experts),
        "crowdsift.search_reddit": search_reddit,
        "crowdsift.sources": list(sources),
        ENGINE: deps.engine.name,
    }


def _run_attributes(run: AskRun) -> Attributes:
    usage = run.result.usage
    return {
        STATUS: run.result.status,
        INPUT_TOKENS: usage.prompt_tokens,
        OUTPUT_TOKENS: usage.completion_tokens,
        COST_USD: usage.cost_usd,
        "crowdsift.calls": usage.calls,
    }


@observe("research", attributes=_research_attributes, result_attributes=_run_attributes)
async def run_research(
    question: str,
    deps: AskDeps,
    *,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    use_recent_only: bool = False,
    subreddits: Sequence[str] = (),
    sources: Sequence[ExtraSource] = (),
) -> AskRun:
    """Ask the chosen experts and Reddit at once; see the module docstring for the modes.

    ``sources`` adds YouTube and/or Amazon: fetched beside Reddit, each behind the relevance
    gate, and summarised together with the Reddit threads (or alone, with Reddit off).

    With experts and Reddit together, a Reddit failure (bad credentials, say) becomes a
    ``failed`` ``reddit_response`` and the experts still answer; in Reddit-only mode the error is
    raised, because there is nothing else to show.
    """
    if not question.strip():
        raise PlanError("the question is empty; ask something like 'is the Plaud Note worth it?'")
    if not experts and not search_reddit and not sources:
        raise PlanError(
            "nothing to research: name experts (--experts a,b) or keep Reddit search on"
        )
    engine = CountingEngine(deps.engine, budget_usd=deps.budget())
    timings: dict[str, float] = {}
    started = time.perf_counter()
    extra = asyncio.ensure_future(_extra_sources(question, deps, engine, sources, timings))

    async def expert_branch() -> list[ExpertResponse]:
        if not experts:
            return []
        clock = time.perf_counter()
        deps.progress("experts", f"asking {', '.join(experts)}")
        try:
            with stage_span("research.experts", items_in=len(experts)):
                return await _ask_experts(question, deps, engine, experts, use_recent_only)
        finally:
            timings["experts"] = elapsed_ms(clock)

    async def reddit_branch() -> _RedditPart | None:
        if not search_reddit:
            return None
        clock = time.perf_counter()
        try:
            with stage_span("research.reddit", source=deps.source.name if deps.source else None):
                return await _ask_reddit(question, deps, engine, subreddits, timings, extra)
        except CrowdsiftError as exc:
            if not experts and not sources:
                raise
            return _failed_reddit(deps, engine, exc)
        finally:
            timings["reddit"] = elapsed_ms(clock)

    try:
        expert_responses, reddit = await asyncio.gather(expert_branch(), reddit_branch())
        fetches = await extra
    finally:
        extra.cancel()
    if sources and (reddit is None or reddit.summary is None):
        reddit = await _summarize_sources_alone(question, deps, engine, fetches, reddit, timings)
    timings["total"] = elapsed_ms(started)
    result = ResearchResult(
        question=question,
        status=_overall_status(expert_responses, reddit, fetches, engine.usage),
        engine=engine.name,
        plan=reddit.plan if reddit else None,
        fetch=reddit.fetch if reddit else None,
        summary=reddit.summary if reddit else None,
        expert_responses=expert_responses,
        reddit_response=reddit.response if reddit and reddit.response else None,
        source_fetches=fetches,
        timings_ms=timings,
        usage=engine.usage,
    )
    evidence = reddit.evidence if reddit and reddit.evidence else _empty_evidence(question)
    return AskRun(result=result, evidence=evidence)


async def _ask_experts(
    question: str,
    deps: AskDeps,
    engine: Engine,
    experts: Sequence[str],
    use_recent_only: bool,
) -> list[ExpertResponse]:
    from crowdsift.experts.pipeline import run_panel

    if deps.expert_store is None:
        raise ConfigError("experts were asked for but no expert store was given")
    return await run_panel(
        question,
        experts,
        store=deps.expert_store,
        engine=engine,
        config=deps.experts_config or ExpertsConfig(),
        use_recent_only=use_recent_only,
    )


async def _ask_reddit(
    question: str,
    deps: AskDeps,
    engine: Engine,
    subreddits: Sequence[str],
    timings: dict[str, float],
    extra: Awaitable[list[SourceFetch]],
) -> _RedditPart:
    settings = deps.settings
    source = deps.reddit()
    run = await run_sidecar(
        question,
        SidecarDeps(
            source=source,
            engine=engine,
            config=deps.sidecar_config or SidecarConfig(),
            filters=FilterConfig.from_settings(settings),
            candidates=deps.candidates,
            progress=deps.progress,
            store=deps.store,
        ),
        subreddits=subreddits,
    )
    part = _RedditPart(response=run.response, plan=run.plan, evidence=run.evidence)
    if run.evidence is None or run.plan is None:
        return part
    items = evidence_items(await extra)
    clock = time.perf_counter()
    more = f" and {len(items)} videos/products" if items else ""
    deps.progress("summarize", f"summarizing {len(run.evidence.posts)} drilled threads{more}")
    with stage_span("research.summarize", items_in=len(run.evidence.posts) + len(items)):
        part.summary = await run_summarizer(
            run.evidence,
            engine=engine,
            selector_config=SelectorConfig.from_settings(settings),
            summarizer_config=SummarizerConfig.from_settings(settings),
            extra=items,
        )
    timings["summarize"] = elapsed_ms(clock)
    part.fetch = _sidecar_fetch_summary(source.name, run)
    return part


async def _extra_sources(
    question: str,
    deps: AskDeps,
    engine: Engine,
    sources: Sequence[ExtraSource],
    timings: dict[str, float],
) -> list[SourceFetch]:
    if not sources:
        return []
    clock = time.perf_counter()
    try:
        with stage_span("research.sources", sources=list(sources)):
            tools = deps.tools()
            return await fetch_sources(
                question, sources, tools=tools, engine=engine, progress=deps.progress
            )
    finally:
        timings["sources"] = elapsed_ms(clock)


async def _summarize_sources_alone(
    question: str,
    deps: AskDeps,
    engine: Engine,
    fetches: list[SourceFetch],
    reddit: _RedditPart | None,
    timings: dict[str, float],
) -> _RedditPart | None:
    """Reddit off (or failed): the videos and products get a summary of their own."""
    items = evidence_items(fetches)
    if not items:
        return reddit
    clock = time.perf_counter()
    deps.progress("summarize", f"summarizing {len(items)} videos/products")
    with stage_span("research.summarize", items_in=len(items)):
        summary = await run_summarizer(
            _empty_evidence(question),
            engine=engine,
            selector_config=SelectorConfig.from_settings(deps.settings),
            summarizer_config=SummarizerConfig.from_settings(deps.settings),
            extra=items,
        )
    timings["summarize"] = elapsed_ms(clock)
    part = reddit or _RedditPart(response=None)
    part.summary = summary
    return part


def _sidecar_fetch_summary(source: str, run: SidecarRun) -> FetchSummary:
    """The sidecar's scout and drill in the counts ``ask --json`` has always reported."""
    response = run.response
    scout = run.scout
    relevant = sum(1 for r in response.ranked if r.relevance >= 0.5)
    return FetchSummary(
        source=source,
        posts_seen=scout.posts_seen if scout else 0,
        posts_accepted=response.candidates_found,
        posts_relevant=len(run.evidence.posts) if run.evidence else 0,
        yield_ratio=round(relevant / len(response.ranked), 4) if response.ranked else 0.0,
        refetched=False,
        gate_failed_open=response.rerank_fell_back,
        comments_accepted=response.comments_drilled,
        post_rejections=scout.rejections if scout else {},
        skipped_subreddits=scout.skipped_subreddits if scout else {},
        errors=response.errors,
    )


def _failed_reddit(deps: AskDeps, engine: Engine, exc: CrowdsiftError) -> _RedditPart:
    name = deps.source.name if deps.source is not None else "none"
    return _RedditPart(
        response=RedditResponse(status="failed", engine=engine.name, source=name, errors=[str(exc)])
    )


def _overall_status(
    experts: Sequence[ExpertResponse],
    reddit: _RedditPart | None,
    fetches: Sequence[SourceFetch] = (),
    usage: Usage | None = None,
) -> ResearchStatus:
    """``error`` when every part failed; ``partial`` when any did or the budget cut calls."""
    parts: list[str] = [e.status for e in experts]
    if usage is not None and usage.budget_exhausted:
        parts.append("partial")
    parts += ["failed" if f.errors else "ok" for f in fetches if not f.skipped]
    if reddit is not None:
        if reddit.response is not None:
            parts.append(reddit.response.status)
        if reddit.summary is not None:
            parts.append(reddit.summary.status)
    failed = {"failed", "error"}
    if parts and all(p in failed for p in parts):
        return "error"
    return "ok" if all(p == "ok" for p in parts) else "partial"


def _empty_evidence(question: str) -> FetchResult:
    return FetchResult(
        query=question, plan_id=uuid4(), search_terms=[question[:60] or "-"], subreddits=[],
        fetched_at=datetime.now(UTC),
    )  # fmt: skip
