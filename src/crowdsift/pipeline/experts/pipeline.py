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
from datetime import datetime, timedelta

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.core.text import utc_now
from crowdsift.core.tracing import ITEMS_IN, ITEMS_OUT, STATUS, Attributes, observe, record_span
from crowdsift.engines.base import Engine, Usage
from crowdsift.pipeline.experts.comments import select_comment_groups
from crowdsift.pipeline.experts.language import validate_language
from crowdsift.pipeline.experts.map import run_map
from crowdsift.pipeline.experts.medium import run_medium_scoring
from crowdsift.pipeline.experts.reduce import run_reduce
from crowdsift.pipeline.experts.resolve import resolve
from crowdsift.pipeline.experts.synthesis import synthesize_comments
from crowdsift.sources.experts.models import (
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


def _expert_attributes(question: str, expert_id: str, **_: object) -> Attributes:
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
    timer = _Timer()
    usage = Usage()
    response = ExpertResponse(expert_id=expert_id, engine=engine.name)
    posts = store.posts(expert_id, since=since)
    response.counts["posts"] = len(posts)

    mapped = await run_map(question, posts, engine, config, sleep=sleep)
    usage.add(mapped.usage)
    timer.lap("map")
    high = [s for s in mapped.scored if s.relevance is Relevance.HIGH]
    medium = [s for s in mapped.scored if s.relevance is Relevance.MEDIUM]
    response.counts.update(
        high=len(high),
        medium=len(medium),
        low=len(mapped.scored) - len(high) - len(medium),
        map_failed=len(mapped.failed_post_ids),
    )
    if mapped.failed_post_ids:
        response.notes.append(
            f"{len(mapped.failed_post_ids)} posts could not be scored (map chunks failed twice)"
        )

    if posts and len(mapped.failed_post_ids) == len(posts):
        response.status = "failed"  # nothing was judged: an outage, not "nothing relevant"
        response.timings_ms = timer.timings
        return response

    selected = await run_medium_scoring(question, medium, engine, config, usage=usage)
    timer.lap("medium_scoring")
    resolved = resolve(expert_id, high, store, since=since)
    timer.lap("resolve")
    context = [*resolved, *selected]
    response.counts.update(
        medium_selected=len(selected),
        context=len([s for s in resolved if s.relevance is Relevance.CONTEXT]),
    )
    if not high and not selected:
        response.status = "partial" if mapped.failed_post_ids else "no_results"
        response.notes.append("no post of this expert is relevant to the question")
        response.timings_ms = timer.timings
        return response

    reduced = await run_reduce(question, expert, context, engine, config)
    usage.add(reduced.usage)
    timer.lap("reduce")
    response.removed_citations.extend(reduced.removed_citations)
    response.counts["reduce_context"] = len(reduced.context)

    language = await validate_language(question, reduced.answer, engine)
    usage.add(language.usage)
    timer.lap("language")
    response.answer = language.answer
    response.language = language.query_language if language.translated else language.answer_language
    if response.language == "und":
        response.language = language.query_language
    if language.note:
        response.notes.append(language.note)

    response.main_sources = _main_sources(reduced.context, reduced.cited_ids)
    main_ids = [source.post_id for source in response.main_sources]
    groups = await select_comment_groups(
        question, expert_id, main_ids, store, engine, config, since=since
    )
    usage.add(groups.usage)
    response.notes.extend(groups.notes)
    timer.lap("comment_groups")
    synthesis = await synthesize_comments(
        question, groups, engine, config, language=language.query_language
    )
    usage.add(synthesis.usage)
    timer.lap("comment_synthesis")
    response.comment_sections = synthesis.sections
    response.removed_citations.extend(synthesis.removed_citations)
    response.notes.extend(synthesis.notes)
    response.counts.update(
        author_clarifications=len(groups.author_clarifications),
        community_comments=len(groups.community),
        drift_groups=len(groups.drift),
        llm_calls=usage.calls,
    )
    response.timings_ms = timer.timings
    if response.removed_citations or mapped.failed_post_ids:
        response.status = "partial"
    return response


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
