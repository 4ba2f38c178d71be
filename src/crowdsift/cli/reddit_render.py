"""Plain-text rendering of the staff-engineer sections and of the Reddit run's counts (pure).

The sections are part of the one answer: each claim ends with its ``[n]`` from the answer's
source list, and a section is printed only when it has something to say. ``Sections`` holds
what a short answer keeps of each (``--full`` keeps everything); ``run_lines`` is the run's
counts, for ``--full``. Text is printed as plain text (it came from strangers).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TypeVar

from crowdsift.cli.layout import bullet
from crowdsift.core.citations import SourceNumbers
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.synthesis.models import (
    ComparisonRow,
    HiddenGem,
    MinorityReport,
    PivotAlert,
    RedditSynthesis,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Sections:
    """The items of each section that are shown; ``details`` adds the table's pros and cons."""

    gems: list[HiddenGem]
    minority: list[MinorityReport]
    pivots: list[PivotAlert]
    rows: list[ComparisonRow]
    details: bool = True

    @classmethod
    def of(
        cls,
        synthesis: RedditSynthesis | None,
        caps: dict[str, int] | None = None,
        *,
        details: bool = True,
    ) -> Sections:
        """``synthesis``'s sections, each cut to ``caps[name]`` items (all without caps), each
        claim to ``caps["cites"]`` permalinks."""
        if synthesis is None:
            return cls([], [], [], [], details)
        limit = caps or {}
        cites = limit.get("cites")

        def cut(name: str, items: list[T]) -> list[T]:
            kept = items[: limit[name]] if name in limit else list(items)
            if cites is None:
                return kept
            return [i.model_copy(update={"sources": i.sources[:cites]}) for i in kept]  # type: ignore[attr-defined]

        return cls(
            cut("gems", synthesis.hidden_gems),
            cut("minority", synthesis.minority_report),
            cut("pivots", synthesis.pivot_alerts),
            cut("rows", synthesis.comparison_table),
            details,
        )

    def refs(self) -> list[str]:
        """The permalinks the shown items cite, in reading order."""
        items: list[list[str]] = [
            *(g.sources for g in self.gems),
            *(m.sources for m in self.minority),
            *(p.sources for p in self.pivots),
            *(r.sources for r in self.rows),
        ]
        return [url for urls in items for url in urls]


def _count(number: int, noun: str) -> str:
    """``1 point``, ``4 points``: a count the way a person writes it."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def render_sections(
    sections: Sections, numbers: SourceNumbers, width: int, max_lines: int | None = None
) -> list[str]:
    """The sections that have content, each claim followed by its ``[n]``."""
    gems = [(f"{g.text} ({_count(g.score, 'point')})", g.sources) for g in sections.gems]
    dissent = [(f"{m.text} ({_count(m.votes, 'vote')})", m.sources) for m in sections.minority]
    pivots = [(p.line(), p.sources) for p in sections.pivots]
    lines: list[str] = []
    for title, items in (
        ("Hidden gems", gems),
        ("Minority report", dissent),
        ("Pivot alerts", pivots),
    ):
        if not items:
            continue
        lines += ["", f"{title}:"]
        for text, sources in items:
            lines += bullet(text + _cites(numbers, sources), width, max_lines)
    if sections.rows:
        lines += ["", "Comparison:"]
        lines += _table(sections.rows, numbers, width, sections.details)
    return lines


def _cites(numbers: SourceNumbers, urls: list[str]) -> str:
    found = numbers.of_urls(urls)
    return " " + "".join(f"[{n}]" for n in found) if found else ""


def _table(
    rows: list[ComparisonRow], numbers: SourceNumbers, width: int, details: bool
) -> list[str]:
    option_width = min(max(len(row.option) for row in rows), 24)
    pad = "  " + " " * (option_width + 3)
    lines: list[str] = []
    for row in rows:
        lines += textwrap.wrap(
            f"{row.option[:option_width]:<{option_width}} | {row.verdict}"
            + _cites(numbers, row.sources),
            width,
            initial_indent="  ",
            subsequent_indent=pad,
        )
        if not details:
            continue
        for label, items in (("+", row.pros), ("−", row.cons)):
            for item in items:
                lines += textwrap.wrap(
                    f"{label} {item}", width, initial_indent=pad, subsequent_indent=pad + "  "
                )
    return lines


def run_lines(response: RedditResponse, width: int) -> list[str]:
    """How the Reddit run went, in numbers (the overall status is the footer's)."""
    lines = ["Reddit run:"]
    analysis = response.analysis
    if analysis is not None:
        lines += textwrap.wrap(
            f"intent {analysis.intent} · AI {analysis.ai_mode.replace('_', ' ')} · "
            f"time {analysis.time_filter} · r/{', r/'.join(analysis.subreddits)}",
            width,
            initial_indent="  ",
            subsequent_indent="  ",
        )
    lines += textwrap.wrap(
        f"{len(response.queries)} searches · {response.candidates_found} posts · "
        f"{response.duplicates_removed} duplicates folded · {len(response.ranked)} reranked · "
        f"{response.threads_drilled} threads drilled ({response.comments_drilled} comments)",
        width,
        initial_indent="  ",
        subsequent_indent="  ",
    )
    return lines
