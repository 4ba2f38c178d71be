"""Running the evaluation: every case through the one research run, measured and summarised.

``render`` is how a person sees an answer (``crowdsift.cli.render.render_research`` for the
CLI, the default short rendering); it is injected because the terminal renderer lives above
this layer. So are the ``clock`` each case is timed with and the ``progress`` line sink. With a
``baseline`` (``baseline.Bm25Baseline.answer``), each question is also answered by BM25 over the
same archive and measured the same way. ``--save`` stores each case's FetchResult and
SummarizeResult as previews for review, with the answer as a person reads it (``[n]``
citations into one numbered source list).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from crowdsift.core.config import Settings
from crowdsift.core.errors import PlanError
from crowdsift.pipeline.evaluation.baseline import BaselineAnswer, Bm25Baseline
from crowdsift.pipeline.evaluation.cases import EvalCase, load_cases
from crowdsift.pipeline.evaluation.grounding import check
from crowdsift.pipeline.evaluation.report import (
    CaseReport,
    EvalSummary,
    EvalTargets,
    measure,
    measure_answer,
    summarise,
)
from crowdsift.pipeline.result import AskRun, ResearchResult
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.display import numbered_sources
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.pipeline.wiring import ResearchOptions

Render = Callable[[ResearchResult], str]
Clock = Callable[[], float]
Baseline = Callable[[str], BaselineAnswer]
Progress = Callable[[str], None]


async def run_cases(
    cases: Sequence[EvalCase],
    ask_case: Callable[[EvalCase], Awaitable[AskRun]],
    config: SynthesisConfig,
    *,
    render: Render,
    targets: EvalTargets | None = None,
    previews: Path | None = None,
    clock: Clock = time.perf_counter,
    baseline: Baseline | None = None,
    progress: Progress | None = None,
) -> list[CaseReport]:
    """Run, time and measure every case (and the baseline's answer to it); with ``previews``,
    save each case's evidence and answer; one ``progress`` line per case."""
    targets = targets or EvalTargets()
    reports = []
    for number, case in enumerate(cases, start=1):
        started = clock()
        run = await ask_case(case)
        seconds = clock() - started
        summary = run.result.summary or _no_answer()
        grounding = check(case, run.evidence, summary, config)
        report = measure(case, run.result, grounding, render(run.result), targets, seconds=seconds)
        note = ""
        if baseline is not None:
            report = _with_baseline(report, case, baseline, clock, targets)
            note = f" (baseline {report.baseline.seconds:.2f} s)" if report.baseline else ""
        reports.append(report)
        if progress is not None:
            progress(f"[{number}/{len(cases)}] {case.id} {seconds:.1f} s{note}")
        if previews is not None:
            _save_preview(previews, case, run, summary)
    return reports


def _with_baseline(
    report: CaseReport, case: EvalCase, baseline: Baseline, clock: Clock, targets: EvalTargets
) -> CaseReport:
    """``report`` with the baseline's answer to the same question, measured alike."""
    started = clock()
    answer = baseline(case.question)
    seconds = clock() - started
    measured = measure_answer(
        case,
        shown=answer.text,
        lead=answer.lead,
        threads=answer.threads,
        did_abstain=False,
        seconds=seconds,
        width=targets.line_width,
    )
    return report.model_copy(update={"baseline": measured})


def _save_preview(previews: Path, case: EvalCase, run: AskRun, summary: SummarizeResult) -> None:
    previews.mkdir(parents=True, exist_ok=True)
    payload = {
        "question": case.question,
        "fetch_result": run.evidence.model_dump(mode="json"),
        "summarize_result": summary.model_dump(mode="json"),
        "answer_text": preview_text(summary),
    }
    (previews / f"{case.id}.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def preview_text(summary: SummarizeResult) -> str:
    """The answer as a person reads it: ``[n]`` citations and one numbered source list."""
    numbers, listed = numbered_sources(summary, None)
    lines = [summary.summary.numbered(numbers)]
    for title, items in (("Highlights", summary.highlights), ("Cautions", summary.cautions)):
        if items:
            lines += ["", f"{title}:", *(f"- {item.numbered(numbers)}" for item in items)]
    if listed:
        lines += ["", "Sources:", *(f"[{s.number}] {s.label} {s.url}" for s in listed)]
    return "\n".join(lines)


def _no_answer() -> SummarizeResult:
    """What a run without a Reddit summary (Reddit left out or failed) is checked as."""
    return SummarizeResult(
        status="error", summary="", prompt_version="-", reason="the run produced no summary"
    )


def run_eval(
    settings: Settings,
    cases_path: Path,
    options: ResearchOptions,
    *,
    render: Render,
    targets: EvalTargets | None = None,
    save: Path | None = None,
    baseline: bool = False,
    clock: Clock = time.perf_counter,
    progress: Progress | None = None,
) -> EvalSummary:
    """``crowdsift eval``: every case through the one research run, measured against its
    labels and summarised against ``targets``; ``save`` is the previews directory to (re)write;
    ``baseline`` also answers every case with BM25 over the same archive (archive source only).
    """
    from crowdsift.pipeline.research import run_research
    from crowdsift.pipeline.wiring import research_deps

    cases = load_cases(cases_path)
    targets = targets or EvalTargets()
    index: Bm25Baseline | None = None
    index_seconds: float | None = None
    if baseline:
        started = clock()
        index = Bm25Baseline.from_archive(_baseline_archive(settings, options))
        index_seconds = round(clock() - started, 3)

    async def _run() -> list[CaseReport]:
        async with research_deps(settings, options) as deps:

            async def ask_case(case: EvalCase) -> AskRun:
                return await run_research(case.question, deps, subreddits=case.subreddits)

            return await run_cases(
                cases,
                ask_case,
                SynthesisConfig.from_settings(settings),
                render=render,
                targets=targets,
                previews=save,
                clock=clock,
                baseline=index.answer if index is not None else None,
                progress=progress,
            )

    try:
        reports = asyncio.run(_run())
    finally:
        if index is not None:
            index.close()
    return summarise(reports, targets, baseline_index_seconds=index_seconds)


def _baseline_archive(settings: Settings, options: ResearchOptions) -> Path:
    """The archive the run searches, which the baseline indexes; a usage error for a live
    source (the baseline reads every thread, which only an archive can give)."""
    if options.source != "archive":
        raise PlanError(
            f"--baseline indexes an archive, not --source {options.source or 'auto'}: "
            "use --source archive (the default) or drop --baseline"
        )
    from crowdsift.sources.archive.paths import resolve_archive_path

    path, _ = resolve_archive_path(settings, options.archive)
    return path
