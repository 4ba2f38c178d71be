"""A small inline SVG bar chart of the stance counts per option, for "X vs Y" reports (pure).

One horizontal bar per option, as long as its mentions, split into the sentences (or replies)
for it, against it, and those that only named it — the counts its verdict states. The SVG is
part of the HTML file: no script, no font or image to fetch, every label escaped.
"""

from __future__ import annotations

from html import escape

from crowdsift.pipeline.report.content import Row

BAR_WIDTH = 300
"""Pixels of the longest bar (the option mentioned most)."""
LABEL_WIDTH = 130
ROW_HEIGHT = 30
TOP = 26
"""Room above the bars for the legend."""
LABEL_CHARS = 18
"""An option's label is cut to this many characters (the table has it whole)."""
COLOURS = {"positive": "#2e7d32", "neutral": "#b0b0b0", "negative": "#c62828"}


def stance_chart(rows: tuple[Row, ...]) -> str:
    """The chart of ``rows`` (each with counts), or "" when there is nothing to compare."""
    counted = [row for row in rows if row.counts is not None]
    if not counted:
        return ""
    most = max(row.counts.total for row in counted if row.counts) or 1
    width = LABEL_WIDTH + BAR_WIDTH + 120
    height = TOP + ROW_HEIGHT * len(counted) + 6
    names = ", ".join(row.option for row in counted)
    parts = [
        f'<svg class="stance-chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'aria-label="{escape(f"How the threads lean on {names}")}">',
        f"<title>{escape(f'For, neutral and against, per option: {names}')}</title>",
        _legend(),
    ]
    for index, row in enumerate(counted):
        parts.append(_bar(row, TOP + index * ROW_HEIGHT, most))
    parts.append("</svg>")
    return "\n".join(parts)


def _legend() -> str:
    items = []
    x = LABEL_WIDTH
    for name, label in (("positive", "for"), ("neutral", "neutral"), ("negative", "against")):
        items.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{COLOURS[name]}"/>'
            f'<text x="{x + 16}" y="16">{label}</text>'
        )
        x += 90
    return f'<g class="legend">{"".join(items)}</g>'


def _bar(row: Row, y: int, most: int) -> str:
    counts = row.counts
    assert counts is not None  # stance_chart draws only rows with counts
    label = row.option if len(row.option) <= LABEL_CHARS else row.option[: LABEL_CHARS - 1] + "…"
    pieces = [
        f'<g class="bar" data-option="{escape(row.option)}">',
        f'<text x="{LABEL_WIDTH - 8}" y="{y + 17}" text-anchor="end">{escape(label)}</text>',
    ]
    x = float(LABEL_WIDTH)
    for name, value in (
        ("positive", counts.positive),
        ("neutral", counts.neutral),
        ("negative", counts.negative),
    ):
        if value <= 0:
            continue
        span = BAR_WIDTH * value / most
        pieces.append(
            f'<rect class="{name}" x="{x:.1f}" y="{y + 4}" width="{span:.1f}" height="18" '
            f'fill="{COLOURS[name]}"><title>{value} {_side(name)}</title></rect>'
        )
        x += span
    summary = f"{counts.positive}+ / {counts.negative}− of {counts.total}"
    pieces.append(f'<text x="{x + 8:.1f}" y="{y + 17}">{escape(summary)}</text>')
    pieces.append("</g>")
    return "".join(pieces)


def _side(name: str) -> str:
    return {"positive": "for", "neutral": "neutral", "negative": "against"}[name]
