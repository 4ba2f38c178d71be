"""What a kept report says, numbered once, before it becomes Markdown or HTML (pure).

Both formats show the same thing — the whole answer, as ``crowdsift ask --full`` prints it:
the direct answer, highlights and cautions, the staff-engineer sections that have content, the
comparison table, one numbered source list and a one-line footer. Building it once here means
the two renderers only differ in syntax and escaping, and a ``[n]`` means the same source in
both and in the terminal's ``--full`` answer: the numbering is ``source_list``'s
(``crowdsift.pipeline.synthesis.display``), fed the citations in the order the terminal reads
them. Text stays plain text here; each renderer escapes it for its own syntax.

Stored text cites ``[post:ID]`` / ``[comment:ID]``; the answer hands it over already read
into claims and citation lists (``crowdsift.pipeline.synthesis.cited``), which become
``Segment``s (prose, then the numbers it cites), so a renderer never has to tell a citation
from a stranger's literal "[3]" in the prose.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from crowdsift.core.citations import SourceNumbers, tidy
from crowdsift.pipeline.report.verdict import StanceCounts, parse_verdict
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.display import SourceList, source_list
from crowdsift.pipeline.synthesis.models import RedditSynthesis

LOCAL_ENGINE = "local (extractive quotes, not an LLM)"
"""How the footer names the local engine: it quotes, it does not write."""
MIN_CHART_ROWS = 2
"""A chart compares options: it needs two rows with counts."""


@dataclass(frozen=True)
class Segment:
    """Prose (plain text, possibly empty) followed by the source numbers it cites."""

    text: str
    cites: tuple[int, ...] = ()


Cited = tuple[Segment, ...]
"""One paragraph or bullet: its segments in reading order."""


@dataclass(frozen=True)
class Section:
    """A titled list of cited bullets (highlights, cautions, hidden gems …)."""

    key: str
    title: str
    items: tuple[Cited, ...]


@dataclass(frozen=True)
class Row:
    """A comparison row, its citations numbered; ``counts`` when its verdict carries them."""

    option: str
    verdict: str
    pros: tuple[str, ...]
    cons: tuple[str, ...]
    cites: tuple[int, ...]
    counts: StanceCounts | None


@dataclass(frozen=True)
class Report:
    """Everything a report shows, in order; ``answer`` is empty when there is no answer."""

    question: str
    sample_data: bool
    answer: tuple[Cited, ...]
    sections: tuple[Section, ...]
    rows: tuple[Row, ...]
    sources: SourceList
    footer: str
    notes: tuple[str, ...] = ()

    @property
    def chart_rows(self) -> tuple[Row, ...]:
        """The rows a stance chart draws: all with counts, when at least two options have them."""
        counted = tuple(row for row in self.rows if row.counts is not None)
        return counted if len(counted) >= MIN_CHART_ROWS else ()


def build_report(result: ResearchResult) -> Report:
    """The report of ``result``'s Reddit answer (every part of it, every source)."""
    summary = result.summary
    synthesis = result.reddit_response.synthesis if result.reddit_response else None
    text = summary.summary if summary else None  # the one summary (the sections show it too)
    highlights = summary.highlights if summary else []
    cautions = summary.cautions if summary else []
    refs = text.refs() if text else []
    for item in [*highlights, *cautions]:
        refs += item.refs()
    listing = source_list(summary, synthesis, [*refs, *_section_refs(synthesis)], complete=True)
    numbers = listing.numbers
    sections = [
        Section("highlights", "Highlights", tuple(segments(i, numbers) for i in highlights)),
        Section("cautions", "Cautions", tuple(segments(i, numbers) for i in cautions)),
        *_staff_sections(synthesis, numbers),
    ]
    lines = text.lines() if text else []
    return Report(
        question=result.question,
        sample_data=result.sample_data,
        answer=tuple(segments(p, numbers) for p in lines if p.text.strip() or p.citations()),
        sections=tuple(s for s in sections if s.items),
        rows=_rows(synthesis, numbers),
        sources=listing,
        footer=footer(result),
        notes=_notes(result),
    )


def segments(text: CitedText, numbers: SourceNumbers) -> Cited:
    """``text``'s prose pieces, each with the numbers of the citation list after it.

    Lists with no prose between them join one run (ascending, each number once); citations of
    unknown sources vanish, as they do in the terminal (a number that points nowhere is worse
    than none). Prose stays prose, whatever brackets a stranger typed in it."""
    pieces: list[Segment] = []
    prose = ""
    cites: list[int] = []
    for span in text.spans:
        if span.text.strip() and cites:  # prose after a run: the run ends
            pieces.append(Segment(_tidy(prose), tuple(sorted(set(cites)))))
            prose, cites = "", []
        prose += span.text
        found = (numbers.number(c) for c in span.cites)
        cites += [n for n in found if n is not None]
    pieces.append(Segment(_tidy(prose), tuple(sorted(set(cites)))))
    return tuple(p for p in pieces if p.text or p.cites)


def _tidy(text: str) -> str:
    """One line, and no gap left before punctuation where a marker was removed."""
    return tidy(" ".join(text.split()))


def _section_refs(synthesis: RedditSynthesis | None) -> list[str]:
    """The permalinks the staff-engineer sections cite, in the order the terminal reads them
    (gems, dissent, pivots, table), so a report numbers its sources as ``ask --full`` does."""
    if synthesis is None:
        return []
    items: list[Iterable[str]] = [
        *(g.sources for g in synthesis.hidden_gems),
        *(m.sources for m in synthesis.minority_report),
        *(p.sources for p in synthesis.pivot_alerts),
        *(r.sources for r in synthesis.comparison_table),
    ]
    return [url for urls in items for url in urls]


def _staff_sections(synthesis: RedditSynthesis | None, numbers: SourceNumbers) -> list[Section]:
    if synthesis is None:
        return []

    def item(text: str, urls: list[str]) -> Cited:
        return (Segment(text, tuple(sorted(numbers.of_urls(urls)))),)

    gems = [
        item(f"{g.text} ({_count(g.score, 'point')})", g.sources) for g in synthesis.hidden_gems
    ]
    dissent = [
        item(f"{m.text} ({_count(m.votes, 'vote')})", m.sources) for m in synthesis.minority_report
    ]
    pivots = [item(p.line(), p.sources) for p in synthesis.pivot_alerts]
    return [
        Section("hidden-gems", "Hidden gems", tuple(gems)),
        Section("minority-report", "Minority report", tuple(dissent)),
        Section("pivot-alerts", "Pivot alerts", tuple(pivots)),
    ]


def _rows(synthesis: RedditSynthesis | None, numbers: SourceNumbers) -> tuple[Row, ...]:
    if synthesis is None:
        return ()
    return tuple(
        Row(
            option=row.option,
            verdict=row.verdict,
            pros=tuple(row.pros),
            cons=tuple(row.cons),
            cites=tuple(sorted(numbers.of_urls(row.sources))),
            counts=parse_verdict(row.verdict),
        )
        for row in synthesis.comparison_table
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


# --- the footer and notes ---------------------------------------------------------------------


def footer(result: ResearchResult) -> str:
    """``status: ok · engine: … · source: …`` — what a reader needs to weigh the answer."""
    status = f"status: {result.status}"
    reason = _reason(result) if result.status != "ok" else ""
    if reason:
        status += f" ({reason})"
    engine = LOCAL_ENGINE if result.engine == "local" else result.engine
    source = result.fetch.source if result.fetch is not None else None
    if source is None and result.reddit_response is not None:
        source = result.reddit_response.source
    where = f"source: {source}" if source else "Reddit not searched"
    if result.sample_data:
        where += " (SAMPLE data)"
    return f"{status} · engine: {engine} · {where}"


def _reason(result: ResearchResult) -> str:
    """The first reason the parts give for a status that is not ok (``--json`` has them all)."""
    reasons = [result.summary.reason] if result.summary and result.summary.reason else []
    if result.reddit_response is not None:
        reasons += result.reddit_response.errors
    if result.fetch is not None:
        reasons += result.fetch.errors
    found = next((r.strip() for r in reasons if r and r.strip()), "")
    return found or "a part of the run did not finish; --format json has the details"


def _notes(result: ResearchResult) -> tuple[str, ...]:
    """What the report leaves out, said rather than silently dropped."""
    notes: list[str] = []
    synthesis = result.reddit_response.synthesis if result.reddit_response else None
    if result.summary is None and synthesis is None:
        notes.append("No answer from Reddit (see the status below).")
    if result.expert_responses:
        count = len(result.expert_responses)
        notes.append(
            f"{_count(count, 'expert answer')} not included here: "
            "--format text or --format json shows them."
        )
    return tuple(notes)
