"""Seed 002's adaptive pattern for any source: fetch 5, gate, refetch 10 once if yield < 0.5
and the first page was full; the gate fails open. ``fetch_youtube_tool`` and
``fetch_amazon_tool`` are this function with their source's fetch."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from crowdsift.engines.base import Engine
from crowdsift.gate import judge
from crowdsift.log import get_logger
from crowdsift.sources.models import EvidenceItem, SourceFetch, SourceKind

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
    items = await asyncio.to_thread(fetch, query, initial_limit)
    gate = await judge(query, items, kind, engine=engine, text_of=_text)
    refetched = False
    if gate.yield_ratio < min_yield and len(items) == initial_limit:
        log.info("relevance_refetch", source=kind, yield_ratio=gate.yield_ratio)
        items = await asyncio.to_thread(fetch, query, initial_limit * 2)
        gate = await judge(query, items, kind, engine=engine, text_of=_text)
        refetched = True
    return SourceFetch(
        kind=kind,
        query=query,
        items=list(gate.relevant),
        fetched=len(items),
        yield_ratio=gate.yield_ratio,
        refetched=refetched,
        failed_open=gate.failed_open,
    )
