"""Seed 002's adaptive pattern for any source: fetch 5, gate, refetch 10 once if yield < 0.5
and the first page was full; the gate fails open. ``fetch_youtube_tool`` and
``fetch_amazon_tool`` are this function with their source's fetch."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from crowdsift.engines.base import Engine
from crowdsift.gate import adaptive_gate
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
