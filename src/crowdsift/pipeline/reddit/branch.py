"""The Reddit branch of the one research pipeline: formulate → plan → fetch → gate → rerank → drill.

```
question ─► formulate ─► SearchPlan ─► RedditFetcher.search ─► adaptive_gate ─► rerank ─► drill
            QueryAnalysis  queries of the   veto → clean → score  one batched     0.8 rel   top 15,
                           four strategies  → filter → dedupe     call; < 50 % →  + 0.2 eng ≤ 100
                                                                  one 2× refetch  top 40    comments
```

Every stage is a separate module; this one only sequences them. The fetcher is the one
search-and-screen engine (``crowdsift fetch`` uses it too); the gate's one call both keeps the
relevant candidates and scores them, and the rerank reuses those scores. The synthesis is not
here: the research run synthesises once over these threads and any YouTube/Amazon items.

The branch is bounded by ``RedditConfig.timeout_s`` (120 s). Each stage writes what it has
produced into one ``_State`` as it goes, so when the bound expires the run is built from what
exists — ranked posts, the threads drilled so far — with ``timed_out``. Blocking source calls
run on a private pool (``SourceRunner``) that is abandoned, not awaited, on timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType

from crowdsift.core.config import RedditConfig
from crowdsift.core.log import get_logger
from crowdsift.core.models import Candidate, Comment, FetchReport, FetchResult, SearchPlan
from crowdsift.core.since import format_since
from crowdsift.core.source import RedditSource
from crowdsift.core.store import CommentStore
from crowdsift.core.text import utc_now
from crowdsift.core.tracing import annotate, stage_span
from crowdsift.engines.base import Engine
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.fetch.bm25 import rank_candidates
from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
from crowdsift.pipeline.fetch.filtering import FilterConfig
from crowdsift.pipeline.gate.judge import Gated, adaptive_gate
from crowdsift.pipeline.gate.replies import LOCAL_STORES, best_replies
from crowdsift.pipeline.reddit.budget import by_date, can_afford_searches, drill_count
from crowdsift.pipeline.reddit.communities import (
    DirectoryLoader,
    closest_communities,
    newest_held,
    recent_profiles,
    searches_meaning,
)
from crowdsift.pipeline.reddit.drill import drill
from crowdsift.pipeline.reddit.formulate import formulate
from crowdsift.pipeline.reddit.models import DrilledThread, QueryAnalysis, RankedPost
from crowdsift.pipeline.reddit.recent import RecentProfile, newest_of, word_shares
from crowdsift.pipeline.reddit.rerank import heuristic_order, rerank
from crowdsift.pipeline.reddit.runner import SourceRunner
from crowdsift.pipeline.reddit.strategies import build_plan, search_words, widen
from crowdsift.pipeline.reddit.topicality import SubredditProfile

log = get_logger(__name__)

Progress = Callable[[str, str], None]
MIN_CANDIDATES = 5
"""Fewer candidates than this after the plan's searches, and the plan is widened once
(``strategies.widen``): an answer from one or two threads is seldom the community's."""


def _quiet(stage: str, message: str) -> None:
    """The default progress callback: say nothing."""


@dataclass
class RedditDeps:
    """What the Reddit branch needs; every I/O dependency is injected."""

    source: RedditSource
    engine: Engine
    config: RedditConfig = field(default_factory=RedditConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    candidates: Sequence[SubredditProfile] = ()
    candidates_closed: bool = True
    """True when ``candidates`` are every subreddit the source has (an archive's profiles);
    False for a live source, where they are suggestions and any valid name may be searched."""
    clock: Callable[[], datetime] = utc_now
    progress: Progress = _quiet
    store: CommentStore | None = None
    """Where drilled comments are persisted (``ask --store``), as ``crowdsift fetch`` does."""
    search: SearchOptions = field(default_factory=SearchOptions)
    """The fetcher's page size and concurrency (``CROWDSIFT_PAGE_SIZE``, ``_CONCURRENCY``)."""
    min_yield: float = 0.5
    """Below this share of relevant candidates on a full first page, the gate refetches once."""
    since: datetime | None = None
    """``--since``: the plan searches the window covering it and keeps nothing older."""
    directory: DirectoryLoader | None = None
    """The real subreddits a live source may search, loaded (or first built) when a question
    names none: its candidates are the ``DIRECTORY_CANDIDATES`` closest to it (by meaning and
    by name) instead of ``candidates``."""
    embedder: Embedder | None = None
    """What the directory is matched with; needed with ``directory``."""
    directory_cache: Path | None = None
    """Where the directory's vectors are kept between runs (the data directory)."""


@dataclass
class GateSummary:
    """What the relevance gate did to the Reddit candidates."""

    judged: int = 0
    relevant: int = 0
    yield_ratio: float = 0.0
    refetched: bool = False
    failed_open: bool = False


@dataclass
class RedditRun:
    """Everything the branch produced, for the synthesis and the result."""

    analysis: QueryAnalysis | None = None
    plan: SearchPlan | None = None
    report: FetchReport | None = None
    candidates: list[Candidate] = field(default_factory=list)
    duplicates_removed: int = 0
    searches: int = 0
    failed_searches: int = 0
    gate: GateSummary = field(default_factory=GateSummary)
    ranked: list[RankedPost] = field(default_factory=list)
    rerank_fell_back: bool = False
    threads: list[DrilledThread] = field(default_factory=list)
    evidence: FetchResult | None = None
    errors: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    timed_out: bool = False
    stage: str = "formulate"
    drilled: dict[str, DrilledThread] = field(default_factory=dict)
    profiles: list[RecentProfile] = field(default_factory=list)
    """The searched communities' recent threads, for a live source that lists them."""
    newest: datetime | None = None
    """The newest post the source holds for the subreddits searched (an archive's, or a live
    community's newest post, as its recent threads show it); the topic's window counts back
    from it."""
    widened_from: int | None = None
    """How many threads the topic's window held when that was too few and the search widened
    once to all time; None when it did not widen."""
    spent_before: int = 0
    """The source's request count when the question started: its budget is per question."""


async def run_reddit(
    question: str, deps: RedditDeps, *, subreddits: Sequence[str] = ()
) -> RedditRun:
    """Run the Reddit branch for ``question`` within ``deps.config.timeout_s``.

    Raises only what no partial answer can survive: an empty question or nothing to search
    (``PlanError``), bad credentials or configuration (``AuthError``/``ConfigError``).
    """
    run = RedditRun(spent_before=deps.source.stats.requests)
    runner = SourceRunner(deps.search.concurrency)
    started = time.perf_counter()
    bound = asyncio.timeout(deps.config.timeout_s)
    try:
        async with bound:
            await _stages(question, deps, runner, run, subreddits)
    except TimeoutError:
        if not bound.expired():
            raise
        run.timed_out = True
        run.errors.append(bound_message(deps.config.timeout_s, run.stage))
        log.warning("reddit_timeout", stage=run.stage, bound_s=deps.config.timeout_s)
    finally:
        runner.close()
    run.threads = [run.drilled[r.post_id] for r in run.ranked if r.post_id in run.drilled]
    if run.plan is not None:
        run.evidence = _evidence(question, run.plan, run.threads, deps.clock())
    run.timings["total"] = _ms(started)
    log.info(
        "reddit_done", candidates=len(run.candidates), ranked=len(run.ranked),
        drilled=len(run.threads), timed_out=run.timed_out,
    )  # fmt: skip
    return run


def unfetched_message(found: int, budget: int) -> str:
    """What a run says when few of the threads it found were relevant and reading the next
    pages would pass the source's request budget: the answer rests on what it had."""
    return (
        f"few of the {found} threads found were relevant, and reading more would pass this "
        f"source's budget of {budget} requests a question (CROWDSIFT_REDDIT_DATED_REQUESTS)"
    )


def unwidened_message(found: int, budget: int) -> str:
    """What a run says when its window held too few threads and searching all time as well
    would pass the source's request budget: the answer rests on few threads, and says so."""
    return (
        f"the topic's window held only {found} threads, and searching all time too would pass "
        f"this source's budget of {budget} requests a question (CROWDSIFT_REDDIT_DATED_REQUESTS)"
    )


def bound_message(timeout_s: float, stage: str) -> str:
    """What a run that hit ``CROWDSIFT_REDDIT_TIMEOUT`` says, naming the stage it was in."""
    return (
        f"the Reddit answer hit its {timeout_s:g} s bound during {stage}; returning what it "
        "had (raise CROWDSIFT_REDDIT_TIMEOUT for more)"
    )


async def _stages(
    question: str,
    deps: RedditDeps,
    runner: SourceRunner,
    run: RedditRun,
    subreddits: Sequence[str],
) -> None:
    with _Timed(run, "formulate"):
        deps.progress("formulate", "reading the question (intent, time range, queries)")
        analysis, plan = await _formulate_and_plan(question, deps, runner, run, subreddits)

    with _Timed(run, "search"):
        deps.progress(
            "search",
            f"{len(plan.queries)} searches in r/{', r/'.join(analysis.subreddits)} "
            f"(time={_time_label(plan, analysis)}, intent={analysis.intent})",
        )
        await _search_and_gate(analysis, deps, runner, run)
    if not run.ranked:
        return

    with _Timed(run, "drill"):
        await _drill_ranked(deps, runner, run)


async def _formulate_and_plan(
    question: str,
    deps: RedditDeps,
    runner: SourceRunner,
    run: RedditRun,
    subreddits: Sequence[str],
) -> tuple[QueryAnalysis, SearchPlan]:
    """The question read (among the communities nearest it, when the user named none) and
    its plan, whose window counts back from the newest post the source holds."""
    candidates, ranked = deps.candidates, False
    if not subreddits and deps.directory is not None and deps.embedder is not None:
        nearest = await runner.call(
            closest_communities, question, deps.directory, deps.embedder,
            cache_dir=deps.directory_cache,
        )  # fmt: skip
        candidates, ranked = (nearest, True) if nearest else (deps.candidates, False)
    formulated = await formulate(
        question,
        engine=deps.engine,
        candidates=candidates,
        subreddits=subreddits,
        config=deps.config,
        closed=deps.candidates_closed,
        ranked=ranked,
    )
    run.analysis = analysis = formulated.analysis
    run.errors += formulated.errors
    run.newest = newest_held(deps.source, analysis.subreddits)
    if run.newest is None:  # a live source: its communities' recent threads say
        run.profiles = await runner.call(recent_profiles, deps.source, analysis.subreddits)
        run.newest = newest_of(run.profiles)
    shares = word_shares(search_words(analysis.english_question), run.profiles)
    meaning = await runner.call(searches_meaning, deps.source)
    run.plan = plan = build_plan(
        analysis,
        deps.config,
        page_size=deps.search.page_size,
        since=deps.since,
        now=deps.clock(),
        newest=run.newest,
        by_date=by_date(deps.source),
        by_meaning=meaning,
        shares=shares,
    )
    return analysis, plan


async def _drill_ranked(deps: RedditDeps, runner: SourceRunner, run: RedditRun) -> None:
    """The best-ranked threads read with their comments (stored when there is a store)."""
    config = deps.config
    wanted = config.drill_top
    top = run.ranked[: drill_count(deps.source, config.dated_requests, wanted, run.spent_before)]
    deps.progress("drill", f"reading {len(top)} threads (≤{config.drill_comments} comments)")
    by_id = {c.post.id: c for c in run.candidates}
    threads = await drill(
        top,
        by_id,
        source=deps.source,
        runner=runner,
        filters=deps.filters,
        limit=config.drill_comments,
        depth=config.drill_depth,
        clock=deps.clock,
        sink=run.drilled,
    )
    run.errors += [t.error for t in threads if t.error]
    if deps.store is not None:
        deps.store.upsert(c for t in threads for c in t.post.comments)


def _affords(deps: RedditDeps, run: RedditRun, searches: SearchPlan) -> bool:
    """Whether ``searches`` fit what is left of this question's request budget."""
    budget = deps.config.dated_requests
    return can_afford_searches(deps.source, budget, searches, run.spent_before)


async def _search_and_gate(
    analysis: QueryAnalysis, deps: RedditDeps, runner: SourceRunner, run: RedditRun
) -> None:
    """Search, judge the heuristic top ``2 × rerank_top`` in one call (refetch once on a low
    yield), then rerank the relevant ones with the judge's own scores."""
    config = deps.config
    assert run.plan is not None
    plan = run.plan
    fetcher = RedditFetcher(
        deps.source,
        filters=deps.filters,
        options=deps.search,
        clock=deps.clock,
        title_similarity=config.title_similarity,
    )
    judge_cap = 2 * config.rerank_top
    words = search_words(analysis.english_question)
    replies: dict[str, list[str]] = {}

    async def search(scale: int) -> tuple[list[Candidate], bool]:
        nonlocal plan
        if scale > 1 and not _affords(deps, run, plan):
            log.info("reddit_refetch_skipped", reason="request budget")
            run.errors.append(unfetched_message(len(run.candidates), deps.config.dated_requests))
            return heuristic_order(run.candidates)[:judge_cap], False
        found = await runner.call(fetcher.search, plan, scale=scale)
        wider = widen(plan) if len(found.candidates) < MIN_CANDIDATES else None
        if wider is not None and not _affords(deps, run, wider):
            log.info("reddit_widen_skipped", reason="request budget")
            run.errors.append(unwidened_message(len(found.candidates), config.dated_requests))
            wider = None
        if wider is not None:  # the window held too little: once more over all time
            log.info("reddit_search_widened", found=len(found.candidates))
            run.widened_from = len(found.candidates)
            run.plan = plan = wider
            found = await runner.call(fetcher.search, plan, scale=scale)
        run.report, run.candidates = found.report, found.candidates
        if by_date(deps.source):  # its order is by date: rank what it found by the words
            run.candidates = rank_candidates(found.candidates, words)
        run.duplicates_removed = found.duplicates_removed
        run.searches, run.failed_searches = found.searches, found.failed_searches
        run.errors += [e for e in found.report.errors if e not in run.errors]
        ordered = heuristic_order(run.candidates)[:judge_cap]
        if deps.source.name in LOCAL_STORES:  # replies cost nothing to read: the judge gets them
            missing = [c.post.id for c in ordered if c.post.id not in replies]
            replies.update(await runner.call(best_replies, deps.source, missing))
        return ordered, found.report.full_queries > 0

    gated = await adaptive_gate(
        analysis.english_question,
        search,
        engine=deps.engine,
        source=deps.source.name,
        min_yield=deps.min_yield,
        key=lambda c: c.post.id,
        text_of=lambda c: (c.post.title, c.post.selftext),
        replies_of=lambda c: replies.get(c.post.id, []),
    )
    _rank_relevant(gated, deps, run)


def _rank_relevant(gated: Gated[Candidate], deps: RedditDeps, run: RedditRun) -> None:
    """What the gate did, into the run, and its relevant candidates reranked with its scores."""
    run.gate = GateSummary(
        judged=gated.judged, relevant=len(gated.relevant), yield_ratio=gated.yield_ratio,
        refetched=gated.refetched, failed_open=gated.failed_open,
    )  # fmt: skip
    if gated.failed_open:
        run.errors.append(
            "the relevance check failed, so every candidate was kept and ranked by lexical "
            "relevance instead"
        )
    scores = {c.post.id: s for c, s in zip(gated.relevant, gated.scores, strict=True)}
    ranking = rerank(gated.relevant, scores, config=deps.config)
    run.ranked, run.rerank_fell_back = ranking.ranked, ranking.fell_back
    deps.progress(
        "rerank",
        f"{len(gated.relevant)} relevant of {gated.judged} judged "
        f"(yield {gated.yield_ratio:.0%}{', refetched' if gated.refetched else ''})",
    )


class _Timed:
    """Time a stage into ``run.timings``, name it in ``run.stage`` (for timeouts) and trace it
    as a ``reddit.<stage>`` span carrying the stage's counts."""

    def __init__(self, run: RedditRun, stage: str) -> None:
        self._run = run
        self._stage = stage
        self._started = 0.0
        self._traced = stage_span(f"reddit.{stage}")

    def __enter__(self) -> None:
        self._run.stage = self._stage
        self._started = time.perf_counter()
        self._span = self._traced.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._run.timings[self._stage] = _ms(self._started)
        annotate(self._span, **_stage_counts(self._run, self._stage))
        self._traced.__exit__(kind, error, tb)


def _stage_counts(run: RedditRun, stage: str) -> dict[str, int]:
    """What each stage had in and out (cheap: lengths only)."""
    if stage == "formulate":
        return {"items_out": len(run.plan.queries) if run.plan else 0}
    if stage == "search":
        return {
            "requests": run.searches,
            "items_in": run.report.posts_seen if run.report else 0,
            "items_out": len(run.ranked),
            "duplicates_removed": run.duplicates_removed,
        }
    return {"items_out": len(run.drilled)}


def _evidence(
    question: str, plan: SearchPlan, threads: Sequence[DrilledThread], now: datetime
) -> FetchResult:
    """Drilled threads as a FetchResult (a thread whose comments failed still has its post);
    each post's relevance is its final rerank score, and its comments are every comment the
    answer could quote: those the search fetched and those the drill read."""
    posts = [
        t.post.model_copy(
            update={"relevance_score": t.rank.final_score, "comments": _read_comments(t)}
        )
        for t in threads
    ]
    return FetchResult(
        query=question,
        plan_id=plan.plan_id,
        search_terms=plan.search_terms,
        subreddits=plan.subreddits,
        fetched_at=now,
        posts=posts,
        since=plan.since,
    )


def _read_comments(thread: DrilledThread) -> list[Comment]:
    """The post's fetched comments, then the drilled ones it did not have (in thread order)."""
    post = thread.post
    known = {c.comment_id for c in post.comments}
    drilled = [
        Comment(
            comment_id=c.comment_id,
            post_id=post.id,
            body=c.body,
            comment_karma=c.score,
            source=post.source,
            fetched_at=post.fetched_at,
        )
        for c in thread.comments
        if c.comment_id not in known
    ]
    return [*post.comments, *drilled]


def _time_label(plan: SearchPlan, analysis: QueryAnalysis) -> str:
    """What the search progress line says about time: the topic's window, or --since's."""
    return analysis.time_filter if plan.since is None else f"since {format_since(plan.since)}"


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
