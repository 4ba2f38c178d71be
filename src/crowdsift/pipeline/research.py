"""The one research run behind ``crowdsift ask``, the API, the web page and MCP.

```
question ─► Reddit branch (reddit.branch.run_reddit): formulate → SearchPlan → RedditFetcher
            → relevance gate (one call, one 2× refetch) → rerank (reuses the gate's scores)
            → drill (top 15)                                                   ─┐
         ─► YouTube / Amazon (gate.run_sources.fetch_sources, each gated)       ├─► ONE synthesis
         ─► Experts Panel (experts.pipeline.run_panel), beside it              ─┘   (synthesis.
                                                                                    answer)
                                                                         ─► ResearchResult
```

The synthesis runs once per question over the drilled threads and the videos/products; its one
checked output is both ``summary`` (seed 004) and ``reddit_response.synthesis`` (the
staff-engineer sections of seed 001), so the two never disagree. No experts and Reddit on is
Reddit-only mode; ``--no-reddit`` with experts skips the branch and leaves ``plan``/``fetch``/
``summary`` empty. Every engine call goes through one ``CountingEngine`` so the result reports
LLM usage per phase; every stage is timed. I/O dependencies come in ``AskDeps``.

``research`` is the blocking library entry point; it builds the dependencies from
settings (``crowdsift.pipeline.wiring``) and runs ``run_research``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.errors import ConfigError, CrowdsiftError, PlanError
from crowdsift.core.models import FetchResult
from crowdsift.core.since import describe_window
from crowdsift.core.tracing import (
    COST_USD,
    ENGINE,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    STATUS,
    Attributes,
    observe,
    stage_span,
)
from crowdsift.engines.base import Engine
from crowdsift.engines.scripted import CountingEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.fetch.filtering import FilterConfig
from crowdsift.pipeline.gate.run_sources import (
    ExtraSource,
    evidence_items,
    fetch_sources,
    tools_from_settings,
)
from crowdsift.pipeline.outcome import Synthesized, answer_parts, fetch_summary
from crowdsift.pipeline.reddit.branch import RedditDeps, RedditRun, bound_message, run_reddit
from crowdsift.pipeline.result import AskDeps, AskRun, ResearchResult
from crowdsift.pipeline.status import overall_status
from crowdsift.pipeline.synthesis.answer import synthesize_answer
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.wiring import EngineChoice, ResearchOptions, research_deps
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import EvidenceItem, SourceFetch
from crowdsift.sources.reddit.chain import answered_by_sample, source_status


def elapsed_ms(since: float) -> float:
    """Milliseconds since a ``time.perf_counter()`` reading, for ``timings_ms``."""
    return round((time.perf_counter() - since) * 1000, 1)


# --- The library entry point ------------------------------------------------------------------


def research(
    question: str,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    use_recent_only: bool = False,
    *,
    settings: Settings | None = None,
    source: SourceName | None = None,
    engine: EngineChoice | None = None,
    archive: Path | None = None,
    persist: bool = True,
    subreddits: Sequence[str] = (),
    sources: Sequence[ExtraSource] = (),
    budget_usd: float | None = None,
    since: datetime | None = None,
) -> ResearchResult:
    """Answer ``question`` from Reddit (and the chosen experts, YouTube, Amazon); blocking.

    Settings come from the environment unless given; ``since`` (``parse_since("30d", now)``)
    keeps every source to what is newer. From async code, await ``research_async`` with the
    same arguments.
    """
    return asyncio.run(
        research_async(
            question,
            experts=experts,
            search_reddit=search_reddit,
            use_recent_only=use_recent_only,
            settings=settings,
            options=ResearchOptions(
                source=source,
                engine=engine,
                archive=archive,
                persist=persist,
                budget_usd=budget_usd,
                since=since,
            ),
            subreddits=subreddits,
            sources=sources,
        )
    )


async def research_async(
    question: str,
    *,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    use_recent_only: bool = False,
    settings: Settings | None = None,
    options: ResearchOptions | None = None,
    subreddits: Sequence[str] = (),
    sources: Sequence[ExtraSource] = (),
) -> ResearchResult:
    """The whole research run, its dependencies built from settings and released after."""
    from crowdsift.core.config import get_settings

    async with research_deps(
        settings or get_settings(),
        options or ResearchOptions(),
        experts=experts,
        search_reddit=search_reddit,
    ) as deps:
        run = await run_research(
            question, deps, experts=experts, search_reddit=search_reddit,
            use_recent_only=use_recent_only, subreddits=subreddits, sources=sources,
        )  # fmt: skip
        return run.result


# --- The research run ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _RedditPart:
    run: RedditRun | None = None
    failure: str | None = None


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
    """Ask Reddit, the chosen experts and sources at once, then synthesise once.

    With experts or other sources beside it, a Reddit failure (bad credentials, say) becomes a
    ``failed`` ``reddit_response`` and the rest still answers; in Reddit-only mode the error is
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
    expert_responses, reddit, fetches = await asyncio.gather(
        _expert_branch(question, deps, engine, experts, use_recent_only, timings),
        _reddit_branch(
            question, deps, engine, subreddits, timings,
            searched=search_reddit, alone=not experts and not sources,
        ),
        _extra_sources(question, deps, engine, sources, timings),
    )  # fmt: skip
    synthesized = await _synthesize(question, deps, engine, reddit, evidence_items(fetches),
                                    timings)  # fmt: skip
    timings["total"] = elapsed_ms(started)
    result = _result(question, deps, engine, reddit, synthesized, expert_responses, fetches,
                     timings)  # fmt: skip
    evidence = reddit.run.evidence if reddit.run and reddit.run.evidence else None
    return AskRun(result=result, evidence=evidence or _empty_evidence(question))


async def _expert_branch(
    question: str,
    deps: AskDeps,
    engine: CountingEngine,
    experts: Sequence[str],
    use_recent_only: bool,
    timings: dict[str, float],
) -> list[ExpertResponse]:
    """The Experts Panel for every asked expert (none: nothing), timed."""
    if not experts:
        return []
    clock = time.perf_counter()
    deps.progress("experts", f"asking {', '.join(experts)}")
    try:
        with stage_span("research.experts", items_in=len(experts)):
            return await _ask_experts(question, deps, engine, experts, use_recent_only)
    finally:
        timings["experts"] = elapsed_ms(clock)


async def _reddit_branch(
    question: str,
    deps: AskDeps,
    engine: CountingEngine,
    subreddits: Sequence[str],
    timings: dict[str, float],
    *,
    searched: bool,
    alone: bool,
) -> _RedditPart:
    """The Reddit branch, timed; its failure is the run's when Reddit is ``alone``, else a
    part of the answer beside the experts and other sources."""
    if not searched:
        return _RedditPart()
    clock = time.perf_counter()
    try:
        with stage_span("research.reddit", source=deps.source.name if deps.source else None):
            return _RedditPart(run=await _search_reddit(question, deps, engine, subreddits))
    except CrowdsiftError as exc:
        if alone:
            raise
        return _RedditPart(failure=str(exc))
    finally:
        timings["reddit"] = elapsed_ms(clock)


def _result(
    question: str,
    deps: AskDeps,
    engine: CountingEngine,
    reddit: _RedditPart,
    synthesized: Synthesized,
    expert_responses: list[ExpertResponse],
    fetches: list[SourceFetch],
    timings: dict[str, float],
) -> ResearchResult:
    """The run's parts as one result, each status decided once (``outcome``, ``status``)."""
    source = deps.source.name if deps.source is not None else "none"
    parts = answer_parts(source, engine.name, engine.usage, reddit.run, synthesized, reddit.failure)
    response, summary = parts.reddit, parts.summary
    return ResearchResult(
        question=question,
        status=overall_status(expert_responses, response, summary, fetches, engine.usage),
        engine=engine.name,
        plan=reddit.run.plan if reddit.run else None,
        fetch=fetch_summary(source, reddit.run) if reddit.run else None,
        summary=summary,
        expert_responses=expert_responses,
        reddit_response=response,
        source_fetches=fetches,
        timings_ms=timings,
        usage=engine.usage,
        sample_data=(deps.sample_data or answered_by_sample(deps.source))
        and reddit.run is not None,
        source_status=source_status(deps.source),
        window=_window(deps.since, reddit.run),
    )


def _window(since: datetime | None, run: RedditRun | None) -> str | None:
    """The window line: ``--since``'s, else the automatic one the formulation chose, counted
    back from the newest post an archive holds and maybe widened (None when Reddit was not
    searched)."""
    if run is None or run.analysis is None:
        return describe_window(since)
    return describe_window(
        since, run.analysis.time_filter, newest=run.newest, widened_from=run.widened_from
    )


async def _ask_experts(
    question: str,
    deps: AskDeps,
    engine: Engine,
    experts: Sequence[str],
    use_recent_only: bool,
) -> list[ExpertResponse]:
    from crowdsift.pipeline.experts.pipeline import run_panel

    if deps.expert_store is None:
        raise ConfigError("experts were asked for but no expert store was given")
    return await run_panel(
        question,
        experts,
        store=deps.expert_store,
        engine=engine,
        config=deps.experts_config or deps.settings.experts,
        use_recent_only=use_recent_only,
        since=deps.since,
    )


async def _search_reddit(
    question: str, deps: AskDeps, engine: Engine, subreddits: Sequence[str]
) -> RedditRun:
    if deps.source is None:
        raise ConfigError("this run has no Reddit source; build it with Reddit search on")
    return await run_reddit(
        question,
        RedditDeps(
            source=deps.source,
            engine=engine,
            config=deps.reddit_config or deps.settings.reddit,
            filters=FilterConfig.from_settings(deps.settings),
            candidates=deps.candidates,
            candidates_closed=deps.candidates_closed and bool(deps.candidates),
            progress=deps.progress,
            store=deps.store,
            search=SearchOptions.from_settings(deps.settings),
            min_yield=deps.settings.gate_min_yield,
            since=deps.since,
            directory=deps.directory,
            embedder=deps.embedder,
            directory_cache=deps.settings.data_dir,
        ),
        subreddits=subreddits,
    )


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
            tools = deps.source_tools or tools_from_settings(deps.settings, since=deps.since)
            return await fetch_sources(
                question, sources, tools=tools, engine=engine, progress=deps.progress
            )
    finally:
        timings["sources"] = elapsed_ms(clock)


async def _synthesize(
    question: str,
    deps: AskDeps,
    engine: Engine,
    reddit: _RedditPart,
    items: Sequence[EvidenceItem],
    timings: dict[str, float],
) -> Synthesized:
    """The one synthesis over the drilled threads and the videos/products (no answer when
    Reddit was off or failed and no other source found anything).

    The Reddit answer as a whole keeps ``CROWDSIFT_REDDIT_TIMEOUT``: the synthesis gets what
    the branch left of it, and a branch that already hit the bound is not synthesised. Hitting
    the bound here is said in the outcome, never written into the branch's finished run."""
    run = reddit.run
    if run is None and not items:
        return Synthesized()
    config = deps.reddit_config or deps.settings.reddit
    remaining = config.timeout_s - (run.timings.get("total", 0.0) / 1000 if run else 0.0)
    if run is not None and (run.timed_out or remaining <= 0):
        return Synthesized()
    threads = run.threads if run else []
    clock = time.perf_counter()
    more = f" and {len(items)} videos/products" if items else ""
    deps.progress("synthesize", f"synthesising {len(threads)} threads{more}")
    try:
        async with asyncio.timeout(remaining):
            with stage_span("research.synthesize", items_in=len(threads) + len(items)):
                answer = await synthesize_answer(
                    question,
                    threads,
                    analysis=run.analysis if run else None,
                    engine=engine,
                    extra=items,
                    selector_config=SelectorConfig.from_settings(deps.settings),
                    synthesis_config=SynthesisConfig.from_settings(deps.settings),
                    reddit_config=config,
                    fallback=deps.fallback,
                    skipped=run.report.skipped_subreddits if run and run.report else None,
                )
                return Synthesized(answer=answer)
    except TimeoutError:
        bound = bound_message(config.timeout_s, "synthesize")
        return Synthesized(timed_out=True, errors=(bound,))
    finally:
        timings["synthesize"] = elapsed_ms(clock)


def _empty_evidence(question: str) -> FetchResult:
    return FetchResult(
        query=question, plan_id=uuid4(), search_terms=[question[:60] or "-"], subreddits=[],
        fetched_at=datetime.now(UTC),
    )  # fmt: skip
