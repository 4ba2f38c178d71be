"""``crowdsift eval`` as a person reads it: one row per case (the baseline's answer beside
crowdsift's when it ran), one totals line per side, then the targets and a closing verdict."""

from __future__ import annotations

from crowdsift.pipeline.evaluation.report import (
    CaseReport,
    EvalSummary,
    Measures,
    SideTotals,
    TargetCheck,
)

_SIDE = f"{'shown':>5} {'lead':>4} {'rank':>4} {'abstain':>7} {'lines':>5} {'secs':>6}"
_HEADER = f"{'case':<26} {'kind':<15} {_SIDE} {'ret':>4} {'grounding':>9}"
_SIDES = f"{'':<43}{'crowdsift':<{len(_HEADER) - 43}} │ baseline (BM25)"
_TOTALS_HEAD = (
    f"  {'':<10} {'shown':<11} {'lead':<11} {'hit@5':<11} {'MRR':>5}  {'abstention':<12} "
    f"{'max lines':>9} {'time':>9}"
)


def summary_lines(summary: EvalSummary) -> list[str]:
    """The per-case table, the totals of each side, the targets and one closing verdict."""
    with_baseline = summary.baseline is not None
    header = _HEADER + (f" │ {_SIDE}" if with_baseline else "")
    lines = [_SIDES, header] if with_baseline else [header]
    lines.append("-" * len(header))
    lines += [_row(report, with_baseline=with_baseline) for report in summary.cases]
    totals = summary.totals
    lines += [
        "",
        f"Totals (engine: {summary.engine}; {totals.cases} cases: {totals.answerable} "
        f"answerable, {totals.off_topic} off-topic):",
        _TOTALS_HEAD,
        _totals_line("crowdsift", totals),
    ]
    if summary.baseline is not None:
        built = summary.baseline_index_seconds
        lines.append(_totals_line("baseline", summary.baseline))
        if built is not None:
            lines.append(f"  (baseline: SQLite FTS5 BM25; its index was built in {built:.1f} s)")
    retrieval = "n/a" if totals.retrieval_mrr is None else f"{totals.retrieval_mrr:.2f}"
    lines += [
        f"  retrieval (diagnostic): the thread is in the top 5 of the run's ranking for "
        f"{totals.retrieval_hits_at_5}/{totals.answerable}, MRR {retrieval}",
        "",
        "Targets:",
        *(_target_line(check, summary) for check in summary.targets),
    ]
    failed = [check.name for check in summary.targets if not check.passed]
    lines += [
        "",
        f"FAIL: {', '.join(failed)} missed the target" if failed else "PASS: every target met",
    ]
    return lines


def _row(report: CaseReport, *, with_baseline: bool) -> str:
    retrieval = _rank(report.retrieval_rank, report.expect_abstain)
    grounding = "ok" if report.grounding_passed else "FAIL"
    row = (
        f"{report.id[:26]:<26} {report.kind:<15} {_side(report.crowdsift, report)} "
        f"{retrieval:>4} {grounding:>9}"
    )
    if with_baseline:
        row += " │ " + (_side(report.baseline, report) if report.baseline else "")
    return row


def _side(measures: Measures, report: CaseReport) -> str:
    said = "yes" if measures.abstained else "no"
    return (
        f"{_mark(measures.shown_hit):>5} {_mark(measures.lead_hit):>4} "
        f"{_rank(measures.rank, report.expect_abstain):>4} "
        f"{said + ' ' + _mark(measures.abstention_correct):>7} {measures.lines:>5} "
        f"{measures.seconds:>6.1f}"
    )


def _totals_line(name: str, side: SideTotals) -> str:
    mrr = "n/a" if side.mrr is None else f"{side.mrr:.2f}"
    abstention = f"{side.declined_off_topic}/{side.off_topic} declined"
    if side.declined_answerable:
        abstention += f", {side.declined_answerable} answerable declined"
    return (
        f"  {name:<10} {_count(side.shown_hits, side.answerable):<11} "
        f"{_count(side.lead_hits, side.answerable):<11} "
        f"{_count(side.hits_at_5, side.answerable):<11} {mrr:>5}  {abstention:<12} "
        f"{side.max_lines:>9} {side.seconds:>7.1f} s"
    )


def _target_line(check: TargetCheck, summary: EvalSummary) -> str:
    totals = summary.totals
    verdict = "PASS" if check.passed else "FAIL"
    if check.name == "key advice":
        value = _rate(totals.shown_hits, totals.answerable, check.value) + " shown"
    elif check.name == "abstention":
        value = _rate(totals.abstention_correct, totals.cases, check.value) + " right"
    elif check.name == "answer length":
        value = (
            f"max {totals.max_lines}, mean {totals.mean_lines:.0f}, "
            f"{totals.answers_over_limit} over"
        )
    else:
        value = _rate(totals.grounding_passed, totals.cases, check.value)
    return f"  {check.name:<14} {value:<30} target {check.target:<14} {verdict}"


def _count(hits: int, total: int) -> str:
    return f"{hits}/{total} {hits / total:.0%}" if total else "n/a"


def _rate(hits: int, total: int, value: float | None) -> str:
    return "n/a" if value is None else f"{hits}/{total} = {value:.0%}"


def _rank(rank: int | None, off_topic: bool) -> str:
    if off_topic:
        return "-"
    return "none" if rank is None else str(rank)


def _mark(hit: bool | None) -> str:
    return "-" if hit is None else "✓" if hit else "✗"
