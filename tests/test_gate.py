"""The relevance gate: yield, exactly one refetch, fail-open on any failure (seed 002)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.errors import EngineTransportError
from crowdsift.gate import RelevanceTask, RelevanceVerdicts, gated_fetch, relevance_filter
from crowdsift.models import FetchReport, FetchResult, Post, SearchPlan

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PLAN = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"])


def post(post_id: str, title: str = "Plaud Note review", body: str = "b" * 300) -> Post:
    return Post(
        id=post_id, title=title, selftext=body, post_karma=1, relevance_score=1.0,
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


class FakeFetch:
    """Returns ``limit`` posts per call and says whether the page was full."""

    def __init__(self, full: bool = True) -> None:
        self.limits: list[int] = []
        self.full = full

    def __call__(self, plan: SearchPlan, limit: int) -> tuple[FetchResult, FetchReport]:
        self.limits.append(limit)
        posts = [post(f"p{i}") for i in range(limit)]
        result = FetchResult(
            query="q", plan_id=plan.plan_id, search_terms=plan.search_terms,
            subreddits=plan.subreddits, fetched_at=NOW, posts=posts,
        )  # fmt: skip
        return result, FetchReport(source="archive", full_queries=1 if self.full else 0)


def verdicts(*flags: bool) -> RelevanceVerdicts:
    return RelevanceVerdicts(relevant=list(flags))


def run_gated(fetch: FakeFetch, engine: ScriptedEngine) -> Any:
    return asyncio.run(gated_fetch(PLAN, "q", fetch=fetch, engine=engine, initial_limit=4))


def test_low_yield_on_a_full_page_refetches_exactly_once_with_twice_the_limit() -> None:
    fetch = FakeFetch()
    engine = ScriptedEngine([verdicts(True, False, False, False), verdicts(*[False] * 8)])
    gated = run_gated(fetch, engine)
    assert fetch.limits == [4, 8]
    assert gated.refetched and gated.result.posts == [] and gated.yield_ratio == 0.0
    assert len(engine.requests) == 2  # never a third call, however low the second yield


def test_good_yield_or_short_page_does_not_refetch() -> None:
    fetch = FakeFetch()
    gated = run_gated(fetch, ScriptedEngine([verdicts(True, True, False, False)]))
    assert fetch.limits == [4] and not gated.refetched and len(gated.result.posts) == 2
    short = FakeFetch(full=False)
    run_gated(short, ScriptedEngine([verdicts(False, False, False, False)]))
    assert short.limits == [4]


def test_a_failing_gate_keeps_everything_and_does_not_refetch() -> None:
    fetch = FakeFetch()
    gated = run_gated(fetch, ScriptedEngine([EngineTransportError("timeout")]))
    assert fetch.limits == [4] and gated.failed_open and len(gated.result.posts) == 4


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
