"""Running the evaluation: every case through the one research run, measured and summarised.

``render`` is how a person sees an answer (``crowdsift.cli.render.render_research`` for the
CLI); it is injected because the terminal renderer lives above this layer. ``--save`` stores
each case's FetchResult and SummarizeResult as previews for review, with the answer as a person
reads it (``[n]`` citations into one numbered source list).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from crowdsift.core.config import Settings
from crowdsift.pipeline.evaluation.cases import EvalCase, load_cases
from crowdsift.pipeline.evaluation.grounding import check
from crowdsift.pipeline.evaluation.report import (
    CaseReport,
    EvalSummary,
    EvalTargets,
    measure,
    summarise,
)
from crowdsift.pipeline.result import AskRun, ResearchResult
from crowdsift.pipeline.synthesis.config import SummarizerConfig
from crowdsift.pipeline.synthesis.display import numbered_sources
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.pipeline.wiring import ResearchOptions

Render = Callable[[ResearchResult], str]


async def run_cases(
    cases: Sequence[EvalCase],
    ask_case: Callable[[EvalCase], Awaitable[AskRun]],
    config: SummarizerConfig,
    *,
    render: Render,
    targets: EvalTargets | None = None,
    previews: Path | None = None,
) -> list[CaseReport]:
    """Run and measure every case; with ``previews``, save each case's evidence and answer."""
    targets = targets or EvalTargets()
    reports = []
    for case in cases:
        run = await ask_case(case)
        summary = run.result.summary or _no_answer()
        grounding = check(case, run.evidence, summary, config)
        reports.append(measure(case, run.result, grounding, render(run.result), targets))
        if previews is not None:
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
    return reports


def preview_text(summary: SummarizeResult) -> str:
    """The answer as a person reads it: ``[n]`` citations and one numbered source list."""
    numbers, listed = numbered_sources(summary, None)
    lines = [numbers.text(summary.summary)]
    for title, items in (("Highlights", summary.highlights), ("Cautions", summary.cautions)):
        if items:
            lines += ["", f"{title}:", *(f"- {numbers.text(item)}" for item in items)]
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
) -> EvalSummary:
    """``crowdsift eval``: every case through the one research run, measured against its
    labels and summarised against ``targets``; ``save`` is the previews directory to (re)write."""
    from crowdsift.pipeline.research import run_research
    from crowdsift.pipeline.wiring import research_deps

    cases = load_cases(cases_path)
    targets = targets or EvalTargets()

    async def _run() -> list[CaseReport]:
        async with research_deps(settings, options) as deps:

            async def ask_case(case: EvalCase) -> AskRun:
                return await run_research(case.question, deps, subreddits=case.subreddits)

            return await run_cases(
                cases,
                ask_case,
                SummarizerConfig.from_settings(settings),
                render=render,
                targets=targets,
                previews=save,
            )

    return summarise(asyncio.run(_run()), targets)
