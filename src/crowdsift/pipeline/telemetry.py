"""Rejection and gate telemetry: what each source saw, kept, judged relevant, and why it dropped
the rest, plus what the LLM calls cost.

Pure: everything is derived from fields a ``ResearchResult`` (or a fetch's ``FetchResult`` and
``FetchReport``) already carries, so the same numbers come out of ``crowdsift ask -v``, a stored
job result and the service's ``/metrics`` counters (``crowdsift.service.metrics``), and a past run
can be re-counted from its JSON.

A source's funnel is ``seen`` (what the source returned, repeats included) → ``accepted`` (passed
the filters: veto, cleaning, score) → ``relevant`` (passed the relevance gate or the rerank/drill
cut). ``rejections`` names why posts left the funnel:

- the filtering layer's ``RejectReason`` values (``below_threshold``, ``too_short`` …);
- the relevance gate (Reddit, YouTube, Amazon): ``irrelevant``;
- Reddit's fetcher and cuts: ``duplicate`` (a post another search had already returned),
  ``near_duplicate`` (folded by the title dedupe), ``not_judged`` (beyond the heuristic cut the
  gate judges), ``not_reranked`` (past the rerank's top 40) and ``not_drilled`` (ranked below the
  drill cut, or its thread could not be read), so that ``seen - relevant`` is the sum of the
  rejections and ``relevant`` is what reached the answer;
- an expert archive (its map phase is the gate): ``low``, ``medium_not_selected`` and
  ``map_failed`` (posts whose map chunk failed twice).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, Field

from crowdsift.core.models import FetchReport, FetchResult
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.result import FetchSummary, ResearchResult
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import SourceFetch

_Reason = TypeVar("_Reason", bound=str)


class SourceTelemetry(BaseModel):
    """One source's funnel and gate in numbers."""

    seen: int = Field(0, description="posts/items the source returned (repeats included)")
    accepted: int = Field(0, description="passed the filters (veto, cleaning, score)")
    relevant: int = Field(0, description="passed the relevance gate / rerank and drill")
    yield_ratio: float | None = Field(None, description="the gate's yield; null when no gate ran")
    gate_failed_open: bool = Field(False, description="the gate failed and let everything through")
    refetched: bool = Field(False, description="the gate asked for a second, larger fetch")
    skipped: str | None = Field(None, description="why the source did not run")
    rejections: dict[str, int] = Field(default_factory=dict, description="reason -> posts")
    comments_accepted: int = 0
    comment_rejections: dict[str, int] = Field(default_factory=dict, description="reason -> n")
    errors: int = Field(0, description="queries, threads or calls that failed for good")


class RunTelemetry(BaseModel):
    """Every source of one run, keyed ``reddit-api`` / ``archive`` / ``arctic-shift`` /
    ``youtube`` / ``amazon`` / ``expert:<id>``, and the run's LLM usage."""

    sources: dict[str, SourceTelemetry] = Field(default_factory=dict)
    llm_calls_by_phase: dict[str, int] = Field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def run_telemetry(result: ResearchResult) -> RunTelemetry:
    """The telemetry of a research run (``crowdsift ask``, a research job)."""
    telemetry = RunTelemetry(
        llm_calls_by_phase=dict(result.usage.by_phase),
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
        cost_usd=result.usage.cost_usd,
    )
    reddit = _reddit(result.fetch, result.reddit_response)
    if reddit is not None:
        _merge(telemetry.sources, *reddit)
    for fetched in result.source_fetches:
        _merge(telemetry.sources, fetched.kind, _gated_source(fetched))
    for expert in result.expert_responses:
        _merge(telemetry.sources, f"expert:{expert.expert_id}", _expert(expert))
    return telemetry


def fetch_telemetry(result: FetchResult, report: FetchReport) -> RunTelemetry:
    """The telemetry of a plain fetch (``crowdsift fetch``, ``POST /api/fetch``): filters only,
    no gate, so every accepted post that was returned counts as relevant."""
    source = SourceTelemetry(
        seen=report.posts_seen,
        accepted=report.posts_accepted,
        relevant=len(result.posts),
        rejections=_counts(report.post_rejections),
        comments_accepted=report.comments_accepted,
        comment_rejections=_counts(report.comment_rejections),
        errors=len(report.errors),
    )
    return RunTelemetry(sources={report.source: source})


def telemetry_lines(t: RunTelemetry) -> list[str]:
    """The block ``crowdsift ask -v`` prints on stderr: a line per source and its rejections,
    then the LLM's. ``key=value`` pairs, so people read them and scripts grep them."""
    lines = ["telemetry:"]
    for key, source in t.sources.items():
        if source.skipped is not None:
            lines.append(f"  {key}: skipped ({source.skipped})")
            continue
        funnel = f"seen={source.seen} accepted={source.accepted} relevant={source.relevant}"
        if source.yield_ratio is not None:
            funnel += f" yield={source.yield_ratio:.2f}"
        if source.comments_accepted:
            funnel += f" comments={source.comments_accepted}"
        flags = [
            name
            for name, on in (
                ("gate-failed-open", source.gate_failed_open),
                ("refetched", source.refetched),
            )
            if on
        ]
        if source.errors:
            flags.append(f"errors={source.errors}")
        lines.append(f"  {key}: {' '.join([funnel, *flags])}")
        if source.rejections:
            lines.append(f"    rejected: {_pairs(source.rejections)}")
        if source.comment_rejections:
            lines.append(f"    comments rejected: {_pairs(source.comment_rejections)}")
    calls = sum(t.llm_calls_by_phase.values())
    lines.append(
        f"  llm: calls={calls} prompt_tokens={t.prompt_tokens} "
        f"completion_tokens={t.completion_tokens} cost_usd={t.cost_usd:.4f}"
    )
    if t.llm_calls_by_phase:
        lines.append(f"    calls by phase: {_pairs(t.llm_calls_by_phase)}")
    return lines


# --- per source ------------------------------------------------------------------------------


def _reddit(
    fetch: FetchSummary | None, response: RedditResponse | None
) -> tuple[str, SourceTelemetry] | None:
    """Reddit's funnel: the fetcher's counts (filters and dedupe), then the gate's judgement
    and the rerank and drill cuts; ``relevant`` is what reached the answer (drilled threads)."""
    if fetch is None:
        if response is None:
            return None
        # The branch failed before it fetched anything it could report.
        return response.source, SourceTelemetry(errors=len(response.errors))
    drilled = response.threads_drilled if response is not None else fetch.posts_relevant
    rejections = _counts(fetch.post_rejections)
    if response is not None and response.duplicates_removed:
        near = min(response.duplicates_removed, rejections.get("duplicate", 0))
        rejections["duplicate"] = rejections.get("duplicate", 0) - near
        rejections["near_duplicate"] = near
        rejections = _positive(rejections)
    ranked = len(response.ranked) if response is not None else fetch.posts_relevant
    cuts = {
        "not_judged": fetch.posts_accepted - fetch.posts_judged,
        "irrelevant": fetch.posts_judged - fetch.posts_relevant,
        "not_reranked": fetch.posts_relevant - ranked,
        "not_drilled": ranked - drilled,
    }
    for reason, count in _positive(cuts).items():
        rejections[reason] = rejections.get(reason, 0) + count
    return fetch.source, SourceTelemetry(
        seen=fetch.posts_seen,
        accepted=fetch.posts_accepted,
        relevant=drilled,
        yield_ratio=fetch.yield_ratio,
        gate_failed_open=fetch.gate_failed_open,
        refetched=fetch.refetched,
        rejections=rejections,
        comments_accepted=fetch.comments_accepted,
        errors=len(fetch.errors),
    )


def _gated_source(fetched: SourceFetch) -> SourceTelemetry:
    """YouTube / Amazon: no filters before the gate; what the gate turned down is irrelevant."""
    if fetched.skipped is not None:
        return SourceTelemetry(skipped=fetched.skipped)
    return SourceTelemetry(
        seen=fetched.fetched,
        accepted=fetched.fetched,
        relevant=len(fetched.items),
        yield_ratio=fetched.yield_ratio,
        gate_failed_open=fetched.failed_open,
        refetched=fetched.refetched,
        rejections=_positive({"irrelevant": fetched.fetched - len(fetched.items)}),
        errors=len(fetched.errors),
    )


def _expert(response: ExpertResponse) -> SourceTelemetry:
    """An expert archive: every post is read (no filters); the map phase is the gate. HIGH posts
    and the MEDIUM posts that scored high enough are relevant."""
    counts = response.counts
    posts = counts.get("posts", 0)
    medium = counts.get("medium", 0)
    selected = counts.get("medium_selected", 0)
    relevant = counts.get("high", 0) + selected
    return SourceTelemetry(
        seen=posts,
        accepted=posts,
        relevant=relevant,
        yield_ratio=round(relevant / posts, 4) if posts else None,
        rejections=_positive(
            {
                "low": counts.get("low", 0),
                "medium_not_selected": medium - selected,
                "map_failed": counts.get("map_failed", 0),
            }
        ),
        errors=1 if response.status == "failed" else 0,
    )


# --- helpers ---------------------------------------------------------------------------------


def _merge(sources: dict[str, SourceTelemetry], key: str, more: SourceTelemetry) -> None:
    """Add ``more`` under ``key``; the same source twice in one run adds up."""
    known = sources.get(key)
    if known is None:
        sources[key] = more
        return
    for name in ("seen", "accepted", "relevant", "comments_accepted", "errors"):
        setattr(known, name, getattr(known, name) + getattr(more, name))
    for mine, theirs in (
        (known.rejections, more.rejections),
        (known.comment_rejections, more.comment_rejections),
    ):
        for reason, count in theirs.items():
            mine[reason] = mine.get(reason, 0) + count
    known.gate_failed_open = known.gate_failed_open or more.gate_failed_open
    known.refetched = known.refetched or more.refetched
    known.skipped = known.skipped if more.skipped is None else more.skipped


def _counts(reasons: Mapping[_Reason, int]) -> dict[str, int]:
    """Enum-keyed counts as plain ``str`` keys (``RejectReason`` is a ``StrEnum``)."""
    return {str(reason): count for reason, count in reasons.items()}


def _positive(counts: Mapping[str, int]) -> dict[str, int]:
    return {reason: count for reason, count in counts.items() if count > 0}


def _pairs(counts: Mapping[str, int]) -> str:
    return " ".join(f"{key}={value}" for key, value in counts.items())
