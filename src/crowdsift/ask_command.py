"""Wiring for ``crowdsift ask`` and ``crowdsift eval``: settings → engine, source, store.

Kept apart from ``cli.py`` so the heavy imports (engines, numpy) happen only when a question
is asked, and so programs can call ``run_ask`` without the CLI.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from crowdsift.config import Settings, SourceName
from crowdsift.engines.factory import EngineChoice, build_engine
from crowdsift.evaluation import EvalCase, EvalReport, load_cases, run_cases
from crowdsift.reddit.sources.factory import build_source
from crowdsift.research import DEFAULT_SUBREDDITS, AskDeps, AskRun, ResearchResult, ask
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
    progress: bool = False,
) -> AsyncIterator[AskDeps]:
    """Build engine, source, store and subreddit candidates; release them all afterwards."""
    built = build_source(settings, source, archive=archive)
    if built.notice:
        print(f"note: {built.notice}", file=sys.stderr)
    chosen_engine = build_engine(settings, engine)
    comment_store = CommentStore.from_url(settings.resolved_database_url) if persist else None
    candidates = DEFAULT_SUBREDDITS
    archive_path = getattr(built.source, "path", None)
    if isinstance(archive_path, Path):
        from crowdsift.archive.profiles import subreddit_profiles

        candidates = tuple(subreddit_profiles(archive_path)) or DEFAULT_SUBREDDITS
    try:
        yield AskDeps(
            settings=settings,
            engine=chosen_engine,
            source=built.source,
            store=comment_store,
            candidates=candidates,
            progress=_print_progress if progress else (lambda stage, message: None),
        )
    finally:
        await chosen_engine.aclose()
        built.source.close()
        if comment_store is not None:
            comment_store.close()


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
                return await ask(case.question, deps, subreddits=case.subreddits)

            return await run_cases(
                cases, ask_case, SummarizerConfig.from_settings(settings), previews=save
            )

    return asyncio.run(_run())


def _print_progress(stage: str, message: str) -> None:
    print(f"» {stage}: {message}", file=sys.stderr, flush=True)
