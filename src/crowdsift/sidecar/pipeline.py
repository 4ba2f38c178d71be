"""The Reddit sidecar end to end: formulate → scout → dedupe → rerank → drill → synthesize.

The whole run is bounded by ``SidecarConfig.timeout_s`` (120 s). Every stage writes what it has
produced into one ``_State`` as it goes, so when the bound expires the response is built from
whatever exists — ranked posts, the threads drilled so far — with ``status="partial"`` and
``timed_out=true``, instead of nothing. Source calls run on the sidecar's own thread pool,
which is abandoned (not awaited) on timeout; engine calls are cancelled.

Beside the ``RedditResponse``, a run hands back its drilled threads as a ``FetchResult`` (the
evidence) and the ``SearchPlan`` it executed, so the research run can summarise the same
evidence and report the plan the way ``crowdsift ask`` always has.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType

from crowdsift.engines.base import Engine
from crowdsift.engines.scripted import CountingEngine
from crowdsift.log import get_logger
from crowdsift.models import FetchResult, SearchPlan
from crowdsift.planner import SubredditProfile
from crowdsift.reddit.filtering import FilterConfig
from crowdsift.reddit.sources.base import RedditSource
from crowdsift.sidecar.config import SidecarConfig
from crowdsift.sidecar.dedupe import dedupe
from crowdsift.sidecar.drill import drill
from crowdsift.sidecar.formulate import formulate
from crowdsift.sidecar.models import (
    Candidate,
    DrilledThread,
    QueryAnalysis,
    RankedPost,
    RedditResponse,
    ScoutQuery,
    SidecarStatus,
    SidecarSynthesis,
)
from crowdsift.sidecar.rerank import rerank
from crowdsift.sidecar.runner import SourceRunner
from crowdsift.sidecar.scout import ScoutOutcome, scout
from crowdsift.sidecar.strategies import build_queries
from crowdsift.sidecar.synthesis import synthesize
from crowdsift.store import CommentStore
from crowdsift.tracing import annotate, stage_span

log = get_logger(__name__)

Progress = Callable[[str, str], None]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _quiet(stage: str, message: str) -> None:
    """The default progress callback: say nothing."""


@dataclass
class SidecarDeps:
    """What a sidecar run needs; every I/O dependency is injected."""

    source: RedditSource
    engine: Engine
    config: SidecarConfig = field(default_factory=SidecarConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    candidates: Sequence[SubredditProfile] = ()
    clock: Callable[[], datetime] = _utc_now
    progress: Progress = _quiet
    store: CommentStore | None = None
    """Where drilled comments are persisted (``ask --store``), as ``crowdsift fetch`` does."""


@dataclass
class SidecarRun:
    """The response, plus the evidence and plan it was built from."""

    response: RedditResponse
    evidence: FetchResult | None
    plan: SearchPlan | None
    scout: ScoutOutcome | None
    threads: list[DrilledThread] = field(default_factory=list)


@dataclass
class _State:
    stage: str = "formulate"
    analysis: QueryAnalysis | None = None
    queries: list[ScoutQuery] = field(default_factory=list)
    scout: ScoutOutcome | None = None
    duplicates_removed: int = 0
    candidates: dict[str, Candidate] = field(default_factory=dict)
    ranked: list[RankedPost] = field(default_factory=list)
    rerank_fell_back: bool = False
    drilled: dict[str, DrilledThread] = field(default_factory=dict)
    synthesis: SidecarSynthesis | None = None
    synthesis_attempted: bool = False
    errors: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    timed_out: bool = False


async def run_sidecar(
    question: str, deps: SidecarDeps, *, subreddits: Sequence[str] = ()
) -> SidecarRun:
    """Run phase 8 for ``question`` within ``deps.config.timeout_s``.

    Raises only what no partial answer can survive: an empty question or nothing to search
    (``PlanError``), bad credentials or configuration (``AuthError``/``ConfigError``).
    """
    engine = CountingEngine(deps.engine)
    state = _State()
    runner = SourceRunner(deps.config.concurrency)
    started = time.perf_counter()
    bound = asyncio.timeout(deps.config.timeout_s)
    try:
        async with bound:
            await _stages(question, deps, engine, runner, state, subreddits)
    except TimeoutError:
        if not bound.expired():
            raise
        state.timed_out = True
        state.errors.append(
            f"the Reddit sidecar hit its {deps.config.timeout_s:g} s bound during "
            f"{state.stage}; returning what it had (raise CROWDSIFT_SIDECAR_TIMEOUT for more)"
        )
        log.warning("sidecar_timeout", stage=state.stage, bound_s=deps.config.timeout_s)
    finally:
        runner.close()
    state.timings["total"] = _ms(started)
    return _finish(question, deps, engine, state)


async def _stages(
    question: str,
    deps: SidecarDeps,
    engine: Engine,
    runner: SourceRunner,
    state: _State,
    subreddits: Sequence[str],
) -> None:
    config = deps.config
    with _Timed(state, "formulate"):
        deps.progress("formulate", "reading the question (intent, time range, queries)")
        formulated = await formulate(
            question, engine=engine, candidates=deps.candidates, subreddits=subreddits,
            config=config,
        )  # fmt: skip
        state.analysis = analysis = formulated.analysis
        state.errors += formulated.errors
        state.queries = build_queries(analysis, config)

    with _Timed(state, "scout"):
        deps.progress(
            "scout",
            f"{len(state.queries)} searches in r/{', r/'.join(analysis.subreddits)} "
            f"(time={analysis.time_filter}, intent={analysis.intent})",
        )
        state.scout = found = await scout(
            state.queries,
            source=deps.source,
            runner=runner,
            filters=deps.filters,
            search_terms=[*analysis.keywords, *analysis.ai_queries],
            clock=deps.clock,
        )
        state.errors += found.errors
        kept = dedupe(found.candidates, title_similarity=config.title_similarity)
        state.duplicates_removed = kept.removed
        state.candidates = {c.post.id: c for c in kept.kept}
    if not state.candidates:
        return

    with _Timed(state, "rerank"):
        deps.progress("rerank", f"scoring the top {config.rerank_top} of {len(kept.kept)} posts")
        ranked = await rerank(question, kept.kept, engine=engine, config=config)
        state.ranked = ranked.ranked
        state.rerank_fell_back = bool(ranked.errors)
        state.errors += ranked.errors

    with _Timed(state, "drill"):
        top = state.ranked[: config.drill_top]
        deps.progress("drill", f"reading {len(top)} threads (≤{config.drill_comments} comments)")
        threads = await drill(
            top,
            state.candidates,
            source=deps.source,
            runner=runner,
            filters=deps.filters,
            limit=config.drill_comments,
            depth=config.drill_depth,
            clock=deps.clock,
            sink=state.drilled,
        )
        state.errors += [t.error for t in threads if t.error]
        if deps.store is not None:
            deps.store.upsert(c for t in threads for c in t.post.comments)

    with _Timed(state, "synthesize"):
        deps.progress("synthesize", f"synthesising {len(threads)} threads")
        state.synthesis_attempted = True
        outcome = await synthesize(question, analysis, threads, engine=engine, config=config)
        state.synthesis = outcome.synthesis
        state.errors += outcome.errors


class _Timed:
    """Time a stage into ``state.timings``, name it in ``state.stage`` (for timeouts) and trace
    it as a ``sidecar.<stage>`` span carrying the stage's counts."""

    def __init__(self, state: _State, stage: str) -> None:
        self._state = state
        self._stage = stage
        self._started = 0.0
        self._traced = stage_span(f"sidecar.{stage}")

    def __enter__(self) -> None:
        self._state.stage = self._stage
        self._started = time.perf_counter()
        self._span = self._traced.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._state.timings[self._stage] = _ms(self._started)
        annotate(self._span, **_stage_counts(self._state, self._stage))
        self._traced.__exit__(kind, error, tb)


def _stage_counts(state: _State, stage: str) -> dict[str, int]:
    """What each stage had in and out, from the state (cheap: lengths only)."""
    if stage == "formulate":
        return {"items_out": len(state.queries)}
    if stage == "scout":
        found = state.scout
        return {
            "requests": found.requests if found else 0,
            "items_in": len(found.candidates) if found else 0,
            "items_out": len(state.candidates),
            "duplicates_removed": state.duplicates_removed,
        }
    if stage == "rerank":
        return {"items_in": len(state.candidates), "items_out": len(state.ranked)}
    if stage == "drill":
        return {"items_out": len(state.drilled)}
    return {"items_in": len(state.drilled)}


def _finish(question: str, deps: SidecarDeps, engine: CountingEngine, state: _State) -> SidecarRun:
    threads = [state.drilled[r.post_id] for r in state.ranked if r.post_id in state.drilled]
    response = RedditResponse(
        status=_status(state),
        engine=engine.name,
        source=deps.source.name,
        analysis=state.analysis,
        queries=state.queries,
        candidates_found=len(state.scout.candidates) if state.scout else 0,
        duplicates_removed=state.duplicates_removed,
        ranked=state.ranked,
        rerank_fell_back=state.rerank_fell_back,
        threads_drilled=sum(1 for t in threads if t.error is None),
        comments_drilled=sum(len(t.comments) for t in threads),
        synthesis=state.synthesis,
        timed_out=state.timed_out,
        errors=state.errors,
        timings_ms=state.timings,
        usage=engine.usage,
    )
    plan = _plan(state.analysis, state.queries)
    evidence = _evidence(question, plan, threads, deps.clock()) if plan else None
    log.info(
        "sidecar_done", status=response.status, candidates=response.candidates_found,
        ranked=len(response.ranked), drilled=response.threads_drilled,
        timed_out=response.timed_out,
    )  # fmt: skip
    return SidecarRun(
        response=response, evidence=evidence, plan=plan, scout=state.scout, threads=threads
    )


def _status(state: _State) -> SidecarStatus:
    found = state.scout
    if found is not None and found.requests and found.failed_requests == found.requests:
        return "failed"
    if not state.candidates and not state.timed_out:
        return "no_results"
    synthesis = state.synthesis
    degraded = (
        state.timed_out
        or bool(state.errors)
        or (state.synthesis_attempted and synthesis is None)
        or (synthesis is not None and (synthesis.removed_citations or synthesis.dropped_claims))
    )
    return "partial" if degraded or synthesis is None else "ok"


def _plan(analysis: QueryAnalysis | None, queries: Sequence[ScoutQuery]) -> SearchPlan | None:
    """The executed searches as the SearchPlan ``crowdsift ask`` has always reported."""
    if analysis is None:
        return None
    terms = [q.term for q in queries] or analysis.keywords
    return SearchPlan(
        search_terms=terms[:50],
        subreddits=analysis.subreddits[:50],
        notes=(
            f"sidecar: intent={analysis.intent}, ai={analysis.ai_mode}, "
            f"time={analysis.time_filter}, strategies="
            f"{','.join(dict.fromkeys(q.strategy for q in queries))}"
        ),
    )


def _evidence(
    question: str, plan: SearchPlan, threads: Sequence[DrilledThread], now: datetime
) -> FetchResult:
    """Drilled threads as a FetchResult (a thread whose comments failed still has its post);
    each post's relevance is its sidecar final score."""
    posts = [t.post.model_copy(update={"relevance_score": t.rank.final_score}) for t in threads]
    return FetchResult(
        query=question,
        plan_id=plan.plan_id,
        search_terms=plan.search_terms,
        subreddits=plan.subreddits,
        fetched_at=now,
        posts=posts,
    )


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
