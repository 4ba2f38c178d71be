"""The Experts Panel (seed 001, phases 1-7) for one expert, and every selected expert in parallel.

Per expert: map (mark every post HIGH/MEDIUM/LOW) → medium scoring (rescue the best MEDIUM
posts) → resolve (HIGH posts plus their depth-1 linked posts) → reduce (the answer, every
``[post:ID]`` checked) → language validation → comment groups → comment synthesis. Each phase
gets the engine and the store injected, and everything reads only this expert's rows. One
expert failing never loses the others' answers: it comes back with ``status="failed"`` and a
note. ``use_recent_only`` keeps posts, linked posts and drift groups of the last
``recent_days`` days, measured from the injected clock; ``since`` (``--since``) sets that bound
itself, and with both the later bound wins.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.core.text import utc_now
from crowdsift.core.tracing import ITEMS_IN, ITEMS_OUT, STATUS, Attributes, observe, record_span
from crowdsift.engines.base import Engine, Usage
from crowdsift.pipeline.experts.comments import select_comment_groups
from crowdsift.pipeline.experts.language import validate_language
from crowdsift.pipeline.experts.map import MapOutcome, run_map
from crowdsift.pipeline.experts.medium import run_medium_scoring
from crowdsift.pipeline.experts.reduce import run_reduce
from crowdsift.pipeline.experts.resolve import resolve
from crowdsift.pipeline.experts.synthesis import synthesize_comments
from crowdsift.sources.experts.models import (
    Expert,
    ExpertPost,
    ExpertResponse,
    ExpertSource,
    ExpertStore,
    Relevance,
    ScoredPost,
)

log = get_logger(__name__)
Clock = Callable[[], datetime]
Sleep = Callable[[float], Awaitable[None]]
EXCERPT_CHARS = 240
ExpertStatus = Literal["ok", "partial", "no_results", "failed"]


class _Timer:
    """Wall time per phase, in milliseconds, each phase also traced as an ``expert.<phase>``
    span (a child of the ``expert`` span, its bounds the lap's)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = time.perf_counter()
        self._start_ns = time.time_ns()

    def lap(self, phase: str) -> None:
        now, now_ns = time.perf_counter(), time.time_ns()
        self.timings[phase] = round((now - self._start) * 1000, 1)
        record_span(f"expert.{phase}", self._start_ns, now_ns)
        self._start, self._start_ns = now, now_ns


def _expert_attributes(question: str, expert_id: str, **_: object) -> Attributes:  # noqa: ARG001
    return {"crowdsift.expert_id": expert_id}


def _response_attributes(response: ExpertResponse) -> Attributes:
    return {
        STATUS: response.status,
        ITEMS_IN: response.counts.get("posts", 0),
        ITEMS_OUT: len(response.main_sources),
    }


@observe("expert", attributes=_expert_attributes, result_attributes=_response_attributes)
async def run_expert(
    question: str,
    expert_id: str,
    *,
    store: ExpertStore,
    engine: Engine,
    config: ExpertsConfig,
    use_recent_only: bool = False,
    clock: Clock = utc_now,
    sleep: Sleep = asyncio.sleep,
    since: datetime | None = None,
) -> ExpertResponse:
    """The whole panel for one expert: map, medium scoring, resolve, reduce, language, comments."""
    expert = store.get_expert(expert_id)
    if expert is None:
        raise CrowdsiftError(f"no expert {expert_id!r} in the store; see `crowdsift experts list`")
    since = recent_bound(since, clock() - timedelta(days=config.recent_days), use_recent_only)
    run = _ExpertRun(question, expert_id, store, engine, config, since)
    posts = store.posts(expert_id, since=since)
    run.response.counts["posts"] = len(posts)
    mapped = await run.map(posts, sleep)
    if posts and len(mapped.failed_post_ids) == len(posts):
        # nothing was judged: an outage, not "nothing relevant"
        return run.finish("failed")
    high, selected, context = await run.context(mapped)
    if not high and not selected:
        run.response.notes.append("no post of this expert is relevant to the question")
        return run.finish("partial" if mapped.failed_post_ids else "no_results")
    query_language = await run.answer(expert, context)
    await run.comments(query_language)
    run.response.counts["llm_calls"] = run.usage.calls
    failed = bool(run.response.removed_citations or mapped.failed_post_ids)
    return run.finish("partial" if failed else run.response.status)


@dataclass
class _ExpertRun:
    """One expert's panel as it goes: the response it fills, the engine usage and the time per
    phase. Each method is one step of ``run_expert``."""

    question: str
    expert_id: str
    store: ExpertStore
    engine: Engine
    config: ExpertsConfig
    since: datetime | None
    timer: _Timer = field(default_factory=lambda: _Timer())
    usage: Usage = field(default_factory=Usage)
    response: ExpertResponse = field(init=False)

    def __post_init__(self) -> None:
        self.response = ExpertResponse(expert_id=self.expert_id, engine=self.engine.name)

    def finish(self, status: ExpertStatus) -> ExpertResponse:
        self.response.status = status
        self.response.timings_ms = self.timer.timings
        return self.response

    async def map(self, posts: list[ExpertPost], sleep: Sleep) -> MapOutcome:
        """Every post marked HIGH, MEDIUM or LOW; how many of each, and which failed."""
        mapped = await run_map(self.question, posts, self.engine, self.config, sleep=sleep)
        self.usage.add(mapped.usage)
        self.timer.lap("map")
        high = sum(1 for s in mapped.scored if s.relevance is Relevance.HIGH)
        medium = sum(1 for s in mapped.scored if s.relevance is Relevance.MEDIUM)
        self.response.counts.update(
            high=high,
            medium=medium,
            low=len(mapped.scored) - high - medium,
            map_failed=len(mapped.failed_post_ids),
        )
        if mapped.failed_post_ids:
            self.response.notes.append(
                f"{len(mapped.failed_post_ids)} posts could not be scored (map chunks failed twice)"
            )
        return mapped

    async def context(
        self, mapped: MapOutcome
    ) -> tuple[list[ScoredPost], list[ScoredPost], list[ScoredPost]]:
        """The HIGH posts, the MEDIUM ones medium scoring rescued, and the reduce's context:
        the HIGH posts with their linked posts, then the rescued ones."""
        high = [s for s in mapped.scored if s.relevance is Relevance.HIGH]
        medium = [s for s in mapped.scored if s.relevance is Relevance.MEDIUM]
        selected = await run_medium_scoring(
            self.question, medium, self.engine, self.config, usage=self.usage
        )
        self.timer.lap("medium_scoring")
        resolved = resolve(self.expert_id, high, self.store, since=self.since)
        self.timer.lap("resolve")
        self.response.counts.update(
            medium_selected=len(selected),
            context=len([s for s in resolved if s.relevance is Relevance.CONTEXT]),
        )
        return high, selected, [*resolved, *selected]

    async def answer(self, expert: Expert, context: list[ScoredPost]) -> str:
        """The reduced answer in the question's language, and its sources; returns the
        question's language."""
        reduced = await run_reduce(self.question, expert, context, self.engine, self.config)
        self.usage.add(reduced.usage)
        self.timer.lap("reduce")
        response = self.response
        response.removed_citations.extend(reduced.removed_citations)
        response.counts["reduce_context"] = len(reduced.context)
        language = await validate_language(self.question, reduced.answer, self.engine)
        self.usage.add(language.usage)
        self.timer.lap("language")
        response.answer = language.answer
        response.language = (
            language.query_language if language.translated else language.answer_language
        )
        if response.language == "und":
            response.language = language.query_language
        if language.note:
            response.notes.append(language.note)
        response.main_sources = _main_sources(reduced.context, reduced.cited_ids)
        return language.query_language

    async def comments(self, query_language: str) -> None:
        """The comment groups beside the main sources, and their four sections."""
        response = self.response
        main_ids = [source.post_id for source in response.main_sources]
        groups = await select_comment_groups(
            self.question, self.expert_id, main_ids, self.store, self.engine, self.config,
            since=self.since,
        )  # fmt: skip
        self.usage.add(groups.usage)
        response.notes.extend(groups.notes)
        self.timer.lap("comment_groups")
        synthesis = await synthesize_comments(
            self.question, groups, self.engine, self.config, language=query_language
        )
        self.usage.add(synthesis.usage)
        self.timer.lap("comment_synthesis")
        response.comment_sections = synthesis.sections
        response.removed_citations.extend(synthesis.removed_citations)
        response.notes.extend(synthesis.notes)
        response.counts.update(
            author_clarifications=len(groups.author_clarifications),
            community_comments=len(groups.community),
            drift_groups=len(groups.drift),
        )


def recent_bound(
    since: datetime | None, recent: datetime, use_recent_only: bool
) -> datetime | None:
    """The oldest post an expert answer may use: ``--since``, the recent-only window
    (``recent``), the later of the two when both apply, or None (all posts)."""
    bounds = [b for b in (since, recent if use_recent_only else None) if b is not None]
    return max(bounds) if bounds else None


def _main_sources(context: Sequence[ScoredPost], cited: Sequence[int]) -> list[ExpertSource]:
    """The posts the answer cites, in citation order; if it cites none, its HIGH/MEDIUM posts."""
    by_id = {s.post.post_id: s for s in context}
    chosen = [by_id[pid] for pid in dict.fromkeys(cited) if pid in by_id]
    if not chosen:
        chosen = [s for s in context if s.relevance in (Relevance.HIGH, Relevance.MEDIUM)]
    return [
        ExpertSource(
            post_id=s.post.post_id,
            url=s.post.url,
            date=s.post.date,
            relevance=s.relevance,
            excerpt=_excerpt(s.post.text),
        )
        for s in chosen
    ]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1].rstrip() + "…"


async def run_panel(
    question: str,
    expert_ids: Sequence[str],
    *,
    store: ExpertStore,
    engine: Engine,
    config: ExpertsConfig,
    use_recent_only: bool = False,
    clock: Clock = utc_now,
    sleep: Sleep = asyncio.sleep,
    since: datetime | None = None,
) -> list[ExpertResponse]:
    """Every expert in parallel; one failure becomes that expert's ``failed`` response."""

    async def one(expert_id: str) -> ExpertResponse:
        try:
            return await run_expert(
                question,
                expert_id,
                store=store,
                engine=engine,
                config=config,
                use_recent_only=use_recent_only,
                clock=clock,
                sleep=sleep,
                since=since,
            )
        except CrowdsiftError as exc:
            log.warning("expert_failed", expert_id=expert_id, error=str(exc)[:300])
            return ExpertResponse(
                expert_id=expert_id, status="failed", notes=[str(exc)], engine=engine.name
            )

    return list(await asyncio.gather(*(one(expert_id) for expert_id in expert_ids)))
