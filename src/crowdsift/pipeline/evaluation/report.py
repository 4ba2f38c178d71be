"""One case's answer measured against its labels, and the totals checked against targets (pure).

Targets (issue 18) for the local engine, applied to whichever engine ran: the key advice in at
least 90 % of answerable cases, every abstention right (off-topic cases abstain, answerable ones
do not), every answer at most 50 terminal rows at 100 columns, and every grounding check held.
nDCG@5 is reported without a target.
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
    answer_text,
    ndcg_at_k,
    share,
    terminal_rows,
)
from crowdsift.pipeline.result import ResearchResult


class EvalTargets(BaseModel):
    """What ``crowdsift eval`` calls a pass."""

    key_advice_rate: float = Field(0.9, ge=0.0, le=1.0)
    abstention_accuracy: float = Field(1.0, ge=0.0, le=1.0)
    max_answer_lines: int = Field(50, ge=1)
    line_width: int = Field(100, ge=20, description="terminal columns the lines are counted at")


class CaseReport(EvalReport):
    """The grounding checks of one case (``EvalReport``'s fields) and its answer's quality."""

    question: str
    kind: CaseKind | None
    expect_abstain: bool
    abstained: bool
    abstention_correct: bool | None = Field(description="None for an unlabelled case")
    advice_groups: int
    advice_found: int
    advice_hit: bool | None = Field(description="every group found; None when not answerable")
    advice_missing: list[list[str]] = Field(description="the groups not found")
    expected_threads: list[str]
    top_threads: list[str] = Field(description=f"the first {TOP_K} ranked post ids")
    ndcg_at_5: float | None = Field(description="None when no threads are expected")
    answer_lines: int = Field(description="terminal rows of the rendered answer")
    grounding_passed: bool
    verdict: Literal["PASS", "FAIL"] = Field(
        description="PASS when grounding held, the advice was found (if answerable), the "
        "abstention was right (if labelled) and the answer fits the line limit"
    )


def measure(
    case: EvalCase,
    result: ResearchResult,
    grounding: EvalReport,
    rendered: str,
    targets: EvalTargets,
) -> CaseReport:
    """``result``'s answer to ``case`` against the case's labels."""
    summary = result.summary
    found = advice_found(answer_text(summary), case.key_advice)
    ranked = result.reddit_response.ranked if result.reddit_response is not None else []
    did_abstain = abstained(summary)
    advice_hit = all(found) if case.answerable else None
    correct = (did_abstain == case.expect_abstain) if case.labelled else None
    lines = terminal_rows(rendered, targets.line_width)
    passed = (
        grounding.passed
        and advice_hit is not False
        and correct is not False
        and lines <= targets.max_answer_lines
    )
    return CaseReport(
        **(grounding.model_dump() | {"engine": grounding.engine or result.engine}),
        question=case.question,
        kind=case.kind,
        expect_abstain=case.expect_abstain,
        abstained=did_abstain,
        abstention_correct=correct,
        advice_groups=len(case.key_advice),
        advice_found=sum(found),
        advice_hit=advice_hit,
        advice_missing=[list(g) for g, hit in zip(case.key_advice, found, strict=True) if not hit],
        expected_threads=list(case.top_threads),
        top_threads=[post.post_id for post in ranked[:TOP_K]],
        ndcg_at_5=ndcg_at_k([(p.post_id, p.final_score) for p in ranked], case.top_threads, TOP_K),
        answer_lines=lines,
        grounding_passed=grounding.passed,
        verdict="PASS" if passed else "FAIL",
    )


class EvalTotals(BaseModel):
    """The run in numbers (rates are None when no case counts towards them)."""

    cases: int
    labelled: int
    answerable: int
    off_topic: int
    key_advice_hits: int
    key_advice_rate: float | None
    ndcg_cases: int
    mean_ndcg_at_5: float | None
    abstention_correct: int
    abstention_accuracy: float | None
    max_answer_lines: int
    mean_answer_lines: float
    answers_over_limit: int
    grounding_passed: int


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
    targets: list[TargetCheck]
    passed: bool


def summarise(reports: Sequence[CaseReport], targets: EvalTargets) -> EvalSummary:
    """Totals over ``reports`` and whether each target holds."""
    answerable = [r for r in reports if r.advice_hit is not None]
    graded = [r for r in reports if r.abstention_correct is not None]
    ranked = [r.ndcg_at_5 for r in reports if r.ndcg_at_5 is not None]
    lines = [r.answer_lines for r in reports]
    hits = sum(1 for r in answerable if r.advice_hit)
    correct = sum(1 for r in graded if r.abstention_correct)
    totals = EvalTotals(
        cases=len(reports),
        labelled=len(graded),
        answerable=len(answerable),
        off_topic=sum(1 for r in reports if r.expect_abstain),
        key_advice_hits=hits,
        key_advice_rate=share(hits, len(answerable)),
        ndcg_cases=len(ranked),
        mean_ndcg_at_5=fmean(ranked) if ranked else None,
        abstention_correct=correct,
        abstention_accuracy=share(correct, len(graded)),
        max_answer_lines=max(lines, default=0),
        mean_answer_lines=fmean(lines) if lines else 0.0,
        answers_over_limit=sum(1 for n in lines if n > targets.max_answer_lines),
        grounding_passed=sum(1 for r in reports if r.grounding_passed),
    )
    checks = [
        _at_least("key advice", totals.key_advice_rate, targets.key_advice_rate),
        _at_least("abstention", totals.abstention_accuracy, targets.abstention_accuracy),
        TargetCheck(
            name="answer length",
            value=totals.max_answer_lines,
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
