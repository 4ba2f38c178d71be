"""Reports: an answer kept as a file — Markdown or one self-contained HTML page (pure).

``content`` decides what a report says and numbers its sources once; ``markdown`` and ``html``
only write it out, each escaping untrusted text for its own syntax; ``chart`` draws the stance
counts that ``verdict`` reads back from a comparison row. ``crowdsift ask --format md|html``
and ``GET /api/research/{id}/report.md|.html`` both call ``render_report``.
"""

from __future__ import annotations

from typing import Literal

from crowdsift.pipeline.report.html import render_html
from crowdsift.pipeline.report.markdown import render_markdown
from crowdsift.pipeline.result import ResearchResult

ReportFormat = Literal["md", "html"]
MEDIA_TYPES: dict[ReportFormat, str] = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}

__all__ = ["MEDIA_TYPES", "ReportFormat", "render_html", "render_markdown", "render_report"]


def render_report(result: ResearchResult, fmt: ReportFormat) -> str:
    """``result`` as a report in ``fmt``."""
    return render_markdown(result) if fmt == "md" else render_html(result)
