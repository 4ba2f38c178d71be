"""Plain-text rendering of the sidecar's response (pure): the Reddit run's counts and, when no
answer is printed above it, the staff-engineer sections.

``render_sections`` prints the sections of the one answer with ``[n]`` numbers from the answer's
source list (``crowdsift.pipeline.synthesis.display``): no internal id and no second numbering
reaches a person. Text is printed as plain text (it came from strangers).
"""

from __future__ import annotations

import textwrap
from datetime import datetime

from crowdsift.core.citations import SourceNumbers
from crowdsift.pipeline.reddit.models import ComparisonRow, RedditResponse, SidecarSynthesis
from crowdsift.pipeline.synthesis.display import numbered_sources


def render_reddit_response(
    response: RedditResponse, *, width: int = 88, sections: bool = True
) -> str:
    """The run's counts; with ``sections``, the synthesis and its sources too."""
    analysis = response.analysis
    head = f"== Community insights (Reddit · {response.source} · status {response.status})"
    lines = [head]
    if analysis is not None:
        lines.append(
            f"   intent {analysis.intent} · AI {analysis.ai_mode.replace('_', ' ')} · "
            f"time {analysis.time_filter} · r/{', r/'.join(analysis.subreddits)}"
        )
    lines.append(
        f"   {len(response.queries)} searches · {response.candidates_found} posts · "
        f"{response.duplicates_removed} duplicates folded · {len(response.ranked)} reranked · "
        f"{response.threads_drilled} threads drilled ({response.comments_drilled} comments)"
    )
    if sections and response.synthesis is not None:
        lines += _synthesis(response.synthesis, width)
    lines += [f"note: {error}" for error in response.errors]
    return "\n".join(lines)


def _synthesis(synthesis: SidecarSynthesis, width: int) -> list[str]:
    numbers, listed = numbered_sources(None, synthesis)
    summary = numbers.text(synthesis.summary) or "(no synthesis)"
    lines = ["", *(textwrap.wrap(summary, width) or [summary])]
    lines += render_sections(synthesis, numbers, width)
    if listed:
        lines += ["", "Sources:"]
        for source in listed:
            lines += [f"  [{source.number}] {source.label[:70]}", f"      {source.url}"]
    return lines


def _cites(numbers: SourceNumbers, urls: list[str]) -> str:
    found = numbers.of_urls(urls)
    return " " + "".join(f"[{n}]" for n in found) if found else ""


def render_sections(synthesis: SidecarSynthesis, numbers: SourceNumbers, width: int) -> list[str]:
    """The staff-engineer sections that have content, each claim followed by its ``[n]``."""
    gems = [(f"{g.text} ({g.score} points)", g.sources) for g in synthesis.hidden_gems]
    dissent = [(f"{m.text} ({m.votes} votes)", m.sources) for m in synthesis.minority_report]
    pivots = [
        (_pivot(p.from_option, p.to_option, p.text, p.first_seen, p.last_seen), p.sources)
        for p in synthesis.pivot_alerts
    ]
    lines: list[str] = []
    sections = [("Hidden gems", gems), ("Minority report", dissent), ("Pivot alert", pivots)]
    for title, items in sections:
        if not items:
            continue
        lines += ["", f"{title}:"]
        for text, sources in items:
            lines += _bullet(text + _cites(numbers, sources), width)
    if synthesis.comparison_table:
        lines += ["", "Comparison:", *_table(synthesis.comparison_table, numbers, width)]
    return lines


def _pivot(
    before: str, after: str, text: str, first: datetime | None, last: datetime | None
) -> str:
    dates = ""
    if first is not None and last is not None:
        dates = f" ({first.date().isoformat()} – {last.date().isoformat()})"
    return f"{before} → {after}{dates}: {text}"


def _bullet(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, initial_indent="  • ", subsequent_indent="    ") or ["  •"]


def _table(rows: list[ComparisonRow], numbers: SourceNumbers, width: int) -> list[str]:
    option_width = min(max(len(row.option) for row in rows), 24)
    lines = []
    for row in rows:
        lines += textwrap.wrap(
            f"{row.option[:option_width]:<{option_width}} | {row.verdict}"
            + _cites(numbers, row.sources),
            width,
            initial_indent="  ",
            subsequent_indent="  " + " " * (option_width + 3),
        )
        for label, items in (("+", row.pros), ("−", row.cons)):
            for item in items:
                lines += textwrap.wrap(
                    f"{label} {item}",
                    width,
                    initial_indent="  " + " " * (option_width + 3),
                    subsequent_indent="  " + " " * (option_width + 5),
                )
    return lines
