"""How the parts of a research run become the result's parts, and how their statuses agree.

Pure: the Reddit branch's ``RedditRun`` and the synthesis step's ``Synthesized`` (its
``Answer``, or the bound that cut it) become ``reddit_response`` and ``fetch``, combined here
rather than written into the finished run; ``agreeing_summary`` keeps ``summary`` from saying
ok beside a Reddit answer that is not; ``overall_status`` is ``error`` when every part failed,
``partial`` when any part is not ok (or the budget cut calls), else ``ok``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.branch import RedditRun
from crowdsift.pipeline.reddit.models import RedditResponse, SidecarStatus
from crowdsift.pipeline.result import FetchSummary, ResearchStatus
from crowdsift.pipeline.synthesis.answer import Answer
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import SourceFetch


@dataclass(frozen=True)
class Synthesized:
    """What the synthesis step of a run produced: the answer, or none, and whether the Reddit
    answer's time bound ran out during it (``errors`` then says so)."""

    answer: Answer | None = None
    timed_out: bool = False
    errors: tuple[str, ...] = ()


def reddit_response(
    source: str,
    engine: str,
    usage: Usage,
    run: RedditRun | None,
    synthesized: Synthesized,
    failure: str | None = None,
) -> RedditResponse | None:
    """The Reddit branch as ``reddit_response``: what was searched, ranked and drilled, and the
    staff-engineer sections of the one synthesis; ``failed`` with ``failure``'s message."""
    if failure is not None:
        return RedditResponse(status="failed", engine=engine, source=source, errors=[failure])
    if run is None:
        return None
    answer = synthesized.answer
    errors = [*run.errors, *synthesized.errors, *(answer.errors if answer else [])]
    return RedditResponse(
        status=reddit_status(run, synthesized),
        engine=engine,
        source=source,
        analysis=run.analysis,
        queries=run.plan.queries if run.plan else [],
        candidates_found=len(run.candidates) + run.duplicates_removed,
        duplicates_removed=run.duplicates_removed,
        ranked=run.ranked,
        rerank_fell_back=run.rerank_fell_back,
        threads_drilled=sum(1 for t in run.threads if t.error is None),
        comments_drilled=sum(len(t.comments) for t in run.threads),
        synthesis=answer.synthesis if answer else None,
        timed_out=run.timed_out or synthesized.timed_out,
        errors=errors,
        timings_ms=run.timings,
        usage=usage,
    )


def reddit_status(run: RedditRun, synthesized: Synthesized) -> SidecarStatus:
    timed_out = run.timed_out or synthesized.timed_out
    if run.searches and run.failed_searches == run.searches:
        return "failed"
    if not run.candidates and not timed_out:
        return "no_results"
    answer = synthesized.answer
    synthesis = answer.synthesis if answer else None
    degraded = (
        timed_out
        or bool(run.errors or synthesized.errors)
        or synthesis is None
        or bool(synthesis.removed_citations or synthesis.dropped_claims)
        or (answer is not None and answer.summary.status != "ok")
    )
    return "partial" if degraded else "ok"


def agreeing_summary(
    summary: SummarizeResult | None, reddit: RedditResponse | None
) -> SummarizeResult | None:
    """The summary, ``partial`` when the Reddit answer it draws on is not ok (a search failed,
    the sections cited what does not exist, Reddit failed or found nothing while videos or
    products answered), so ``summary`` and ``reddit_response`` never disagree."""
    if summary is None or reddit is None or summary.status != "ok" or reddit.status == "ok":
        return summary
    if reddit.errors:
        why = reddit.errors[0]
    elif reddit.status == "no_results":
        why = "Reddit found no matching discussion"
    else:
        why = "its sections cited evidence that does not exist"
    return summary.model_copy(
        update={"status": "partial", "reason": f"the Reddit answer is {reddit.status}: {why}"}
    )


def fetch_summary(source: str, run: RedditRun) -> FetchSummary:
    """The real fetch report and what the gate did, in the counts ``ask --json`` reports."""
    report = run.report
    return FetchSummary(
        source=source,
        posts_seen=report.posts_seen if report else 0,
        posts_accepted=report.posts_accepted if report else 0,
        posts_relevant=run.gate.relevant,
        posts_judged=run.gate.judged,
        yield_ratio=run.gate.yield_ratio,
        refetched=run.gate.refetched,
        gate_failed_open=run.gate.failed_open,
        comments_accepted=sum(len(t.comments) for t in run.threads),
        requests=report.requests if report else 0,
        post_rejections=report.post_rejections if report else {},
        skipped_subreddits=report.skipped_subreddits if report else {},
        errors=report.errors if report else [],
    )


def overall_status(
    experts: Sequence[ExpertResponse],
    reddit: RedditResponse | None,
    summary: SummarizeResult | None,
    fetches: Sequence[SourceFetch] = (),
    usage: Usage | None = None,
) -> ResearchStatus:
    """``error`` when every part failed; ``partial`` when any did or the budget cut calls."""
    parts: list[str] = [e.status for e in experts]
    if usage is not None and usage.budget_exhausted:
        parts.append("partial")
    parts += ["failed" if f.errors else "ok" for f in fetches if not f.skipped]
    if reddit is not None:
        parts.append(reddit.status)
    if summary is not None:
        parts.append(summary.status)
    failed = {"failed", "error"}
    if parts and all(p in failed for p in parts):
        return "error"
    return "ok" if all(p == "ok" for p in parts) else "partial"
