"""Wiring: settings and typed options → the engine, Reddit source, stores a research run needs.

Kept apart from ``crowdsift.pipeline.research`` (the run) and from the CLI, so every front end — the
CLI, the service, MCP, the library's ``research()`` — builds a run the same way, and the heavy
imports (engines, numpy) happen only when a question is asked. Nothing here imports the
pipeline: it only builds what ``AskDeps`` holds.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.source import RedditSource
from crowdsift.core.store import CommentStore
from crowdsift.engines.base import Engine, LocalKit
from crowdsift.engines.factory import EngineChoice, build_engine
from crowdsift.pipeline.reddit.communities import DirectoryLoader
from crowdsift.pipeline.reddit.topicality import SubredditProfile
from crowdsift.pipeline.result import AskDeps, Progress
from crowdsift.sources.reddit.factory import build_source

if TYPE_CHECKING:
    from crowdsift.engines.embedding import Embedder
    from crowdsift.sources.experts.models import ExpertStore

__all__ = ["EngineChoice", "ResearchOptions", "research_deps"]


@dataclass(frozen=True)
class ResearchOptions:
    """How to build one run's dependencies (the CLI flags, the API request, library args)."""

    source: SourceName | None = None
    """None = ``CROWDSIFT_SOURCE``."""
    engine: EngineChoice | None = None
    """None = ``CROWDSIFT_ENGINE``."""
    archive: Path | None = None
    """An archive file instead of the default one."""
    persist: bool = True
    """Store drilled comments in the comment store."""
    progress: bool | Progress = False
    """True prints to stderr, a callable receives the events, False is quiet."""
    shared_engine: Engine | None = None
    """A long-lived engine (the service's local one), used and left open."""
    budget_usd: float | None = None
    """None = ``CROWDSIFT_BUDGET_USD``."""
    since: datetime | None = None
    """``--since`` resolved (``crowdsift.core.since.parse_since``); None = the automatic
    window (the last month for a fast-moving topic)."""


@asynccontextmanager
async def research_deps(
    settings: Settings,
    options: ResearchOptions,
    *,
    experts: Sequence[str] = (),
    search_reddit: bool = True,
) -> AsyncIterator[AskDeps]:
    """Build engine, source, stores and subreddit candidates; release them all afterwards.

    The Reddit source is built only when Reddit is searched and the expert store only when
    experts are asked (bundled demo experts are imported on first use; unknown ids fail here,
    before any work).
    """
    engine = options.shared_engine or build_engine(settings, options.engine)  # a key or URL
    try:  # the engine first: a usage error (no key) before any source is opened or built
        with ExitStack() as stack:
            reddit: RedditSource | None = None
            sample_data = False
            candidates: Sequence[SubredditProfile] = ()
            archive: Path | None = None
            directory: DirectoryLoader | None = None
            embedder: Embedder | None = None
            progress = _progress_sink(options.progress)
            if search_reddit:
                built = build_source(settings, options.source, archive=options.archive)
                stack.callback(built.source.close)
                if built.notice:
                    _tell(options.progress, progress, built.notice)
                reddit = built.source
                sample_data = built.sample_data
                archive = _archive_path(reddit)
                candidates = _candidates(archive)
                if archive is None:  # a live source: the user's directory, built if need be
                    directory = _directory(settings, options.progress, progress)
                    embedder = _embedder(engine, settings)
            expert_store = _expert_store(settings, experts, stack) if experts else None
            comment_store = None
            if options.persist and search_reddit:
                comment_store = CommentStore.from_url(settings.resolved_database_url)
                stack.callback(comment_store.close)
            yield AskDeps(
                settings=settings,
                engine=engine,
                source=reddit,
                store=comment_store,
                candidates=candidates,
                candidates_closed=archive is not None,
                progress=progress,
                expert_store=expert_store,
                budget_usd=options.budget_usd,
                sample_data=sample_data,
                since=options.since,
                directory=directory,
                embedder=embedder,
                fallback=_fallback(engine, settings, embedder),
            )
    finally:
        if options.shared_engine is None:
            await engine.aclose()


def _expert_store(settings: Settings, experts: Sequence[str], stack: ExitStack) -> ExpertStore:
    """The expert store, closed with ``stack``; bundled demo experts asked for are imported,
    and an unknown id fails here, before any work."""
    from crowdsift.pipeline.experts.commands import ensure_requested
    from crowdsift.sources.experts.db import SqlExpertStore

    store = SqlExpertStore(settings.resolved_database_url)
    stack.callback(store.close)
    ensure_requested(store, experts)
    return store


def _tell(wanted: bool | Progress, progress: Progress, message: str) -> None:
    """A notice: to the run's progress callback, else on stderr (never on stdout)."""
    if callable(wanted):
        progress("source", message)
    else:
        print(f"note: {message}", file=sys.stderr)


def _directory(settings: Settings, wanted: bool | Progress, progress: Progress) -> DirectoryLoader:
    """The user's subreddit directory (``crowdsift subreddits update``), read when a question
    names no community; the first such question builds it, saying so (a damaged file is an
    error saying how to rebuild it)."""
    from crowdsift.sources.reddit.directory_fetch import load_or_build

    return lambda: load_or_build(settings, lambda message: _tell(wanted, progress, message))


def _embedder(engine: Engine, settings: Settings) -> Embedder:
    """The local engine's own embedder (one model per process), else MiniLM for the
    directory alone (an LLM engine has no embedder of its own)."""
    inner: object = engine
    while inner is not None:
        kit = getattr(inner, "kit", None)
        if isinstance(kit, LocalKit):
            return kit.embedder
        inner = getattr(inner, "inner", None)
    from crowdsift.engines.embedding import MiniLMEmbedder

    return MiniLMEmbedder.from_settings(settings)


def _fallback(engine: Engine, settings: Settings, embedder: Embedder | None) -> Engine | None:
    """The local engine beside an LLM, for answers that cite nothing real (its model loads
    only if it is ever used); none beside the local engine itself."""
    if engine.name == "local":
        return None
    from crowdsift.engines.local import LocalEngine

    return LocalEngine(embedder or _embedder(engine, settings))


def _archive_path(source: RedditSource) -> Path | None:
    """The archive file behind ``source``, or None for a live source (asked once per run)."""
    path = getattr(source, "path", None)
    return path if isinstance(path, Path) else None


def _candidates(archive: Path | None) -> Sequence[SubredditProfile]:
    """Subreddits the formulation may pick: an archive's own profiles; none for a live source
    (its directory's closest communities are each question's candidates)."""
    if archive is None:
        return ()
    from crowdsift.pipeline.reddit.profiles import subreddit_profiles

    return tuple(subreddit_profiles(archive))


def _progress_sink(progress: bool | Progress) -> Progress:
    """True prints to stderr, a callable receives the events, False drops them."""
    if callable(progress):
        return progress
    return _print_progress if progress else (lambda _stage, _message: None)


def _print_progress(stage: str, message: str) -> None:
    print(f"» {stage}: {message}", file=sys.stderr, flush=True)
