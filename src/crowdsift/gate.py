"""The relevance gate (seed 002): one batched yes/no judgement per fetch, adaptive refetch.

``relevance_filter`` sends the title and the first 200 characters of every item in one call
and gets a boolean per item back. Any failure — an engine error, an unparsable or wrong-length
reply — fails open: all items pass with yield 1.0 and a warning is logged, because a broken
filter must never empty the answer. ``gated_fetch`` applies the seed's adaptive pattern: if
fewer than half the items are relevant and the first fetch returned a full page, fetch once
more with twice the limit and filter again — never more than once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, Field

from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence
from crowdsift.errors import EngineError, EngineOutputError
from crowdsift.log import get_logger
from crowdsift.models import FetchReport, FetchResult, Post, SearchPlan
from crowdsift.text import tokenize
from crowdsift.tracing import ITEMS_IN, ITEMS_OUT, SOURCE, YIELD, Attributes, observe

log = get_logger(__name__)
T = TypeVar("T")
SNIPPET_CHARS = 200


class GateItem(BaseModel):
    """What the judge sees of one item: its title and the start of its text."""

    title: str
    snippet: str


class RelevanceVerdicts(BaseModel):
    """One boolean per item, in order."""

    relevant: list[bool] = Field(default_factory=list)


@dataclass(frozen=True)
class RelevanceTask(Task[RelevanceVerdicts]):
    """Is each item about the query? A binary judgement, cheap enough for a small model."""

    query: str
    source: str
    items: tuple[GateItem, ...]
    threshold: float = 0.3

    phase = "filter"
    output_model = RelevanceVerdicts

    def messages(self) -> list[ChatMessage]:
        listed = "\n".join(
            fence(f"item:{n}", f"{item.title}\n{item.snippet}")
            for n, item in enumerate(self.items, start=1)
        )
        system = (
            "You judge whether each item from " + self.source + " is relevant to the user's "
            "query: it discusses the query's subject (the product, tool or task), not merely a "
            'similar word. Return JSON {"relevant": [...]} with exactly '
            f"{len(self.items)} booleans, one per item, in order. " + FENCE_NOTE
        )
        user = f"Query: {self.query}\n\nItems:\n{listed}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def parse(self, data: Any) -> RelevanceVerdicts:
        """Models return a bare array as often as the object asked for; both are accepted."""
        if isinstance(data, list):
            data = {"relevant": data}
        return super().parse(data)

    def run_local(self, kit: LocalKit) -> RelevanceVerdicts:
        """Embedding similarity of query and item, blended with lexical evidence."""
        if not self.items:
            return RelevanceVerdicts(relevant=[])
        texts = [self.query] + [f"{item.title}. {item.snippet}" for item in self.items]
        vectors = kit.embedder.embed(texts)
        similarity = vectors[1:] @ vectors[0]
        query_words = {w for w in tokenize(self.query) if len(w) > 2}
        verdicts = []
        for item, sim in zip(self.items, np.asarray(similarity).tolist(), strict=True):
            words = set(tokenize(f"{item.title} {item.snippet}"))
            lexical = len(query_words & words) / len(query_words) if query_words else 0.0
            verdicts.append(0.7 * float(sim) + 0.3 * lexical >= self.threshold)
        return RelevanceVerdicts(relevant=verdicts)


def _title_and_body(item: Any) -> tuple[str, str]:
    return str(getattr(item, "title", "")), str(getattr(item, "selftext", ""))


@dataclass
class GateResult:
    """What one filter call decided, and what it cost."""

    relevant: list[Any]
    yield_ratio: float
    usage: Usage = field(default_factory=Usage)
    failed_open: bool = False


async def relevance_filter(
    query: str,
    items: Sequence[T],
    source: str,
    *,
    engine: Engine,
    text_of: Callable[[T], tuple[str, str]] = _title_and_body,
) -> tuple[list[T], float]:
    """Seed 002's interface: ``(relevant_items, yield_ratio)``; fails open."""
    result = await judge(query, items, source, engine=engine, text_of=text_of)
    return result.relevant, result.yield_ratio


def _judge_attributes(query: str, items: Sequence[Any], source: str, **_: Any) -> Attributes:
    return {SOURCE: source, ITEMS_IN: len(items)}


def _verdict_attributes(result: GateResult) -> Attributes:
    return {
        ITEMS_OUT: len(result.relevant),
        YIELD: result.yield_ratio,
        "crowdsift.failed_open": result.failed_open,
    }


@observe("relevance_filter", attributes=_judge_attributes, result_attributes=_verdict_attributes)
async def judge(
    query: str,
    items: Sequence[T],
    source: str,
    *,
    engine: Engine,
    text_of: Callable[[T], tuple[str, str]] = _title_and_body,
) -> GateResult:
    """``relevance_filter`` with its usage and whether it failed open, for the pipeline."""
    if not items:
        return GateResult([], 1.0)
    gate_items = tuple(
        GateItem(title=title, snippet=body[:SNIPPET_CHARS])
        for title, body in (text_of(item) for item in items)
    )
    try:
        reply = await engine.run(RelevanceTask(query, source, gate_items))
        verdicts = reply.output.relevant
        if len(verdicts) != len(items):
            raise EngineOutputError(
                f"the relevance reply has {len(verdicts)} verdicts for {len(items)} items"
            )
    except EngineError as exc:
        log.warning("relevance_filter_failed_open", source=source, items=len(items), error=str(exc))
        return GateResult(list(items), 1.0, failed_open=True)
    relevant = [item for item, keep in zip(items, verdicts, strict=True) if keep]
    yield_ratio = round(len(relevant) / len(items), 4)
    log.info(
        "relevance_filter", source=source, items=len(items), relevant=len(relevant),
        yield_ratio=yield_ratio, engine=reply.engine,
    )  # fmt: skip
    return GateResult(relevant, yield_ratio, reply.usage)


@dataclass
class GatedFetch:
    """A fetch after the gate: only relevant posts, with what the gate did."""

    result: FetchResult
    report: FetchReport
    fetched_posts: int
    yield_ratio: float
    refetched: bool
    failed_open: bool
    usage: Usage = field(default_factory=Usage)


async def gated_fetch(
    search_plan: SearchPlan,
    query: str,
    *,
    fetch: Callable[[SearchPlan, int], tuple[FetchResult, FetchReport]],
    engine: Engine,
    initial_limit: int = 5,
    min_yield: float = 0.5,
    source: str = "reddit",
) -> GatedFetch:
    """Fetch with ``initial_limit`` posts per query, gate, and refetch at 2x at most once.

    ``fetch(plan, limit)`` is the (synchronous) fetch to run; it goes to a worker thread.
    """
    result, report = await asyncio.to_thread(fetch, search_plan, initial_limit)
    gate = await judge(query, result.posts, source, engine=engine)
    usage = Usage()
    usage.add(gate.usage)
    refetched = False
    if gate.yield_ratio < min_yield and report.full_queries > 0:
        log.info("relevance_refetch", yield_ratio=gate.yield_ratio, limit=initial_limit * 2)
        result, report = await asyncio.to_thread(fetch, search_plan, initial_limit * 2)
        gate = await judge(query, result.posts, source, engine=engine)
        usage.add(gate.usage)
        refetched = True
    posts: list[Post] = list(gate.relevant)
    return GatedFetch(
        result=result.model_copy(update={"posts": posts}),
        report=report,
        fetched_posts=len(result.posts),
        yield_ratio=gate.yield_ratio,
        refetched=refetched,
        failed_open=gate.failed_open,
        usage=usage,
    )
