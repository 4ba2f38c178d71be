"""How the parts of a research run become the result's parts.

Pure: the Reddit branch's ``RedditRun`` and the synthesis step's ``Synthesized`` (its
``Answer``, or the bound that cut it) become ``reddit_response``, ``summary`` and ``fetch``,
combined here rather than written into the finished run. Their statuses are decided together,
once, from the facts (``crowdsift.pipeline.status.decide``), so each part is built with its
final status and ``summary`` never says ok beside a Reddit answer that is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.branch import RedditRun
from crowdsift.pipeline.reddit.models import RedditResponse, RedditStatus
from crowdsift.pipeline.result import FetchSummary
from crowdsift.pipeline.status import RedditFacts, Verdict, decide, judged_summary
from crowdsift.pipeline.synthesis.answer import Answer
from crowdsift.pipeline.synthesis.models import RedditSynthesis, SummarizeResult


@dataclass(frozen=True)
class Synthesized:
    """What the synthesis step of a run produced: the answer, or none, and whether the Reddit
    answer's time bound ran out during it (``errors`` then says so)."""

    answer: Answer | None = None
    timed_out: bool = False
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerParts:
    """The result's ``reddit_response`` and ``summary``, each with its final status."""

    reddit: RedditResponse | None
    summary: SummarizeResult | None


def answer_parts(
    source: str,
    engine: str,
    usage: Usage,
    run: RedditRun | None,
    synthesized: Synthesized,
    failure: str | None = None,
) -> AnswerParts:
    """``reddit_response`` and ``summary`` from the branch's run (or its ``failure``) and the
    synthesis step, their statuses decided once from the facts of both."""
    answer = synthesized.answer
    facts = reddit_facts(run, synthesized, failure)
    decided = decide(answer.verdict if answer else Verdict(), facts)
    response = None
    if facts is not None and decided.reddit is not None:
        sections = answer.synthesis if answer else None
        response = reddit_response(source, engine, usage, run, facts, decided.reddit, sections)
    summary = judged_summary(answer.content, decided.summary) if answer else None
    return AnswerParts(reddit=response, summary=summary)


def reddit_facts(
    run: RedditRun | None, synthesized: Synthesized, failure: str | None = None
) -> RedditFacts | None:
    """What the Reddit answer's status is decided from; None when Reddit was not searched."""
    if failure is not None:
        return RedditFacts(failure=failure, errors=(failure,))
    if run is None:
        return None
    answer = synthesized.answer
    synthesis = answer.synthesis if answer else None
    return RedditFacts(
        searches=run.searches,
        failed_searches=run.failed_searches,
        candidates=len(run.candidates),
        timed_out=run.timed_out or synthesized.timed_out,
        errors=_errors(run, synthesized),
        sections=synthesis is not None,
        sections_cut=synthesis is not None
        and bool(synthesis.removed_citations or synthesis.dropped_claims),
    )


def reddit_response(
    source: str,
    engine: str,
    usage: Usage,
    run: RedditRun | None,
    facts: RedditFacts,
    status: RedditStatus,
    synthesis: RedditSynthesis | None,
) -> RedditResponse:
    """The Reddit branch as ``reddit_response``, with the ``status`` decided for it: what was
    searched, ranked and drilled, and the staff-engineer sections of the one synthesis; a
    failed branch (no run) has only its failure to say."""
    errors = list(facts.errors)
    if run is None:
        return RedditResponse(status=status, engine=engine, source=source, errors=errors)
    return RedditResponse(
        status=status,
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
        synthesis=synthesis,
        timed_out=facts.timed_out,
        errors=errors,
        timings_ms=run.timings,
        usage=usage,
    )


def _errors(run: RedditRun, synthesized: Synthesized) -> tuple[str, ...]:
    """The branch's errors, then the synthesis step's (the bound), then the answer's."""
    answer = synthesized.answer
    return (*run.errors, *synthesized.errors, *(answer.errors if answer else ()))


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
