"""Seed 002's adaptive pattern for YouTube and Amazon: fetch 5, gate, refetch 10 once if yield
< 0.5 and the first page was full; the gate fails open. ``fetch_youtube_tool`` and
``fetch_amazon_tool`` are ``gated_source_fetch`` with their source's fetch; they never raise
(no credentials → ``skipped``; a source error → ``errors``), so a research run goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from functools import partial

from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger, redact_text
from crowdsift.engines.base import Engine
from crowdsift.pipeline.gate.judge import adaptive_gate
from crowdsift.sources.amazon import AmazonSource, missing_amazon_settings, skip_notice
from crowdsift.sources.models import EvidenceItem, SourceFetch, SourceKind
from crowdsift.sources.youtube import SKIP_NOTICE, YouTubeSource, build_youtube_source

log = get_logger(__name__)

INITIAL_LIMIT = 5
MIN_YIELD = 0.5

FetchItems = Callable[[str, int], list[EvidenceItem]]


def _text(item: EvidenceItem) -> tuple[str, str]:
    return item.title, item.text


async def gated_source_fetch(
    query: str,
    *,
    kind: SourceKind,
    fetch: FetchItems,
    engine: Engine,
    initial_limit: int = INITIAL_LIMIT,
    min_yield: float = MIN_YIELD,
) -> SourceFetch:
    """``fetch(query, limit)`` runs in a worker thread (sources are synchronous HTTP)."""
    fetched = 0

    async def search(scale: int) -> tuple[list[EvidenceItem], bool]:
        nonlocal fetched
        items = await asyncio.to_thread(fetch, query, initial_limit * scale)
        fetched = len(items)
        return items, len(items) == initial_limit

    gate = await adaptive_gate(
        query, search, engine=engine, source=kind, min_yield=min_yield, text_of=_text
    )
    return SourceFetch(
        kind=kind,
        query=query,
        items=list(gate.relevant),
        fetched=fetched,
        yield_ratio=gate.yield_ratio,
        refetched=gate.refetched,
        failed_open=gate.failed_open,
    )


async def fetch_youtube_tool(
    query: str,
    *,
    engine: Engine,
    settings: Settings | None = None,
    source: YouTubeSource | None = None,
    comments_per_video: int = 5,
    published_after: datetime | None = None,
) -> SourceFetch:
    """Seed 002's gated fetch over YouTube; never raises for a source problem.

    No key → ``skipped`` (one line naming YOUTUBE_API_KEY); a source error after retries →
    ``errors=[message]``, so the research run goes on with its other sources. A source built
    here is closed here; an injected one belongs to the caller.
    """
    if source is None:
        settings = settings if settings is not None else get_settings()
        try:
            built = build_youtube_source(settings)
        except CrowdsiftError as exc:
            return _youtube_failed(query, exc, _youtube_secret(settings))
        if built is None:
            log.info("source_skipped", source="youtube", reason=SKIP_NOTICE)
            return SourceFetch(kind="youtube", query=query, skipped=SKIP_NOTICE)
        with built:
            return await fetch_youtube_tool(
                query,
                engine=engine,
                settings=settings,
                source=built,
                comments_per_video=comments_per_video,
                published_after=published_after,
            )
    initial = settings.gate_initial_limit if settings is not None else INITIAL_LIMIT
    min_yield = settings.gate_min_yield if settings is not None else MIN_YIELD
    try:
        return await gated_source_fetch(
            query,
            kind="youtube",
            fetch=partial(
                source.search,
                comments_per_video=comments_per_video,
                published_after=published_after,
            ),
            engine=engine,
            initial_limit=initial,
            min_yield=min_yield,
        )
    except CrowdsiftError as exc:
        return _youtube_failed(query, exc, source._key)


def _youtube_secret(settings: Settings) -> str:
    key = settings.youtube_api_key
    return key.get_secret_value() if key is not None else ""


def _youtube_failed(query: str, exc: CrowdsiftError, key: str) -> SourceFetch:
    message = redact_text(str(exc))
    if key:
        message = message.replace(key, "***")
    log.warning("source_failed", source="youtube", error=message)
    return SourceFetch(kind="youtube", query=query, errors=[message])


async def fetch_amazon_tool(
    query: str,
    *,
    engine: Engine,
    settings: Settings | None = None,
    source: AmazonSource | None = None,
) -> SourceFetch:
    """Seed 002's gated fetch of Amazon products; never raises.

    A given ``source`` is used and left open; otherwise one is built from ``settings`` (the
    process settings by default) and closed afterwards.
    """
    owned: AmazonSource | None = None
    if source is None:
        settings = settings if settings is not None else get_settings()
        missing = missing_amazon_settings(settings)
        if missing:
            return SourceFetch(kind="amazon", query=query, skipped=skip_notice(missing))
        try:
            source = owned = AmazonSource.from_settings(settings)
        except CrowdsiftError as exc:
            return _amazon_failed(query, exc)
    try:
        return await _amazon_gated(query, source, engine)
    finally:
        if owned is not None:
            owned.close()


async def _amazon_gated(query: str, source: AmazonSource, engine: Engine) -> SourceFetch:
    """The gated fetch; a failed *refetch* keeps the first page rather than losing it."""
    errors: list[str] = []
    first: list[EvidenceItem] | None = None

    def fetch(text: str, limit: int) -> list[EvidenceItem]:
        nonlocal first
        if first is None:
            first = source.search(text, limit)
            return first
        try:
            return source.search(text, limit)
        except CrowdsiftError as exc:
            log.warning("amazon_refetch_failed", error=str(exc))
            errors.append(redact_text(str(exc)))
            return first

    try:
        result = await gated_source_fetch(query, kind="amazon", fetch=fetch, engine=engine)
    except CrowdsiftError as exc:
        return _amazon_failed(query, exc)
    return result.model_copy(update={"errors": errors}) if errors else result


def _amazon_failed(query: str, exc: CrowdsiftError) -> SourceFetch:
    log.warning("amazon_fetch_failed", error=str(exc))
    return SourceFetch(kind="amazon", query=query, errors=[redact_text(str(exc))])
