"""Plain-text rendering of an answer for the terminal (pure): one answer, numbered citations.

The answer is shown once: the summary, highlights and cautions, then the staff-engineer
sections that have content, then one numbered source list. Stored ``[post:ID]`` /
``[comment:ID]`` markers become ``[n]`` from that list (``crowdsift.pipeline.synthesis.display``),
so no internal id reaches a person. The footer says which engine wrote the answer and, for the
local engine, that it is extractive (sentences quoted from the evidence), not an LLM.
``render_research`` adds the Reddit run's counts and one block per expert.
"""

from __future__ import annotations

import textwrap

from crowdsift.cli.experts_render import render_expert_responses
from crowdsift.cli.sidecar_render import render_reddit_response, render_sections
from crowdsift.core.citations import SourceNumbers, number_citations
from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.display import numbered_sources

__all__ = ["number_citations", "render_answer", "render_research", "render_source_fetches"]


def render_research(result: ResearchResult, *, width: int = 88) -> str:
    """Everything a research run found: the Reddit answer, the sidecar's read, the experts."""
    blocks: list[str] = []
    if result.summary is not None:
        blocks.append(render_answer(result, width=width))
    if result.reddit_response is not None:
        shown = result.summary is not None  # the answer above holds its sections
        blocks.append(
            render_reddit_response(result.reddit_response, width=width, sections=not shown)
        )
    if result.expert_responses:
        blocks.append(render_expert_responses(result.expert_responses))
    if result.source_fetches:
        blocks.append(render_source_fetches(result))
    if result.summary is None:
        blocks.append(_footer(result))
    return "\n\n".join(blocks)


def render_source_fetches(result: ResearchResult) -> str:
    """One line per YouTube / Amazon search: what the gate kept, or why it did not run."""
    lines = ["Other sources:"]
    for fetched in result.source_fetches:
        if fetched.skipped:
            outcome = f"skipped — {fetched.skipped}"
        elif fetched.errors:
            outcome = f"failed — {fetched.errors[0]}"
        else:
            refetch = ", refetched once" if fetched.refetched else ""
            opened = ", gate failed open" if fetched.failed_open else ""
            outcome = (
                f"{len(fetched.items)} relevant of {fetched.fetched} "
                f"(yield {fetched.yield_ratio:.0%}{refetch}{opened})"
            )
        lines.append(f"  {fetched.kind}: {outcome}")
    return "\n".join(lines)


def render_answer(result: ResearchResult, *, width: int = 88) -> str:
    summary = result.summary
    if summary is None:
        return _footer(result)
    synthesis = result.reddit_response.synthesis if result.reddit_response else None
    numbers, listed = numbered_sources(summary, synthesis)
    lines: list[str] = []
    body = numbers.text(summary.summary) or "(no summary)"
    lines += textwrap.wrap(body, width) or [body]
    for title, items in (("Highlights", summary.highlights), ("Cautions", summary.cautions)):
        if items:
            lines += ["", f"{title}:"]
            for item in items:
                lines += _bullet(numbers, item, width)
    if synthesis is not None:
        lines += render_sections(synthesis, numbers, width)
    if listed:
        lines += ["", "Sources:"]
        for source in listed:
            lines.append(f"  [{source.number}] {source.label}")
            lines.append(f"      {source.url}")
    lines += ["", _footer(result)]
    return "\n".join(lines)


def _bullet(numbers: SourceNumbers, text: str, width: int) -> list[str]:
    return textwrap.wrap(
        numbers.text(text), width, initial_indent="  • ", subsequent_indent="    "
    ) or ["  •"]


def _footer(result: ResearchResult) -> str:
    engine = (
        "local (extractive: sentences quoted from the evidence, not an LLM)"
        if result.engine == "local"
        else f"{result.engine} ({result.usage.calls} LLM calls, "
        f"{result.usage.prompt_tokens}+{result.usage.completion_tokens} tokens, "
        f"{_cost(result.usage)})"
    )
    fetch = result.fetch
    status = "" if result.status == "ok" else f" · status {result.status}"
    reason = f" ({result.summary.reason})" if result.summary and result.summary.reason else ""
    found = (
        f"{fetch.posts_relevant} relevant posts of {fetch.posts_accepted} from {fetch.source}"
        if fetch is not None
        else f"{len(result.expert_responses)} experts, Reddit not searched"
    )
    seconds = result.timings_ms.get("total", 0) / 1000
    line = f"engine: {engine} · {found} · {seconds:.1f} s{status}{reason}"
    usage = result.usage
    if usage.budget_exhausted:
        line += (
            f"\nbudget: ${usage.budget_usd:g} reached; {usage.calls_skipped} LLM calls skipped "
            "(raise --budget-usd for a fuller answer)"
        )
    return line


def _cost(usage: Usage) -> str:
    """``$0.0123``, noting models the price table does not list (their calls are not counted)."""
    text = f"${usage.cost_usd:.4f}"
    if usage.unpriced_models:
        text += f"; no price for {', '.join(usage.unpriced_models)} (see `crowdsift prices`)"
    return text
