"""Wiring for ``crowdsift ask`` and ``crowdsift eval``: settings → engine, source, store.

Kept apart from ``cli.py`` so the heavy imports (engines, numpy) happen only when a question
is asked, and so programs can call ``run_ask`` without the CLI.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from crowdsift.config import Settings, SourceName
from crowdsift.engines.base import Engine
from crowdsift.engines.factory import EngineChoice, build_engine
from crowdsift.evaluation import EvalCase, EvalReport, load_cases, run_cases
from crowdsift.planner import SubredditProfile
from crowdsift.quick_ask import ask
from crowdsift.reddit.sources.base import RedditSource
from crowdsift.reddit.sources.factory import build_source
from crowdsift.research import (
    DEFAULT_SUBREDDITS,
    AskDeps,
    AskRun,
    Progress,
    ResearchResult,
    run_research,
)
from crowdsift.sources.run import ExtraSource
from crowdsift.store import CommentStore
from crowdsift.summarizer.config import SummarizerConfig


@asynccontextmanager
async def research_deps(
    settings: Settings,
    *,
    source: SourceName | None = None,
    engine: EngineChoice | None = None,
    archive: Path | None = None,
    persist: bool = True,
    progress: bool | Progress = False,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    shared_engine: Engine | None = None,
    budget_usd: float | None = None,
) -> AsyncIterator[AskDeps]:
    """Build engine, source, stores and subreddit candidates; release them all afterwards.

    ``shared_engine`` (a long-lived service's local engine) is used instead of building one,
    and is left open. ``budget_usd`` (else ``CROWDSIFT_BUDGET_USD``) caps the run's LLM spend.

    The Reddit source is built only when Reddit is searched and the expert store only when
    experts are asked (bundled demo experts are imported on first use; unknown ids fail here,
    before any work).
    """
    with ExitStack() as stack:
        reddit: RedditSource | None = None
        candidates = DEFAULT_SUBREDDITS
        if search_reddit:
            built = build_source(settings, source, archive=archive)
            stack.callback(built.source.close)
            if built.notice and callable(progress):
                progress("source", built.notice)
            elif built.notice:
                print(f"note: {built.notice}", file=sys.stderr)
            reddit = built.source
            candidates = _candidates(reddit)
        expert_store = None
        if experts:
            from crowdsift.experts.commands import ensure_requested
            from crowdsift.experts.db import SqlExpertStore

            expert_store = SqlExpertStore(settings.resolved_database_url)
            stack.callback(expert_store.close)
            ensure_requested(expert_store, experts)
        comment_store = None
        if persist and search_reddit:
            comment_store = CommentStore.from_url(settings.resolved_database_url)
            stack.callback(comment_store.close)
        chosen_engine = shared_engine or build_engine(settings, engine)
        try:
            yield AskDeps(
                settings=settings,
                engine=chosen_engine,
                source=reddit,
                store=comment_store,
                candidates=candidates,
                progress=_progress_sink(progress),
                expert_store=expert_store,
                budget_usd=budget_usd,
            )
        finally:
            if shared_engine is None:
                await chosen_engine.aclose()


def _candidates(source: RedditSource) -> tuple[SubredditProfile, ...]:
    """Subreddits the planner may pick: an archive's own profiles, else the built-in list."""
    archive_path = getattr(source, "path", None)
    if isinstance(archive_path, Path):
        from crowdsift.archive.profiles import subreddit_profiles

        return tuple(subreddit_profiles(archive_path)) or DEFAULT_SUBREDDITS
    return DEFAULT_SUBREDDITS


async def research_async(
    settings: Settings,
    question: str,
    *,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
    use_recent_only: bool = False,
    subreddits: Sequence[str] = (),
    sources: Sequence[ExtraSource] = (),
    **options: Any,
) -> ResearchResult:
    """The whole research run, deps built from settings (options as for ``research_deps``)."""
    async with research_deps(
        settings, experts=experts, search_reddit=search_reddit, **options
    ) as deps:
        run = await run_research(
            question,
            deps,
            experts=experts,
            search_reddit=search_reddit,
            use_recent_only=use_recent_only,
            subreddits=subreddits,
            sources=sources,
        )
        return run.result


def run_ask(
    settings: Settings,
    question: str,
    *,
    subreddits: Sequence[str] = (),
    **options: object,
) -> ResearchResult:
    """Answer one question (options as for ``research_deps``)."""

    async def _run() -> ResearchResult:
        async with research_deps(settings, **options) as deps:  # type: ignore[arg-type]
            return (await ask(question, deps, subreddits=subreddits)).result

    return asyncio.run(_run())


def run_eval(
    settings: Settings, cases_path: Path, *, save: Path | None = None, **options: object
) -> list[EvalReport]:
    """Run the evaluation cases; ``save`` is the previews directory to (re)write."""
    cases = load_cases(cases_path)

    async def _run() -> list[EvalReport]:
        async with research_deps(settings, **options) as deps:  # type: ignore[arg-type]

            async def ask_case(case: EvalCase) -> AskRun:
                return await run_research(case.question, deps, subreddits=case.subreddits)

            return await run_cases(
                cases, ask_case, SummarizerConfig.from_settings(settings), previews=save
            )

    return asyncio.run(_run())


def _progress_sink(progress: bool | Progress) -> Progress:
    """True prints to stderr, a callable receives the events, False drops them."""
    if callable(progress):
        return progress
    return _print_progress if progress else (lambda stage, message: None)


def _print_progress(stage: str, message: str) -> None:
    print(f"» {stage}: {message}", file=sys.stderr, flush=True)
