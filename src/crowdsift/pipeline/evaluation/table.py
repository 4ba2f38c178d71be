"""``crowdsift eval`` as a person reads it: one row per case, then the totals against targets."""

from __future__ import annotations

from crowdsift.pipeline.evaluation.report import CaseReport, EvalSummary, TargetCheck

_HEADER = (
    f"{'case':<26} {'kind':<15} {'advice':>6} {'nDCG@5':>6} {'abstain':>8} "
    f"{'lines':>5} {'grounding':>9}  verdict"
)


def summary_lines(summary: EvalSummary) -> list[str]:
    """The per-case table, the totals with their targets, and one closing verdict."""
    lines = [_HEADER, "-" * len(_HEADER)]
    lines += [_row(report) for report in summary.cases]
    totals = summary.totals
    lines += ["", f"Totals (engine: {summary.engine}, {totals.cases} cases):"]
    for check in summary.targets:
        lines.append(_target_line(check, summary))
    ndcg = "n/a" if totals.mean_ndcg_at_5 is None else f"{totals.mean_ndcg_at_5:.2f}"
    lines.append(f"  {'nDCG@5 (mean)':<14} {ndcg:<30} over {totals.ndcg_cases} cases, no target")
    failed = [check.name for check in summary.targets if not check.passed]
    lines += [
        "",
        f"FAIL: {', '.join(failed)} missed the target" if failed else "PASS: every target met",
    ]
    return lines


def _row(report: CaseReport) -> str:
    advice = (
        f"{report.advice_found}/{report.advice_groups}" if report.advice_hit is not None else "-"
    )
    ndcg = "-" if report.ndcg_at_5 is None else f"{report.ndcg_at_5:.2f}"
    said = "yes" if report.abstained else "no"
    abstain = (
        said if report.abstention_correct is None else f"{said} {_mark(report.abstention_correct)}"
    )
    grounding = "ok" if report.grounding_passed else "FAIL"
    return (
        f"{report.id[:26]:<26} {report.kind or 'unlabelled':<15} {advice:>6} {ndcg:>6} "
        f"{abstain:>8} {report.answer_lines:>5} {grounding:>9}  {report.verdict}"
    )


def _target_line(check: TargetCheck, summary: EvalSummary) -> str:
    totals = summary.totals
    verdict = "PASS" if check.passed else "FAIL"
    if check.name == "key advice":
        value = _rate(totals.key_advice_hits, totals.answerable, check.value)
    elif check.name == "abstention":
        value = _rate(totals.abstention_correct, totals.labelled, check.value)
    elif check.name == "answer length":
        value = (
            f"max {totals.max_answer_lines}, mean {totals.mean_answer_lines:.0f}, "
            f"{totals.answers_over_limit} over"
        )
    else:
        value = _rate(totals.grounding_passed, totals.cases, check.value)
    return f"  {check.name:<14} {value:<30} target {check.target:<14} {verdict}"


def _rate(hits: int, total: int, value: float | None) -> str:
    return "n/a" if value is None else f"{hits}/{total} = {value:.0%}"


def _mark(correct: bool) -> str:
    return "ok" if correct else "x"
