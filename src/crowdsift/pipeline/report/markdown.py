"""A report as Markdown (pure): ``crowdsift ask --format md`` and ``GET …/report.md``.

Everything a stranger wrote (and the question) is escaped so it stays text in any CommonMark or
GitHub renderer: no HTML, no emphasis, no links, images or autolinks of its own, no heading or
list it did not ask for. The only links are the report's: each ``[n]`` leads to its entry in the
numbered source list (an ``<a id>`` anchor, the one piece of HTML, written by us), and each
entry to its permalink.
"""

from __future__ import annotations

import re

from crowdsift.pipeline.report.content import Cited, Report, Row, build_report
from crowdsift.pipeline.report.links import safe_url, source_anchor
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.display import SourceGroup

SAMPLE_NOTICE = (
    "**SAMPLE DATA:** this answer comes from the bundled sample archive, not real Reddit posts."
)

_INLINE = re.compile(r"[\\`*_\[\]<>&|~@$]")
"""Characters that start emphasis, code, links, images, HTML, entities, table cells,
strikethrough, e-mail autolinks or math, anywhere in a line."""
_AUTOLINK = re.compile(r"(?<=[A-Za-z])(:)(?=//)|(?<=\b[Ww][Ww][Ww])(\.)")
"""``scheme://`` and ``www.``, which GitHub turns into links even without brackets."""
_BLOCK_START = re.compile(r"^(?:([#>+=-])|(\d{1,9})([.)]))")
"""What makes a line a heading, quote, list item or setext underline when it starts one."""
_NO_SPACE_BEFORE = tuple(".,;:!?)]}…”’»")


def render_markdown(result: ResearchResult) -> str:
    """The whole Reddit answer of ``result`` as one Markdown document."""
    return markdown_report(build_report(result))


def markdown_report(report: Report) -> str:
    blocks = [f"# {escape(report.question, block=True)}"]
    if report.sample_data:
        blocks.append(f"> {SAMPLE_NOTICE}")
    blocks += [escape(note, block=True) for note in report.notes]
    if report.answer:
        blocks += ["## Answer", *(cited(paragraph, block=True) for paragraph in report.answer)]
    for section in report.sections:
        blocks += [
            f"## {section.title}",
            "\n".join(f"- {cited(i, block=True)}" for i in section.items),
        ]
    if report.rows:
        blocks += ["## Comparison", table(report.rows)]
    if report.sources.groups:
        blocks += ["## Sources", sources(report)]
    blocks += ["---", escape(report.footer, block=True)]
    return "\n\n".join(blocks) + "\n"


def escape(text: str, *, block: bool = False) -> str:
    """``text`` on one line, every character that could make Markdown escaped; ``block``
    also escapes what would make the start of a line a heading, quote or list item."""
    flat = " ".join(text.split())
    escaped = _AUTOLINK.sub(lambda m: "\\" + m.group(0), _INLINE.sub(r"\\\g<0>", flat))
    if block:
        escaped = _BLOCK_START.sub(_escape_start, escaped)
    return escaped


def _escape_start(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\" + match.group(1)
    return f"{match.group(2)}\\{match.group(3)}"


def cite_links(numbers: tuple[int, ...]) -> str:
    """``[1][4]`` as links to the source list's entries."""
    return "".join(f"[\\[{n}\\]](#{source_anchor(n)})" for n in numbers)


def cited(parts: Cited, *, block: bool = False) -> str:
    """A paragraph or bullet: its prose escaped, each run of citations after its words."""
    out = ""
    for segment in parts:
        if segment.text:
            text = escape(segment.text, block=block and not out)
            glue = out and not segment.text.startswith(_NO_SPACE_BEFORE)
            out += (" " if glue else "") + text
        if segment.cites:
            out += (" " if out else "") + cite_links(segment.cites)
    return out


def table(rows: tuple[Row, ...]) -> str:
    """The comparison as a GitHub table: option, verdict, what is said for and against it."""
    lines = ["| Option | Verdict | For | Against | Sources |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        cells = [
            escape(row.option),
            escape(row.verdict),
            " · ".join(escape(p) for p in row.pros),
            " · ".join(escape(c) for c in row.cons),
            cite_links(row.cites),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sources(report: Report) -> str:
    """Each thread (video, product) with its number and permalink, its cited comments under it."""
    lines: list[str] = []
    for group in report.sources.groups:
        lines.append(f"- {_thread(group)}")
        for comment in group.comments:
            link = _link("comment", comment.url)
            lines.append(f"  - {_anchor(comment.number)}\\[{comment.number}\\] {link}")
    return "\n".join(lines)


def _thread(group: SourceGroup) -> str:
    where = f"{escape(group.where)} — " if group.where else ""
    title = _link(group.title, group.url)
    if group.number is None:
        return f"{where}{title}"
    return f"{_anchor(group.number)}\\[{group.number}\\] {where}{title}"


def _anchor(number: int) -> str:
    return f'<a id="{source_anchor(number)}"></a>'


def _link(label: str, url: str) -> str:
    """``[label](<url>)``, or the label alone when the URL may not be a link."""
    target = safe_url(url)
    text = escape(label) or "link"
    return f"[{text}](<{target}>)" if target else text
