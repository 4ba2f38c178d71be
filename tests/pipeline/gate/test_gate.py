"""The relevance gate: yield, exactly one refetch, fail-open on any failure (seed 002)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from crowdsift.core.errors import EngineTransportError
from crowdsift.core.models import Post
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import (
    RelevanceTask,
    RelevanceVerdicts,
    adaptive_gate,
    relevance_filter,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def post(post_id: str, title: str | None = None, body: str = "b" * 300) -> Post:
    return Post(
        id=post_id, title=title or f"title {post_id}", selftext=body, post_karma=1,
        relevance_score=1.0,
        url=f"https://www.reddit.com/r/gadgets/comments/{post_id}/x/", fetched_at=NOW,
        source="archive", subreddit="gadgets",
    )  # fmt: skip


def test_yield_and_relevant_items() -> None:
    items = [post("a"), post("b"), post("c"), post("d")]
    engine = ScriptedEngine([RelevanceVerdicts(relevant=[True, False, True, False])])
    relevant, yield_ratio = asyncio.run(relevance_filter("plaud", items, "reddit", engine=engine))
    assert [p.id for p in relevant] == ["a", "c"] and yield_ratio == 0.5
    task = engine.requests[0]
    assert isinstance(task, RelevanceTask)
    assert [len(item.snippet) for item in task.items] == [200] * 4  # first 200 chars only


def test_bare_array_replies_are_accepted() -> None:
    engine = ScriptedEngine(["[true, false]"])
    relevant, yield_ratio = asyncio.run(
        relevance_filter("q", [post("a"), post("b")], "reddit", engine=engine)
    )
    assert [p.id for p in relevant] == ["a"] and yield_ratio == 0.5


def test_fail_open_on_engine_error_wrong_length_and_garbage() -> None:
    items = [post("a"), post("b")]
    for reply in (
        EngineTransportError("503 from the endpoint"),
        RelevanceVerdicts(relevant=[True]),
        "not json at all",
        '{"relevant": "yes"}',
    ):
        engine = ScriptedEngine([reply])
        relevant, yield_ratio = asyncio.run(relevance_filter("q", items, "reddit", engine=engine))
        assert (relevant, yield_ratio) == (items, 1.0), reply


def test_empty_input_needs_no_call() -> None:
    engine = ScriptedEngine()
    assert asyncio.run(relevance_filter("q", [], "reddit", engine=engine)) == ([], 1.0)
    assert engine.requests == []


class FakeSearch:
    """Returns ``4 × scale`` posts per call and says whether the first page was full."""

    def __init__(self, full: bool = True) -> None:
        self.limits: list[int] = []
        self.full = full

    async def __call__(self, scale: int) -> tuple[list[Post], bool]:
        self.limits.append(4 * scale)
        return [post(f"p{i}") for i in range(4 * scale)], self.full


def verdicts(*flags: bool) -> RelevanceVerdicts:
    return RelevanceVerdicts(relevant=list(flags))


def run_gated(search: FakeSearch, engine: ScriptedEngine, **options: Any) -> Any:
    return asyncio.run(adaptive_gate("q", search, engine=engine, source="archive", **options))


def test_low_yield_on_a_full_page_refetches_exactly_once_with_twice_the_limit() -> None:
    search = FakeSearch()
    engine = ScriptedEngine([verdicts(True, False, False, False), verdicts(*[False] * 8)])
    gated = run_gated(search, engine)
    assert search.limits == [4, 8]
    assert gated.refetched and gated.relevant == [] and gated.yield_ratio == 0.0
    assert len(engine.requests) == 2  # never a third call, however low the second yield


def test_a_keyed_refetch_judges_only_new_items_and_keeps_the_first_verdicts() -> None:
    search = FakeSearch()
    first = RelevanceVerdicts(relevant=[True, False, False, False], scores=[0.9, 0, 0, 0.1])
    engine = ScriptedEngine([first, verdicts(False, True, False, False)])
    gated = run_gated(search, engine, key=lambda p: p.id)
    assert [p.id for p in gated.relevant] == ["p0", "p5"]
    assert gated.scores == [0.9, None]  # the second reply had no scores
    assert gated.judged == 8 and gated.yield_ratio == 0.25 and gated.refetched
    second = engine.requests[1]
    assert [item.title for item in second.items] == ["title p4", "title p5", "title p6", "title p7"]


def test_good_yield_or_short_page_does_not_refetch() -> None:
    search = FakeSearch()
    gated = run_gated(search, ScriptedEngine([verdicts(True, True, False, False)]))
    assert search.limits == [4] and not gated.refetched and len(gated.relevant) == 2
    short = FakeSearch(full=False)
    run_gated(short, ScriptedEngine([verdicts(False, False, False, False)]))
    assert short.limits == [4]


def test_a_failing_gate_keeps_everything_and_does_not_refetch() -> None:
    search = FakeSearch()
    gated = run_gated(search, ScriptedEngine([EngineTransportError("timeout")]))
    assert search.limits == [4] and gated.failed_open and len(gated.relevant) == 4


def test_local_judge_separates_on_topic_from_off_topic() -> None:
    items = [
        post("a", "Plaud Note battery life after a month", "The plaud note battery lasts"),
        post("b", "Best cordless drill for concrete", "Hammer drill with SDS bits"),
    ]
    engine = LocalEngine(embedder=HashingEmbedder())
    relevant, yield_ratio = asyncio.run(
        relevance_filter("plaud note battery", items, "reddit", engine=engine)
    )
    assert [p.id for p in relevant] == ["a"] and yield_ratio == 0.5
