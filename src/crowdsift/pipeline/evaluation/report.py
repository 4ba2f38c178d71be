"""One case's answer measured against its labels, and the totals checked against targets (pure).

Every answer, crowdsift's or the baseline's, is measured by the same ``measure_answer``: key
advice in what is shown and in its lead, the answering thread's rank in the answer's own list
of threads (hit@5, reciprocal rank), abstention, rows and seconds. crowdsift's answer is also
checked for grounding, and the thread's rank in the run's retrieval order is kept as a
diagnostic (did retrieval find it at all, or did the answer leave it out?).

Targets (issue 18) for the local engine, applied to whichever engine ran: the key advice in
what is shown for at least 90 % of answerable cases, every abstention right (off-topic cases
abstain, answerable ones do not), every answer at most 50 terminal rows at 100 columns, and
every grounding check held. Lead, hit@5 and MRR are reported without a target; the baseline's
figures are reported beside crowdsift's, never judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, Field

from crowdsift.pipeline.evaluation.cases import TOP_K, CaseKind, EvalCase
from crowdsift.pipeline.evaluation.grounding import EvalReport
from crowdsift.pipeline.evaluation.metrics import (
    abstained,
    advice_found,
    best_rank,
    lead_of,
    reciprocal_rank,
    share,
    terminal_rows,
    threads_of,
)
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.display import numbered_sources

__all__ = [
    "CaseReport",
    "EvalSummary",
    "EvalTargets",
    "EvalTotals",
    "Measures",
    "SideTotals",
    "TargetCheck",
    "measure",
    "measure_answer",
    "side_totals",
    "summarise",
    "terminal_rows",
]


class EvalTargets(BaseModel):
    """What ``crowdsift eval`` calls a pass."""

    key_advice_rate: float = Field(0.9, ge=0.0, le=1.0)
    abstention_accuracy: float = Field(1.0, ge=0.0, le=1.0)
    max_answer_lines: int = Field(50, ge=1)
    line_width: int = Field(100, ge=20, description="terminal columns the lines are counted at")


class Measures(BaseModel):
    """One answer against its case, as the reader gets it (crowdsift's or the baseline's)."""

    shown_found: int = Field(description="groups of key advice found in the shown answer")
    lead_found: int = Field(description="groups found in its lead (the direct answer)")
    shown_hit: bool | None = Field(description="every group shown; None for an off-topic case")
    lead_hit: bool | None = Field(description="every group in the lead; None for off-topic")
    advice_missing: list[list[str]] = Field(description="the groups not in the shown answer")
    answer_threads: list[str] = Field(description=f"the answer's first {TOP_K} threads")
    rank: int | None = Field(description="the answering thread's rank there; None when absent")
    reciprocal_rank: float | None = Field(description="1/rank, 0 when absent; None off-topic")
    hit_at_5: bool | None = Field(description="rank <= 5; None for an off-topic case")
    abstained: bool
    abstention_correct: bool = Field(description="off-topic abstained, answerable did not")
    lines: int = Field(description="terminal rows of the shown answer")
    seconds: float = Field(description="wall-clock time of the run")


def measure_answer(
    case: EvalCase,
    *,
    shown: str,
    lead: str,
    threads: Sequence[str],
    did_abstain: bool,
    seconds: float,
    width: int = 100,
) -> Measures:
    """An answer (its shown text, its lead, its threads in order) against ``case``'s labels."""
    in_shown = advice_found(shown, case.key_advice)
    in_lead = advice_found(lead, case.key_advice)
    rank = best_rank(threads, case.threads)
    answerable = case.answerable
    return Measures(
        shown_found=sum(in_shown),
        lead_found=sum(in_lead),
        shown_hit=all(in_shown) if answerable else None,
        lead_hit=all(in_lead) if answerable else None,
        advice_missing=[
            list(g) for g, hit in zip(case.key_advice, in_shown, strict=True) if not hit
        ],
        answer_threads=list(dict.fromkeys(threads))[:TOP_K],
        rank=rank,
        reciprocal_rank=reciprocal_rank(rank) if answerable else None,
        hit_at_5=(rank is not None and rank <= TOP_K) if answerable else None,
        abstained=did_abstain,
        abstention_correct=did_abstain == case.expect_abstain,
        lines=terminal_rows(shown, width),
        seconds=round(seconds, 3),
    )


class CaseReport(EvalReport):
    """The grounding checks of one case (``EvalReport``'s fields) and its answers' quality."""

    question: str
    kind: CaseKind
    expect_abstain: bool
    advice_groups: int
    expected_threads: list[str]
    crowdsift: Measures
    retrieval_rank: int | None = Field(
        description="diagnostic: the thread's rank in the run's retrieval order "
        "(reddit_response.ranked); None when retrieval did not find it"
    )
    grounding_passed: bool
    verdict: Literal["PASS", "FAIL"] = Field(
        description="PASS when grounding held, the advice was shown (if answerable), the "
        "abstention was right and the answer fits the line limit"
    )
    baseline: Measures | None = Field(None, description="the BM25 baseline (--baseline)")


def measure(
    case: EvalCase,
    result: ResearchResult,
    grounding: EvalReport,
    rendered: str,
    targets: EvalTargets,
    *,
    seconds: float = 0.0,
) -> CaseReport:
    """``result``'s answer to ``case`` (``rendered``: as the terminal shows it by default)."""
    synthesis = result.reddit_response.synthesis if result.reddit_response else None
    _, listed = numbered_sources(result.summary, synthesis)
    answer = measure_answer(
        case,
        shown=rendered,
        lead=lead_of(rendered, banner=result.sample_data),
        threads=threads_of(source.url for source in listed),
        did_abstain=abstained(result.summary),
        seconds=seconds,
        width=targets.line_width,
    )
    ranked = result.reddit_response.ranked if result.reddit_response is not None else []
    passed = (
        grounding.passed
        and answer.shown_hit is not False
        and answer.abstention_correct
        and answer.lines <= targets.max_answer_lines
    )
    return CaseReport(
        **(grounding.model_dump() | {"engine": grounding.engine or result.engine}),
        question=case.question,
        kind=case.kind,
        expect_abstain=case.expect_abstain,
        advice_groups=len(case.key_advice),
        expected_threads=list(case.threads),
        crowdsift=answer,
        retrieval_rank=best_rank([post.post_id for post in ranked], case.threads),
        grounding_passed=grounding.passed,
        verdict="PASS" if passed else "FAIL",
    )


class SideTotals(BaseModel):
    """One side's figures over the run (rates are None when no case counts towards them)."""

    answerable: int
    off_topic: int
    shown_hits: int
    shown_rate: float | None
    lead_hits: int
    lead_rate: float | None
    hits_at_5: int
    hit_at_5_rate: float | None
    mrr: float | None = Field(description="mean reciprocal rank over the answerable cases")
    declined_off_topic: int = Field(description="off-topic cases that abstained")
    declined_answerable: int = Field(description="answerable cases that abstained (wrongly)")
    abstention_correct: int
    abstention_accuracy: float | None
    max_lines: int
    mean_lines: float
    seconds: float = Field(description="total wall-clock time of the cases")


def side_totals(answers: Sequence[Measures]) -> SideTotals:
    """The totals of one side's answers."""
    answerable = [a for a in answers if a.shown_hit is not None]
    off_topic = [a for a in answers if a.shown_hit is None]
    shown = sum(1 for a in answerable if a.shown_hit)
    lead = sum(1 for a in answerable if a.lead_hit)
    hits = sum(1 for a in answerable if a.hit_at_5)
    correct = sum(1 for a in answers if a.abstention_correct)
    lines = [a.lines for a in answers]
    return SideTotals(
        answerable=len(answerable),
        off_topic=len(off_topic),
        shown_hits=shown,
        shown_rate=share(shown, len(answerable)),
        lead_hits=lead,
        lead_rate=share(lead, len(answerable)),
        hits_at_5=hits,
        hit_at_5_rate=share(hits, len(answerable)),
        mrr=fmean(a.reciprocal_rank or 0.0 for a in answerable) if answerable else None,
        declined_off_topic=sum(1 for a in off_topic if a.abstained),
        declined_answerable=sum(1 for a in answerable if a.abstained),
        abstention_correct=correct,
        abstention_accuracy=share(correct, len(answers)),
        max_lines=max(lines, default=0),
        mean_lines=fmean(lines) if lines else 0.0,
        seconds=round(sum(a.seconds for a in answers), 3),
    )


class EvalTotals(SideTotals):
    """crowdsift's figures, its grounding and the retrieval diagnostic."""

    cases: int
    answers_over_limit: int
    grounding_passed: int
    retrieval_hits_at_5: int = Field(description="answerable cases whose thread retrieval ranked")
    retrieval_mrr: float | None = Field(description="MRR of the retrieval order (diagnostic)")


class TargetCheck(BaseModel):
    name: str
    value: float | None
    target: str
    passed: bool


class EvalSummary(BaseModel):
    """What ``crowdsift eval`` prints (and ``--json`` gives): every case, totals, targets."""

    engine: str
    cases: list[CaseReport]
    totals: EvalTotals
    baseline: SideTotals | None = Field(None, description="the BM25 baseline's totals")
    baseline_index_seconds: float | None = Field(
        None, description="time to build the baseline's index (once, not counted per case)"
    )
    targets: list[TargetCheck]
    passed: bool


def summarise(
    reports: Sequence[CaseReport],
    targets: EvalTargets,
    *,
    baseline_index_seconds: float | None = None,
) -> EvalSummary:
    """Totals over ``reports`` (and their baseline answers) and whether each target holds."""
    side = side_totals([r.crowdsift for r in reports])
    answerable = [r for r in reports if not r.expect_abstain]
    retrieval = [reciprocal_rank(r.retrieval_rank) for r in answerable]
    totals = EvalTotals(
        **side.model_dump(),
        cases=len(reports),
        answers_over_limit=sum(1 for r in reports if r.crowdsift.lines > targets.max_answer_lines),
        grounding_passed=sum(1 for r in reports if r.grounding_passed),
        retrieval_hits_at_5=sum(
            1 for r in answerable if r.retrieval_rank is not None and r.retrieval_rank <= TOP_K
        ),
        retrieval_mrr=fmean(retrieval) if retrieval else None,
    )
    baselines = [r.baseline for r in reports if r.baseline is not None]
    checks = [
        _at_least("key advice", totals.shown_rate, targets.key_advice_rate),
        _at_least("abstention", totals.abstention_accuracy, targets.abstention_accuracy),
        TargetCheck(
            name="answer length",
            value=totals.max_lines,
            target=f"<= {targets.max_answer_lines} lines",
            passed=totals.answers_over_limit == 0,
        ),
        TargetCheck(
            name="grounding",
            value=share(totals.grounding_passed, totals.cases),
            target="every case",
            passed=totals.grounding_passed == totals.cases,
        ),
    ]
    engines = sorted({r.engine for r in reports if r.engine}) or ["-"]
    return EvalSummary(
        engine=",".join(engines),
        cases=list(reports),
        totals=totals,
        baseline=side_totals(baselines) if baselines else None,
        baseline_index_seconds=baseline_index_seconds if baselines else None,
        targets=checks,
        passed=all(check.passed for check in checks),
    )


def _at_least(name: str, value: float | None, target: float) -> TargetCheck:
    """A rate target; with nothing to count it holds (and says n/a)."""
    return TargetCheck(
        name=name,
        value=value,
        target=f">= {target:.0%}",
        passed=value is None or value >= target - 1e-9,
    )
