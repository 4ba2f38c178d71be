"""The offline evaluation set (seed 004 "Evaluation"): re-run saved questions, check grounding.

Each case is a question over the bundled demo archive. ``crowdsift eval`` runs every case and
reports, per case: whether every source is a post of the evidence (id and URL), whether the
budget and caps held, the status, and how many highlights are supported by the text of a post
they cite. ``--save`` stores the FetchResult and SummarizeResult as previews for review, with
the answer as a person reads it (``[n]`` citations into one numbered source list).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from crowdsift.core.citations import citations_in, remove_markers
from crowdsift.core.config import Settings
from crowdsift.core.models import FetchResult, Post
from crowdsift.core.text import tokenize
from crowdsift.pipeline.result import AskRun
from crowdsift.pipeline.synthesis.config import SummarizerConfig
from crowdsift.pipeline.synthesis.display import numbered_sources
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.pipeline.wiring import ResearchOptions

SUPPORT_SHARE = 0.6


class EvalCase(BaseModel):
    id: str = Field(pattern=r"^[a-z0-9_-]+$")
    question: str
    subreddits: list[str] = Field(default_factory=list)


class EvalReport(BaseModel):
    """The checks of one case."""

    id: str
    status: str
    sources: int
    sources_valid: bool
    budget_respected: bool
    highlights: int
    highlights_supported: int
    engine: str

    @property
    def passed(self) -> bool:
        return self.sources_valid and self.budget_respected and self.status != "error"


def load_cases(path: Path) -> list[EvalCase]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [EvalCase.model_validate(item) for item in data]


def check(
    case: EvalCase,
    evidence: FetchResult,
    summary: SummarizeResult,
    config: SummarizerConfig,
) -> EvalReport:
    """The grounding checks of one answer against the evidence it was given (pure)."""
    posts = {post.id: post for post in evidence.posts}
    sources_valid = all(
        source.post_id in posts and str(source.url) == posts[source.post_id].url
        for source in summary.sources
    )
    owners = _owners(evidence)
    cited_everywhere = [
        citation.key
        for text in [summary.summary, *summary.highlights, *summary.cautions]
        for citation in citations_in(text)
    ]
    sources_valid = sources_valid and all(key in owners for key in cited_everywhere)
    budget = (
        len(summary.summary) <= config.summary_char_budget
        and len(summary.highlights) <= config.max_highlights
        and len(summary.cautions) <= config.max_cautions
    )
    supported = sum(1 for item in summary.highlights if _supported(item, owners))
    return EvalReport(
        id=case.id,
        status=summary.status,
        sources=len(summary.sources),
        sources_valid=sources_valid,
        budget_respected=budget,
        highlights=len(summary.highlights),
        highlights_supported=supported,
        engine=summary.engine,
    )


def _owners(evidence: FetchResult) -> dict[str, Post]:
    """Every citable key of the evidence (``post:id``, ``comment:id``) → its post."""
    owners: dict[str, Post] = {}
    for post in evidence.posts:
        owners[f"post:{post.id.lower()}"] = post
        owners.update({f"comment:{c.comment_id.lower()}": post for c in post.comments})
    return owners


def _supported(highlight: str, owners: dict[str, Post]) -> bool:
    """A highlight is supported when a post it cites (or the post of a comment it cites)
    contains most of its content words."""
    words = {w for w in tokenize(remove_markers(highlight)) if len(w) > 3}
    for citation in citations_in(highlight):
        post = owners.get(citation.key)
        if post is None or not words:
            continue
        text = " ".join([post.title, post.selftext, *(c.body for c in post.comments)])
        if len(words & set(tokenize(text))) / len(words) >= SUPPORT_SHARE:
            return True
    return False


async def run_cases(
    cases: Sequence[EvalCase],
    ask_case: Callable[[EvalCase], Awaitable[AskRun]],
    config: SummarizerConfig,
    *,
    previews: Path | None = None,
) -> list[EvalReport]:
    """Run every case; with ``previews``, save each case's evidence and answer there."""
    reports = []
    for case in cases:
        run = await ask_case(case)
        summary = run.result.summary or _no_answer()
        reports.append(check(case, run.evidence, summary, config))
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
    save: Path | None = None,
) -> list[EvalReport]:
    """``crowdsift eval``: every case through the one research run; ``save`` is the previews
    directory to (re)write."""
    from crowdsift.pipeline.research import run_research
    from crowdsift.pipeline.wiring import research_deps

    cases = load_cases(cases_path)

    async def _run() -> list[EvalReport]:
        async with research_deps(settings, options) as deps:

            async def ask_case(case: EvalCase) -> AskRun:
                return await run_research(case.question, deps, subreddits=case.subreddits)

            return await run_cases(
                cases, ask_case, SummarizerConfig.from_settings(settings), previews=save
            )

    return asyncio.run(_run())
