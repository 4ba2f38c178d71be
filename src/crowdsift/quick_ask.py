"""The lighter pipeline that came first: plan → relevance-gated fetch (seed 002) → summary.

It stays a library function for programs that want one summary without the sidecar's drill;
``crowdsift ask`` runs ``crowdsift.research.run_research`` instead. ``bench_ask`` measures it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from crowdsift.engines.scripted import CountingEngine
from crowdsift.gate import GatedFetch, gated_fetch
from crowdsift.models import FetchReport, FetchResult, SearchPlan
from crowdsift.planner import plan
from crowdsift.reddit.fetcher import RedditFetcher, SearchOptions
from crowdsift.reddit.filtering import FilterConfig
from crowdsift.research import AskDeps, AskRun, FetchSummary, ResearchResult, elapsed_ms
from crowdsift.summarizer.config import SelectorConfig, SummarizerConfig
from crowdsift.summarizer.orchestrator import run_summarizer
from crowdsift.tracing import observe


@observe("ask", attributes=lambda question, deps, **_: {"crowdsift.question": question[:500]})
async def ask(question: str, deps: AskDeps, *, subreddits: Sequence[str] = ()) -> AskRun:
    """Answer ``question`` with what the communities in the plan said."""
    settings = deps.settings
    engine = CountingEngine(deps.engine, budget_usd=deps.budget())
    timings: dict[str, float] = {}
    started = time.perf_counter()

    deps.progress("plan", "planning searches")
    clock = time.perf_counter()
    planned = await plan(question, engine=engine, candidates=deps.candidates, subreddits=subreddits)
    timings["plan"] = elapsed_ms(clock)
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
        source=deps.reddit().name,
    )
    timings["fetch_and_gate"] = elapsed_ms(clock)
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
    timings["summarize"] = elapsed_ms(clock)
    timings["total"] = elapsed_ms(started)

    result = ResearchResult(
        question=question,
        status="partial"
        if engine.usage.budget_exhausted and summary.status == "ok"
        else summary.status,
        engine=engine.name,
        plan=search_plan,
        fetch=_fetch_summary(deps.reddit().name, gated.report, gated),
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
        deps.reddit(),
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
