"""Seed 002's adaptive pattern for any source: ``gated_source_fetch``.

The fetch is a plain function that records the limits it was asked for; the gate is a
``ScriptedEngine`` judging items by their titles, so every yield below is exact.
"""

from __future__ import annotations

import asyncio
from typing import Any

from crowdsift.core.errors import EngineError
from crowdsift.engines.base import Task
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
from crowdsift.pipeline.gate.sources import gated_source_fetch
from crowdsift.sources.models import EvidenceItem, SourceFetch

QUERY = "standing desk"


def _item(n: int, relevant: bool) -> EvidenceItem:
    label = "on topic" if relevant else "off topic"
    return EvidenceItem(
        kind="youtube",
        id=f"vid{n:03d}",
        title=f"{label} video {n}",
        text=f"description of video {n}",
        url=f"https://www.youtube.com/watch?v=vid{n:03d}",  # type: ignore[arg-type]
        where="A Channel",
    )


class RecordingFetch:
    """``fetch(query, limit)``: the first ``limit`` of ``pool`` (or at most ``cap``), recorded."""

    def __init__(self, pool: list[EvidenceItem], cap: int | None = None) -> None:
        self.pool = pool
        self.cap = cap
        self.calls: list[tuple[str, int]] = []

    def __call__(self, query: str, limit: int) -> list[EvidenceItem]:
        self.calls.append((query, limit))
        count = limit if self.cap is None else min(limit, self.cap)
        return self.pool[:count]


def _by_title(task: Task[Any]) -> RelevanceVerdicts:
    assert isinstance(task, RelevanceTask)
    return RelevanceVerdicts(relevant=[item.title.startswith("on topic") for item in task.items])


def _run(fetch: RecordingFetch, engine: ScriptedEngine, **kwargs: Any) -> SourceFetch:
    return asyncio.run(
        gated_source_fetch(QUERY, kind="youtube", fetch=fetch, engine=engine, **kwargs)
    )


def test_high_yield_keeps_the_first_page_without_refetching() -> None:
    pool = [_item(n, relevant=n % 5 != 4) for n in range(10)]  # 4 of the first 5 relevant
    fetch, engine = RecordingFetch(pool), ScriptedEngine(function=_by_title)

    result = _run(fetch, engine)

    assert fetch.calls == [(QUERY, 5)]
    assert [item.id for item in result.items] == ["vid000", "vid001", "vid002", "vid003"]
    assert (result.fetched, result.yield_ratio, result.refetched) == (5, 0.8, False)
    assert result.kind == "youtube" and result.query == QUERY
    assert len(engine.requests) == 1


def test_exactly_half_relevant_is_enough() -> None:
    pool = [_item(n, relevant=n in (0, 1)) for n in range(4)]
    fetch = RecordingFetch(pool)

    result = _run(fetch, ScriptedEngine(function=_by_title), initial_limit=4)

    assert fetch.calls == [(QUERY, 4)]
    assert result.yield_ratio == 0.5 and not result.refetched


def test_low_yield_on_a_full_page_refetches_once_with_twice_the_limit() -> None:
    pool = [_item(n, relevant=n in (0, 6, 8)) for n in range(12)]  # 1 of 5; 3 of 10
    fetch, engine = RecordingFetch(pool), ScriptedEngine(function=_by_title)

    result = _run(fetch, engine)

    assert fetch.calls == [(QUERY, 5), (QUERY, 10)]
    assert result.refetched
    assert result.fetched == 10
    assert [item.id for item in result.items] == ["vid000", "vid006", "vid008"]
    assert result.yield_ratio == 0.3  # the second gate's yield
    assert [len(task.items) for task in engine.requests] == [5, 10]


def test_never_more_than_two_fetches_even_when_nothing_is_relevant() -> None:
    pool = [_item(n, relevant=False) for n in range(30)]
    fetch = RecordingFetch(pool)

    result = _run(fetch, ScriptedEngine(function=_by_title))

    assert fetch.calls == [(QUERY, 5), (QUERY, 10)]
    assert result.items == [] and result.yield_ratio == 0.0 and result.refetched


def test_low_yield_on_a_short_page_does_not_refetch() -> None:
    pool = [_item(n, relevant=n == 0) for n in range(3)]
    fetch = RecordingFetch(pool, cap=3)  # the source had only three

    result = _run(fetch, ScriptedEngine(function=_by_title))

    assert fetch.calls == [(QUERY, 5)]
    assert [item.id for item in result.items] == ["vid000"]
    assert result.fetched == 3 and not result.refetched
    assert round(result.yield_ratio, 2) == 0.33


def test_initial_limit_and_min_yield_are_honoured() -> None:
    pool = [_item(n, relevant=n in (0, 1)) for n in range(10)]  # 2 of 3 relevant
    fetch = RecordingFetch(pool)

    result = _run(fetch, ScriptedEngine(function=_by_title), initial_limit=3, min_yield=0.8)

    assert fetch.calls == [(QUERY, 3), (QUERY, 6)]
    assert result.refetched and result.fetched == 6


def test_engine_error_fails_open_with_every_item() -> None:
    pool = [_item(n, relevant=False) for n in range(5)]
    fetch = RecordingFetch(pool)
    engine = ScriptedEngine([EngineError("the model endpoint is down")])

    result = _run(fetch, engine)

    assert fetch.calls == [(QUERY, 5)]  # a failed gate says yield 1.0: no refetch
    assert [item.id for item in result.items] == [item.id for item in pool]
    assert result.failed_open and result.yield_ratio == 1.0 and not result.refetched


def test_wrong_length_reply_fails_open() -> None:
    pool = [_item(n, relevant=False) for n in range(5)]
    engine = ScriptedEngine([RelevanceVerdicts(relevant=[False, False])])

    result = _run(RecordingFetch(pool), engine)

    assert len(result.items) == 5 and result.failed_open


def test_nothing_fetched_asks_no_judge() -> None:
    fetch, engine = RecordingFetch([]), ScriptedEngine()

    result = _run(fetch, engine)

    assert fetch.calls == [(QUERY, 5)]
    assert engine.requests == []
    assert result.items == [] and result.fetched == 0 and not result.refetched


def test_the_judge_sees_title_and_the_start_of_the_text() -> None:
    item = _item(1, relevant=True).model_copy(update={"text": "x" * 500})
    engine = ScriptedEngine(function=_by_title)

    _run(RecordingFetch([item]), engine)

    task = engine.requests[0]
    assert isinstance(task, RelevanceTask)
    assert task.query == QUERY and task.source == "youtube"
    assert task.items[0].title == item.title
    assert task.items[0].snippet == "x" * 200
