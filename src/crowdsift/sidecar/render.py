"""Plain-text rendering of the sidecar's response (pure): the staff-engineer read of the threads.

The synthesis cites ``[n]`` into its own source list; on the terminal those become ``[rN]`` so
they cannot be confused with the summary's ``[n]`` above them. Claims list their permalinks
whole, so every one can be clicked. Text is printed as plain text (it came from strangers).
"""

from __future__ import annotations

import re
import textwrap
from datetime import datetime

from crowdsift.sidecar.models import ComparisonRow, RedditResponse, SidecarSynthesis

_NUMBER = re.compile(r"\[(\d+)\]")


def render_reddit_response(response: RedditResponse, *, width: int = 88) -> str:
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
    if response.synthesis is not None:
        lines += _synthesis(response.synthesis, width)
    lines += [f"note: {error}" for error in response.errors]
    return "\n".join(lines)


def _synthesis(synthesis: SidecarSynthesis, width: int) -> list[str]:
    lines = [""]
    summary = _NUMBER.sub(r"[r\1]", synthesis.summary) or "(no synthesis)"
    lines += textwrap.wrap(summary, width) or [summary]
    gems = [(f"{g.text} ({g.score} points)", g.sources) for g in synthesis.hidden_gems]
    dissent = [(f"{m.text} ({m.votes} votes)", m.sources) for m in synthesis.minority_report]
    pivots = [
        (_pivot(p.from_option, p.to_option, p.text, p.first_seen, p.last_seen), p.sources)
        for p in synthesis.pivot_alerts
    ]
    sections = [("Hidden gems", gems), ("Minority report", dissent), ("Pivot alert", pivots)]
    for title, items in sections:
        if not items:
            continue
        lines += ["", f"{title}:"]
        for text, sources in items:
            lines += _bullet(text, width)
            lines += [f"      {url}" for url in sources]
    if synthesis.comparison_table:
        lines += ["", "Comparison:", *_table(synthesis.comparison_table, width)]
    if synthesis.sources:
        lines += ["", "Threads and comments cited:"]
        for number, source in enumerate(synthesis.sources, start=1):
            lines.append(f"  [r{number}] {source.kind}: {source.title[:70]}")
            lines.append(f"      {source.url}")
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


def _table(rows: list[ComparisonRow], width: int) -> list[str]:
    option_width = min(max(len(row.option) for row in rows), 24)
    lines = []
    for row in rows:
        lines += textwrap.wrap(
            f"{row.option[:option_width]:<{option_width}} | {row.verdict}",
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
        lines += [f"      {url}" for url in row.sources]
    return lines
