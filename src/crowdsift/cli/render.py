"""Plain-text rendering of an answer for the terminal (pure): one answer, short by default.

The answer is shown once, in this order: the direct answer (the summary's first sentences),
highlights and cautions, the staff-engineer sections that have content, then one numbered
source list (``crowdsift.pipeline.synthesis.display``: each source once, a comment under its
thread). Stored ``[post:ID]`` / ``[comment:ID]`` markers become ``[n]``, so no internal id
reaches a person. By default a Reddit answer fits ``SHORT_LINES`` lines of ``WIDTH`` columns
(URLs stay whole on lines of their own): items are dropped, lowest priority first, until it
does; ``full=True`` (``ask --full``) prints everything. The footer names the engine (the local
one is extractive, not an LLM), the source, the overall status with its reason, and the time.
"""

from __future__ import annotations

from crowdsift.cli.experts_render import render_expert_responses
from crowdsift.cli.layout import WIDTH, bullet, paragraph, source_lines
from crowdsift.cli.reddit_render import Sections, render_sections, run_lines
from crowdsift.core.citations import number_citations
from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.display import source_list
from crowdsift.pipeline.synthesis.models import RedditSynthesis

__all__ = [
    "SHORT_LINES",
    "WIDTH",
    "number_citations",
    "render_answer",
    "render_research",
    "render_source_fetches",
    "status_reason",
]

SHORT_LINES = 50
"""The most lines a short Reddit answer takes, footer included."""
SHORT_CAPS = {
    "sentences": 4,
    "highlights": 4,
    "cautions": 3,
    "gems": 3,
    "minority": 2,
    "pivots": 2,
    "rows": 4,
}
"""What a short answer shows at most of each part, before fitting it to ``SHORT_LINES``."""
_DROP_ORDER = ("minority", "pivots", "gems", "rows", "cautions", "highlights", "sentences")
"""Lowest priority first: a part loses its items before the next one does. A table row is one
line and, for "which should I buy", the count of what the replies recommend: it outlasts gems."""
_FLOORS = (
    {"rows": 3, "minority": 1, "pivots": 1, "gems": 1, "cautions": 2, "highlights": 2},
    {"rows": 1, "minority": 0, "pivots": 0, "gems": 0, "cautions": 1, "highlights": 1},
    {"cautions": 0, "sentences": 2},
    {"highlights": 0, "rows": 0, "sentences": 1},
)
"""How far each part shrinks in each round; later rounds start when earlier ones did not fit.
The direct answer's sentences give way only after every side section is down to one item."""
SECTION_CITES = 2
"""Citations a sentence or claim of a short answer keeps (the first ones; ``--full`` has all)."""
ITEM_LINES = 3
"""Lines a bullet of a short answer may take (its prose is cut with "…", citations kept)."""


def render_research(result: ResearchResult, *, width: int = WIDTH, full: bool = False) -> str:
    """Everything a research run found, as a person reads it."""
    head = _banner(result)
    tail: list[str] = []
    if result.source_fetches:
        tail += ["", *render_source_fetches(result).splitlines()]
    tail += ["", *footer_lines(result, width, full=full)]
    room = SHORT_LINES - (len(head) + 1 if head else 0) - len(tail)  # + the blank line
    blocks = [_answer(result, width, full=full, room=room)]
    if full and result.reddit_response is not None:
        blocks.append(run_lines(result.reddit_response, width))
    if result.expert_responses:
        experts = render_expert_responses(result.expert_responses, width=width, full=full)
        blocks.append(experts.splitlines())
    lines = head[:]
    for block in blocks:
        if block:
            lines += ["", *block] if lines else block
    return "\n".join(lines + tail)


def render_answer(result: ResearchResult, *, width: int = WIDTH, full: bool = False) -> str:
    """The Reddit answer and the footer."""
    footer = footer_lines(result, width, full=full)
    body = _answer(result, width, full=full, room=SHORT_LINES - len(footer) - 1)
    return "\n".join([*body, "", *footer] if body else footer)


def _banner(result: ResearchResult) -> list[str]:
    if not result.sample_data:
        return []
    return [
        "SAMPLE DATA: this answer comes from the bundled sample archive, not real Reddit posts."
    ]


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


# --- the answer -----------------------------------------------------------------------------


def _answer(result: ResearchResult, width: int, *, full: bool, room: int) -> list[str]:
    """The Reddit answer; short ones lose items, lowest priority first, until ``room`` fits."""
    if result.summary is None and _synthesis(result) is None:
        searched = result.fetch is not None or result.reddit_response is not None
        return ["No answer from Reddit (see the status below)."] if searched else []
    if full:
        return _compose(result, None, width)
    caps = {**SHORT_CAPS, "cites": SECTION_CITES}
    lines = _compose(result, caps, width)
    floor = {"sentences": SHORT_CAPS["sentences"]}  # the direct answer shrinks last
    for round_floors in _FLOORS:
        floor.update(round_floors)
        for part in _DROP_ORDER:
            while _rows(lines, width) > room and _shown_counts(result, caps)[part] > floor.get(
                part, 0
            ):
                caps[part] = _shown_counts(result, caps)[part] - 1
                lines = _compose(result, caps, width)
    return lines


def _rows(lines: list[str], width: int) -> int:
    """Terminal rows the lines take: a lone URL longer than the width wraps onto more."""
    return sum(max(1, -(-len(line) // width)) for line in lines)


def _synthesis(result: ResearchResult) -> RedditSynthesis | None:
    return result.reddit_response.synthesis if result.reddit_response else None


def _shown_counts(result: ResearchResult, caps: dict[str, int]) -> dict[str, int]:
    summary, synthesis = result.summary, _synthesis(result)
    available = {
        "sentences": _cited_summary(result).opening(None)[1],
        "highlights": len(summary.highlights) if summary else 0,
        "cautions": len(summary.cautions) if summary else 0,
        "gems": len(synthesis.hidden_gems) if synthesis else 0,
        "minority": len(synthesis.minority_report) if synthesis else 0,
        "pivots": len(synthesis.pivot_alerts) if synthesis else 0,
        "rows": len(synthesis.comparison_table) if synthesis else 0,
    }
    return {name: min(caps[name], count) for name, count in available.items()}


def _cited_summary(result: ResearchResult) -> CitedText:
    """The answer's summary: the one text (``reddit_response.synthesis`` shows it too)."""
    return result.summary.summary if result.summary is not None else CitedText()


def _compose(result: ResearchResult, caps: dict[str, int] | None, width: int) -> list[str]:
    """The answer with at most ``caps`` of each part (everything when None)."""
    summary, synthesis = result.summary, _synthesis(result)
    text = _cited_summary(result)
    limit = caps or {}
    opening, total = text.opening(limit.get("sentences"))
    highlights = (summary.highlights if summary else [])[: limit.get("highlights")]
    cautions = (summary.cautions if summary else [])[: limit.get("cautions")]
    if caps is not None:
        opening = opening.thin(caps["cites"])
        highlights = [item.thin(caps["cites"]) for item in highlights]
        cautions = [item.thin(caps["cites"]) for item in cautions]
    sections = Sections.of(synthesis, caps, details=caps is None)
    refs = (text if caps is None else opening).refs()
    for item in [*highlights, *cautions]:
        refs += item.refs()
    listing = source_list(summary, synthesis, [*refs, *sections.refs()], complete=caps is None)
    numbers = listing.numbers
    max_lines = ITEM_LINES if caps is not None else None
    if caps is None:  # everything, paragraphs and the engine's own bullets kept
        lines = [
            line for part in text.lines() if part.text.strip() or part.citations()
            for line in paragraph(part.numbered(numbers), width)
        ]  # fmt: skip
    else:
        lines = paragraph(opening.numbered(numbers), width)
    lines = lines or ["(no answer)"]
    for title, items in (("Highlights", highlights), ("Cautions", cautions)):
        if items:
            lines += ["", f"{title}:"]
            for item in items:
                lines += bullet(item.numbered(numbers), width, max_lines)
    lines += render_sections(sections, numbers, width, max_lines)
    lines += source_lines(listing, width)
    if caps is not None:
        lines += _more(result, caps, total, listing.available - listing.count)
    return lines


def _more(result: ResearchResult, caps: dict[str, int], sentences: int, sources: int) -> list[str]:
    """One line saying what ``--full`` adds, when the short answer left something out."""
    shown = _shown_counts(result, caps)
    summary, synthesis = result.summary, _synthesis(result)
    items = len(summary.highlights) + len(summary.cautions) if summary else 0
    if synthesis is not None:
        items += len(synthesis.hidden_gems) + len(synthesis.minority_report)
        items += len(synthesis.pivot_alerts) + len(synthesis.comparison_table)
    more_items = items - sum(v for k, v in shown.items() if k != "sentences")
    more_sentences = sentences - shown["sentences"]
    parts = [
        f"{n} more {word}{'' if n == 1 else 's'}"
        for n, word in ((more_sentences, "sentence"), (more_items, "point"), (sources, "source"))
        if n > 0
    ]
    return ["", f"(--full shows everything: {', '.join(parts)})"] if parts else []


# --- the footer -----------------------------------------------------------------------------


def footer_lines(result: ResearchResult, width: int, *, full: bool = False) -> list[str]:
    """Engine, source and time; then the overall status (with its reason) and what was read."""
    if result.engine == "local":
        engine = "local (extractive quotes, not an LLM)"
    else:
        usage = result.usage
        engine = (
            f"{result.engine} ({usage.calls} LLM calls, {usage.prompt_tokens}+"
            f"{usage.completion_tokens} tokens, {_cost(usage)})"
        )
    fetch = result.fetch
    source = fetch.source if fetch is not None else None
    if source is None and result.reddit_response is not None:
        source = result.reddit_response.source
    where = f"source: {source}" if source else "Reddit not searched"
    if result.sample_data:
        where += " (SAMPLE data)"
    seconds = result.timings_ms.get("total", 0) / 1000
    lines = paragraph(f"window: {result.window}", width) if result.window else []
    lines += paragraph(f"engine: {engine} · {where} · {seconds:.1f} s", width)
    status = f"status: {result.status}"
    if result.status != "ok":
        reason = status_reason(result)
        summary = result.summary
        if not full and summary is not None and summary.abstained and reason == summary.reason:
            reason = "abstained: the answer says why"  # not the same words again, cut short
        status += f" ({reason})"
    if fetch is not None:
        read = f" · {fetch.posts_relevant} relevant posts of {fetch.posts_accepted}"
    elif result.expert_responses:
        read = f" · {len(result.expert_responses)} experts"
    else:
        read = ""
    lines += paragraph(status + read, width)  # wrapped, never cut: the reason is the point
    usage = result.usage
    if usage.budget_exhausted:
        lines += paragraph(
            f"budget: ${usage.budget_usd:g} reached; {usage.calls_skipped} LLM calls skipped "
            "(raise --budget-usd for a fuller answer)",
            width,
        )
    return lines


def status_reason(result: ResearchResult) -> str:
    """Why the overall status is not ok, in a few words: the result's own reason when it has
    one, else what the parts report (the answer's reason, failed searches, experts, sources)."""
    own = getattr(result, "reason", None)
    if isinstance(own, str) and own:
        return own
    reasons: list[str] = []
    if result.summary is not None and result.summary.reason:
        reasons.append(result.summary.reason)
    response = result.reddit_response
    if response is not None:
        if response.timed_out:
            reasons.append("the Reddit search ran out of time")
        reasons += response.errors
    if result.fetch is not None:
        reasons += result.fetch.errors
    for expert in result.expert_responses:
        if expert.status not in ("ok", "no_results"):
            note = f": {expert.notes[0]}" if expert.notes else ""
            reasons.append(f"expert {expert.expert_id} {expert.status}{note}")
    for fetched in result.source_fetches:
        if fetched.errors:
            reasons.append(f"{fetched.kind} failed: {fetched.errors[0]}")
    if result.usage.budget_exhausted:
        reasons.append("the LLM budget ran out")
    unique = list(dict.fromkeys(r.strip() for r in reasons if r.strip()))
    if not unique:
        return "a part of the run did not finish; --json has the details"
    extra = f"; and {len(unique) - 3} more" if len(unique) > 3 else ""
    return "; ".join(unique[:3]) + extra


def _cost(usage: Usage) -> str:
    """``$0.0123``, noting models the price table does not list (their calls are not counted)."""
    text = f"${usage.cost_usd:.4f}"
    if usage.unpriced_models:
        text += f"; no price for {', '.join(usage.unpriced_models)} (see `crowdsift prices`)"
    return text
