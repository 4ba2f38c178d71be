"""What the HTTP API, the MCP server and the job workers do, in one place.

Each function takes settings and a typed request and returns the same models the CLI prints,
so every front end answers identically. Heavy modules load inside the functions.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.extras import require_extra
from crowdsift.core.models import FetchReport, FetchResult, Post, SearchPlan
from crowdsift.engines.factory import default_engine_name
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.models import ResearchRequest

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

    from crowdsift.engines.base import Engine
    from crowdsift.feed.retriever import FeedMode, FeedRetriever
    from crowdsift.sources.experts.models import ExpertSummary


class ResearchService:
    """Runs research requests; keeps one local engine (and its loaded model) for all of them.

    The OpenAI engine's HTTP client belongs to one event loop, and each run has its own loop,
    so only the in-process local engine is shared.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._local: Engine | None = None
        self._lock = threading.Lock()

    def __call__(self, request: ResearchRequest, progress: Progress) -> ResearchResult:
        return asyncio.run(self.run(request, progress))

    async def run(self, request: ResearchRequest, progress: Progress) -> ResearchResult:
        from crowdsift.pipeline.research import research_async
        from crowdsift.pipeline.wiring import ResearchOptions

        return await research_async(
            request.question,
            experts=request.experts,
            search_reddit=request.search_reddit,
            use_recent_only=request.use_recent_only,
            settings=self.settings,
            options=ResearchOptions(
                engine=request.engine,
                progress=progress,
                shared_engine=self._shared_engine(request),
                budget_usd=request.budget_usd,
                since=request.since,
            ),
            subreddits=request.subreddits,
            sources=request.sources,
        )

    def _shared_engine(self, request: ResearchRequest) -> Engine | None:
        if (request.engine or default_engine_name(self.settings)) != "local":
            return None
        with self._lock:
            if self._local is None:
                from crowdsift.engines.local import LocalEngine

                self._local = LocalEngine.from_settings(self.settings)
            return self._local


def fetch(
    settings: Settings,
    plan: SearchPlan,
    *,
    query: str | None = None,
    persist: bool = True,
    source: SourceName | None = None,
    archive: Path | None = None,
    notice: Callable[[str], None] | None = None,
) -> tuple[FetchResult, FetchReport]:
    """``crowdsift fetch``, ``POST /api/fetch`` and MCP ``fetch``: the plan's searches through
    the one fetcher; ``notice`` hears what the source factory has to say (e.g. sample data),
    and the result says ``sample_data`` when the bundled demo archive answered and, in
    ``source_status``, what each source of the chain did."""
    from crowdsift.core.store import CommentStore
    from crowdsift.pipeline.fetch.fetcher import RedditFetcher
    from crowdsift.sources.reddit.factory import build_source

    built = build_source(settings, source, archive=archive)
    first_notice = built.notice
    if first_notice and notice is not None:
        notice(first_notice)
    comment_store = CommentStore.from_url(settings.resolved_database_url) if persist else None
    try:
        fetcher = RedditFetcher.from_settings(built.source, settings, store=comment_store)
        outcome = fetcher.fetch(plan, query=query)
    finally:
        built.source.close()
        if comment_store is not None:
            comment_store.close()
    if built.notice and built.notice != first_notice and notice is not None:
        notice(built.notice)  # the chain fell through to the sample during the fetch
    update = {"sample_data": built.sample_data, "source_status": built.statuses()}
    return outcome.result.model_copy(update=update), outcome.report


class FeedService:
    """``crowdsift feed`` for a long-lived process: the index and its model are opened once."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._retriever: FeedRetriever | None = None
        self._client: ClientAPI | None = None
        self._lock = threading.Lock()

    def retriever(self) -> FeedRetriever:
        with self._lock:
            if self._retriever is None:
                # feeds live in Chroma, the [feed] extra: the API answers 503 with the pip line
                require_extra("feed", "chromadb")
                from crowdsift.feed.commands import open_retriever
                from crowdsift.feed.store import open_client

                self._client = open_client(self.settings)
                self._retriever = open_retriever(self.settings, client=self._client)
            return self._retriever

    def close(self) -> None:
        """Release the Chroma client (its HTTP connections, or the local store's files)."""
        with self._lock:
            if self._client is not None:
                from crowdsift.feed.store import close_client

                close_client(self._client)
            self._client = self._retriever = None

    def feed(
        self, interests: list[str] | None, mode: FeedMode, size: int | None = None
    ) -> list[Post]:
        """One feed; an empty index raises ``EmptyIndexError`` saying what to run."""
        from crowdsift.feed.commands import feed_or_explain

        return feed_or_explain(self.retriever(), interests, mode, size=size)


def list_experts(settings: Settings) -> list[ExpertSummary]:
    """The experts in the store; on a fresh install, the bundled demo experts (imported once,
    as ``ask --experts`` would on first use) so a new user has a panel to pick from."""
    from crowdsift.sources.experts.db import SqlExpertStore
    from crowdsift.sources.experts.demo import ensure_demo_experts

    store = SqlExpertStore(settings.resolved_database_url)
    try:
        experts = store.experts()
        if not experts:
            ensure_demo_experts(store)
            experts = store.experts()
        return experts
    finally:
        store.close()
