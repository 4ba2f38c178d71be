"""The relevance gate (seed 002): one batched yes/no judgement per fetch, adaptive refetch.

``relevance_filter`` sends the title and the first 200 characters of every item in one call
and gets a boolean per item back. Any failure — an engine error, an unparsable or wrong-length
reply — fails open: all items pass with yield 1.0 and a warning is logged, because a broken
filter must never empty the answer. ``adaptive_gate`` applies the seed's adaptive pattern to
any source (Reddit candidates, YouTube videos, Amazon products): if fewer than half the items
are relevant and the first fetch returned a full page, fetch once more with twice the limit and
filter again — never more than once. The same call also scores each item 0–1, which the
rerank reuses instead of judging the same items a second time.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel, Field

from crowdsift.core.errors import EngineError, EngineOutputError
from crowdsift.core.log import get_logger
from crowdsift.core.tracing import ITEMS_IN, ITEMS_OUT, SOURCE, YIELD, Attributes, observe
from crowdsift.core.words import content_words
from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence

log = get_logger(__name__)
T = TypeVar("T")
SNIPPET_CHARS = 200
"""How much of an item's own text the judge reads."""
REPLY_CHARS = 150
"""How much of each best reply it reads: on Reddit the answer is in the replies, and a link
post's replies are all the discussion there is."""


class GateItem(BaseModel):
    """What the judge sees of one item: its title, the start of its text, and the start of
    its best-voted replies when the source had them at hand."""

    title: str
    snippet: str
    replies: list[str] = []

    def text(self) -> str:
        """The item as one text: title, snippet, then each reply on a line of its own."""
        lines = [self.title, self.snippet, *(f"reply: {r}" for r in self.replies)]
        return "\n".join(line for line in lines if line)

    def own_text(self) -> str:
        """What the item says it is about: its title and text, or, for a post with no text of
        its own (a link or an image), its title and its replies, which are its discussion.
        Similarity alone cannot tell a reply on the subject from one that shares its words,
        so the local judge reads replies only where nothing else says what a thread is about;
        a model reads them all (``text``)."""
        if len(self.snippet.strip()) >= OWN_TEXT_CHARS or not self.replies:
            return f"{self.title}. {self.snippet}"
        return ". ".join([self.title, *self.replies])


class RelevanceVerdicts(BaseModel):
    """One boolean per item, in order, and how directly each item answers (0.0–1.0).

    The booleans are the gate (seed 002); the scores let the rerank (seed 001) order the kept
    items without a second call judging the same items. A reply without usable scores still
    gates; the rerank then falls back to lexical relevance.
    """

    relevant: list[bool] = Field(default_factory=list)
    scores: list[float] = Field(
        default_factory=list, description="0.0 off-topic … 1.0 answers the query directly"
    )


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
            fence(f"item:{n}", item.text()) for n, item in enumerate(self.items, start=1)
        )
        system = (
            "You judge whether each item from " + self.source + " is relevant to the user's "
            "query: it discusses the query's subject (the product, tool or task), not merely a "
            'similar word. Return JSON {"relevant": [...], "scores": [...]} with exactly '
            f"{len(self.items)} booleans and {len(self.items)} numbers, one per item, in order. "
            "A score says how directly the item answers the query: 1.0 answers it, 0.5 is "
            "related background, 0.0 is off-topic; popular posts, memes and clickbait that "
            "only share a word with the query score 0.1 or less. " + FENCE_NOTE
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
        texts = [self.query] + [item.own_text() for item in self.items]
        vectors = kit.embedder.embed(texts)
        similarity = vectors[1:] @ vectors[0]
        query_words = set(content_words(self.query))  # "which", "most": no subject in them
        scores = []
        for item, sim in zip(self.items, np.asarray(similarity).tolist(), strict=True):
            words = set(content_words(item.own_text()))
            lexical = len(query_words & words) / len(query_words) if query_words else 0.0
            scores.append(round(min(max(0.7 * float(sim) + 0.3 * lexical, 0.0), 1.0), 4))
        return RelevanceVerdicts(relevant=[s >= self.threshold for s in scores], scores=scores)


OWN_TEXT_CHARS = 40
"""Below this, a post has no text of its own to judge (the filter's ``min_post_chars``)."""
MAX_REPLIES = 2
Replies = Callable[[T], Sequence[str]]
"""An item's best-voted replies, best first (empty when the source did not give them)."""


def _gate_item(
    item: T, text_of: Callable[[T], tuple[str, str]], replies_of: Replies[T] | None
) -> GateItem:
    title, body = text_of(item)
    replies = list(replies_of(item))[:MAX_REPLIES] if replies_of is not None else []
    return GateItem(
        title=title,
        snippet=body[:SNIPPET_CHARS],
        replies=[" ".join(r.split())[:REPLY_CHARS] for r in replies if r.strip()],
    )


def _title_and_body(item: Any) -> tuple[str, str]:
    return str(getattr(item, "title", "")), str(getattr(item, "selftext", ""))


@dataclass
class GateResult:
    """What one filter call decided, and what it cost.

    ``scores`` holds, per relevant item in the same order, the judge's 0–1 score, or None
    when the reply had none usable (or the gate failed open)."""

    relevant: list[Any]
    yield_ratio: float
    usage: Usage = field(default_factory=Usage)
    failed_open: bool = False
    scores: list[float | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.scores:
            self.scores = [None] * len(self.relevant)


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


def _judge_attributes(query: str, items: Sequence[Any], source: str, **_: Any) -> Attributes:  # noqa: ARG001
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
    replies_of: Replies[T] | None = None,
) -> GateResult:
    """``relevance_filter`` with its usage and whether it failed open, for the pipeline.
    ``replies_of`` gives an item's best-voted replies, best first, when the source has them at
    hand (the judge reads the first ``MAX_REPLIES``)."""
    if not items:
        return GateResult([], 1.0)
    gate_items = tuple(_gate_item(item, text_of, replies_of) for item in items)
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
    scores = _usable_scores(reply.output.scores, len(items))
    kept = [n for n, keep in enumerate(verdicts) if keep]
    relevant = [items[n] for n in kept]
    yield_ratio = round(len(relevant) / len(items), 4)
    log.info(
        "relevance_filter", source=source, items=len(items), relevant=len(relevant),
        yield_ratio=yield_ratio, engine=reply.engine,
    )  # fmt: skip
    return GateResult(relevant, yield_ratio, reply.usage, scores=[scores[n] for n in kept])


def _usable_scores(scores: Sequence[float], expected: int) -> list[float | None]:
    """Scores clamped to 0–1 where the reply gave one per item; else None for each."""
    if len(scores) != expected or not all(
        isinstance(s, int | float) and math.isfinite(s) for s in scores
    ):
        return [None] * expected
    return [min(max(float(s), 0.0), 1.0) for s in scores]


Search = Callable[[int], Awaitable[tuple[Sequence[T], bool]]]
"""``search(scale)`` → the items found with pages ``scale`` times the first, and whether the
first page came back full (more may exist)."""


@dataclass
class Gated(Generic[T]):
    """What the adaptive gate kept: relevant items (with their scores, see ``GateResult``)."""

    relevant: list[T]
    scores: list[float | None]
    judged: int
    yield_ratio: float
    refetched: bool = False
    failed_open: bool = False


async def adaptive_gate(
    query: str,
    search: Search[T],
    *,
    engine: Engine,
    source: str,
    min_yield: float = 0.5,
    key: Callable[[T], str] | None = None,
    text_of: Callable[[T], tuple[str, str]] = _title_and_body,
    replies_of: Replies[T] | None = None,
) -> Gated[T]:
    """Seed 002's adaptive pattern for any source: search, judge in one batched call; when
    fewer than ``min_yield`` are relevant and the first page was full, search once more with
    pages twice as large and judge again — never more than once. Fails open.

    With ``key`` the second judgement covers only items the first did not see (their
    verdicts are kept), so the refetch costs one call over the new items, not all of them.
    """
    items, full = await search(1)
    gate = await judge(query, items, source, engine=engine, text_of=text_of, replies_of=replies_of)
    if gate.yield_ratio >= min_yield or not full or gate.failed_open:
        return Gated(list(gate.relevant), gate.scores, len(items), gate.yield_ratio, False,
                     gate.failed_open)  # fmt: skip
    log.info("relevance_refetch", source=source, yield_ratio=gate.yield_ratio)
    more, _ = await search(2)
    if key is None:
        again = await judge(
            query, more, source, engine=engine, text_of=text_of, replies_of=replies_of
        )
        return Gated(list(again.relevant), again.scores, len(more), again.yield_ratio, True,
                     again.failed_open)  # fmt: skip
    seen = {key(item) for item in items}
    new = [item for item in more if key(item) not in seen]
    again = await judge(query, new, source, engine=engine, text_of=text_of, replies_of=replies_of)
    judged = len(items) + len(new)
    relevant = [*gate.relevant, *again.relevant]
    return Gated(
        relevant,
        [*gate.scores, *again.scores],
        judged,
        round(len(relevant) / judged, 4) if judged else 1.0,
        True,
        again.failed_open,
    )
