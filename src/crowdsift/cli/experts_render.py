"""Plain-text rendering of the panel's answers (pure): one block per expert, each with its own
numbered sources.

An expert's answer cites ``[post:N]`` (its channel's posts); the block numbers them ``[1]``,
``[2]`` … in reading order and lists them under it, so no internal id reaches a person.
Comment markers have no link to lead to and are dropped (the quote keeps its author's name).
A short block keeps the answer's first lines and two quotes per comment section; ``full``
keeps everything.
"""

from __future__ import annotations

from collections.abc import Sequence

from crowdsift.cli.layout import WIDTH, bullet, paragraph
from crowdsift.core.citations import SourceNumbers
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.sources.experts.models import CommentSection, ExpertResponse

ANSWER_LINES = 6
"""Lines (paragraphs or bullets) of an expert's answer a short block keeps."""
SECTION_ITEMS = 2
"""Quotes per comment section a short block keeps."""


def render_expert_responses(
    responses: Sequence[ExpertResponse], *, width: int = WIDTH, full: bool = False
) -> str:
    return "\n\n".join(render_expert(r, width=width, full=full) for r in responses)


def render_expert(response: ExpertResponse, *, width: int = WIDTH, full: bool = False) -> str:
    engine = "local (extractive, not an LLM)" if response.engine == "local" else response.engine
    lines = paragraph(
        f"== Expert {response.expert_id} · status {response.status} · engine {engine} · "
        f"language {response.language}",
        width,
    )
    parts = [CitedText.decode(p.strip()) for p in response.answer.splitlines() if p.strip()]
    shown = parts if full else parts[:ANSWER_LINES]
    refs = [ref for part in shown for ref in part.refs()]
    by_key = {f"post:{s.post_id}": s for s in response.main_sources}
    order = [by_key[ref] for ref in dict.fromkeys(refs) if ref in by_key]
    if full:
        order += [s for s in response.main_sources if s not in order]
    numbers = SourceNumbers()
    for source in order:
        numbers.add([f"post:{source.post_id}"], source.url)
    max_lines = None if full else 3
    if shown:
        lines.append("")
    lines += _items(shown, numbers, width, max_lines)
    if len(parts) > len(shown):
        lines.append(f"  … {len(parts) - len(shown)} more (--full)")
    if order:
        lines += ["", "Sources:"]
        for source in order:
            number = numbers.add([f"post:{source.post_id}"], source.url)
            lines.append(
                f"  [{number}] {source.date.date().isoformat()} {source.relevance.value:<7} "
                f"{source.url}"
            )
    for section in response.comment_sections:
        lines += _section(section, numbers, width, full=full)
    lines += _footer(response, width, full=full)
    return "\n".join(lines)


def _section(
    section: CommentSection, numbers: SourceNumbers, width: int, *, full: bool
) -> list[str]:
    """One comment section under its title: its first ``SECTION_ITEMS`` quotes (all with
    ``full``), and how many more there are."""
    items = [CitedText.decode(p.strip()) for p in section.text.splitlines() if p.strip()]
    quotes = [i for i, item in enumerate(items) if item.text.startswith(("- ", "* ", "• "))]
    cut = set() if full else set(quotes[SECTION_ITEMS:])
    kept = [item for i, item in enumerate(items) if i not in cut]
    lines = ["", f"-- {section.title}", *_items(kept, numbers, width, None if full else 3)]
    if len(items) > len(kept):
        lines.append(f"  … {len(items) - len(kept)} more (--full)")
    return lines


def _footer(response: ExpertResponse, width: int, *, full: bool) -> list[str]:
    """Removed citations, notes, and with ``full`` the counts and the time taken."""
    lines: list[str] = []
    if response.removed_citations:
        lines += paragraph(
            f"removed citations not in the evidence: {len(response.removed_citations)}", width
        )
    for note in response.notes:
        lines += paragraph(f"note: {note}", width)
    if full:
        counts = ", ".join(f"{k}={v}" for k, v in response.counts.items())
        total_ms = sum(response.timings_ms.values())
        if counts:
            lines += ["", *paragraph(f"({counts}; {total_ms / 1000:.1f}s)", width)]
    return lines


def _items(
    parts: list[CitedText], numbers: SourceNumbers, width: int, max_lines: int | None
) -> list[str]:
    """Answer lines and quoted items as the terminal shows them: "- " items as bullets, the
    rest as wrapped paragraphs, citation lists numbered."""
    lines: list[str] = []
    for part in parts:
        text = part.numbered(numbers)
        if text.startswith(("- ", "* ", "• ")):
            lines += bullet(text[2:], width, max_lines, mark="-")
        else:
            lines += paragraph(text, width, max_lines)
    return lines
