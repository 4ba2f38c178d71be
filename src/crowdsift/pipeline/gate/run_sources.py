"""Run the non-Reddit sources a research run asked for, side by side, each behind its gate.

A source without credentials is skipped with a one-line notice; one that fails is reported in
its ``SourceFetch.errors``. Neither stops the run: the other sources and Reddit go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Literal

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.tracing import ITEMS_IN, ITEMS_OUT, STATUS, YIELD, stage_span
from crowdsift.engines.base import Engine
from crowdsift.sources.models import EvidenceItem, SourceFetch

ExtraSource = Literal["youtube", "amazon"]
EXTRA_SOURCES: tuple[ExtraSource, ...] = ("youtube", "amazon")
SourceTool = Callable[[str, Engine], Awaitable[SourceFetch]]
Progress = Callable[[str, str], None]


def tools_from_settings(
    settings: Settings, *, since: datetime | None = None
) -> dict[ExtraSource, SourceTool]:
    """``fetch_youtube_tool`` and ``fetch_amazon_tool`` over the configured APIs; ``since``
    (``--since``) keeps YouTube to videos published after it (Amazon listings carry no date)."""

    async def youtube(query: str, engine: Engine) -> SourceFetch:
        from crowdsift.pipeline.gate.sources import fetch_youtube_tool

        return await fetch_youtube_tool(
            query, settings=settings, engine=engine, published_after=since
        )

    async def amazon(query: str, engine: Engine) -> SourceFetch:
        from crowdsift.pipeline.gate.sources import fetch_amazon_tool

        return await fetch_amazon_tool(query, settings=settings, engine=engine)

    return {"youtube": youtube, "amazon": amazon}


async def fetch_sources(
    query: str,
    kinds: Sequence[ExtraSource],
    *,
    tools: Mapping[ExtraSource, SourceTool],
    engine: Engine,
    progress: Progress = lambda _stage, _message: None,
) -> list[SourceFetch]:
    """Every asked source at once, in the order asked."""

    async def one(kind: ExtraSource) -> SourceFetch:
        progress(kind, f"searching {kind} for the question")
        with stage_span(f"source.{kind}", source=kind) as span:
            try:
                fetched = await tools[kind](query, engine)
            except CrowdsiftError as exc:  # tools report their errors; this is a last guard
                fetched = SourceFetch(kind=kind, query=query, errors=[str(exc)])
            if span.is_recording():
                span.set_attributes(_fetch_attributes(fetched))
        progress(kind, _outcome(fetched))
        return fetched

    return list(await asyncio.gather(*(one(kind) for kind in dict.fromkeys(kinds))))


def _fetch_attributes(fetched: SourceFetch) -> dict[str, str | int | float | bool]:
    """The ``source.<kind>`` span's counts: fetched, relevant, yield, refetched, skipped."""
    ran = fetched.skipped is None and not fetched.errors
    attributes: dict[str, str | int | float | bool] = {
        ITEMS_IN: fetched.fetched,
        ITEMS_OUT: len(fetched.items),
        "crowdsift.refetched": fetched.refetched,
        "crowdsift.failed_open": fetched.failed_open,
        STATUS: "ok" if ran else "skipped" if fetched.skipped else "failed",
    }
    if ran:
        attributes[YIELD] = fetched.yield_ratio
    if fetched.skipped:
        attributes["crowdsift.skipped"] = fetched.skipped
    return attributes


def _outcome(fetched: SourceFetch) -> str:
    if fetched.skipped:
        return f"skipped: {fetched.skipped}"
    if fetched.errors:
        return f"failed: {fetched.errors[0]}"
    gate = f"yield {fetched.yield_ratio:.0%}" + (", refetched" if fetched.refetched else "")
    return f"{len(fetched.items)} relevant of {fetched.fetched} ({gate})"


def evidence_items(fetches: Sequence[SourceFetch]) -> list[EvidenceItem]:
    return [item for fetched in fetches for item in fetched.items]


def parse_sources(value: str) -> tuple[bool, list[ExtraSource]]:
    """``--sources reddit,youtube,amazon`` → (search Reddit?, the other sources)."""
    from crowdsift.core.errors import PlanError

    names = [part.strip().lower() for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n != "reddit" and n not in EXTRA_SOURCES]
    if unknown or not names:
        raise PlanError(
            f"unknown --sources {', '.join(unknown) or repr(value)}: "
            "use a comma-separated list of reddit, youtube, amazon"
        )
    extra = [n for n in EXTRA_SOURCES if n in names]
    return "reddit" in names, extra
