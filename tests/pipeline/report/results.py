"""Research results to render as reports: an ordinary "X vs Y" answer, and one whose every
rendered field carries hostile text and URLs (``tests.support.injection``'s payloads and the
web page tests' markup), so escaping is checked everywhere, not where demo data happens to be."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.specifics import verdict
from tests.support.injection import EVIL_HOST, EVIL_URL, PAYLOADS

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
JS_URL = "javascript:alert(1)"
DATA_URL = "data:text/html,<script>alert(4)</script>"
MARKDOWN = (
    f"**bold** _em_ `code` ![pixel]({EVIL_URL}/p.png) [click]({EVIL_URL}) <{EVIL_URL}/auto> "
    f"{EVIL_URL}/bare www.{EVIL_HOST}/w mail@{EVIL_HOST} | cell | ~~gone~~ &amp; [3] [^1]"
)
"""Markdown that would become emphasis, code, an image, links, autolinks, a table, an entity or
a footnote if it were not escaped."""
BLOCKS = ("# heading", "> quote", "1. item", "- item", "+ item", "=====", "    code")
"""Text that would start a block of its own at the beginning of a line."""
HOSTILE = f"{IMG} {SCRIPT} {MARKDOWN}"

THREAD = "https://www.reddit.com/r/dataengineering/comments/abc123/airflow_vs_dagster/"
OTHER = "https://www.reddit.com/r/apacheairflow/comments/def456/we_moved_to_dagster/"
COMMENT = THREAD + "c1x/"


def _result(summary: dict[str, Any], synthesis: dict[str, Any], **fields: Any) -> ResearchResult:
    return ResearchResult.model_validate(
        {
            "question": "Airflow vs Dagster for a small team?",
            "status": "ok",
            "engine": "local",
            "summary": {"status": "ok", "prompt_version": "v1", "engine": "local", **summary},
            "reddit_response": {
                "status": "ok",
                "engine": "local",
                "source": "archive",
                "synthesis": synthesis,
            },
            "timings_ms": {"total": 1200.0},
            "usage": {},
            **fields,
        }
    )


def comparison_result() -> ResearchResult:
    """Two options, counted verdicts, every section filled, a comment under its thread."""
    sources = [
        {"post_id": "abc123", "url": THREAD, "subreddit": "dataengineering",
         "title": "Airflow vs Dagster?"},
        {"post_id": "def456", "url": OTHER, "subreddit": "apacheairflow",
         "title": "We moved to Dagster"},
    ]  # fmt: skip
    synthesis = {
        "summary": "Airflow is boring in a good way [post:abc123]. Dagster is nicer to "
        "develop in [comment:c1x][post:def456].",
        "hidden_gems": [
            {"text": "dagster dev gives you the whole UI", "sources": [COMMENT], "score": 17}
        ],
        "minority_report": [{"text": "On-call got harder", "sources": [OTHER], "votes": 40}],
        "pivot_alerts": [
            {
                "from_option": "Airflow",
                "to_option": "Dagster",
                "text": "teams moving",
                "sources": [OTHER],
                "first_seen": datetime(2025, 2, 1, tzinfo=UTC),
                "last_seen": datetime(2026, 5, 1, tzinfo=UTC),
            }
        ],
        "comparison_table": [
            {
                "option": "airflow",
                "verdict": verdict(12, 4, 3),
                "pros": ["providers"],
                "cons": ["boring"],
                "sources": [THREAD, COMMENT],
            },
            {
                "option": "dagster",
                "verdict": verdict(8, 6, 1),
                "pros": ["local dev"],
                "cons": [],
                "sources": [OTHER],
            },
        ],
        "sources": [
            {"kind": "thread", "id": "abc123", "url": THREAD, "title": "Airflow vs Dagster?"},
            {"kind": "comment", "id": "c1x", "url": COMMENT, "title": "Airflow vs Dagster?"},
            {"kind": "thread", "id": "def456", "url": OTHER, "title": "We moved to Dagster"},
        ],
    }
    summary = {
        "summary": synthesis["summary"],
        "highlights": ["MWAA made Airflow easy [post:abc123]"],
        "cautions": ["Migrations take months [post:def456]."],
        "sources": sources,
    }
    return _result(summary, synthesis)


def hostile_result() -> ResearchResult:
    """Hostile text in every field a report renders, hostile URLs beside safe ones."""
    blocks = "\n".join(f"{block} [post:p1]" for block in BLOCKS)
    row = {"pros": [HOSTILE], "cons": [SCRIPT], "sources": [JS_URL, THREAD]}
    synthesis = {
        "summary": f"{HOSTILE} [post:p1] and {PAYLOADS['links']} [comment:c1x].\n{blocks}",
        "hidden_gems": [{"text": HOSTILE, "sources": [JS_URL, THREAD], "score": 9}],
        "minority_report": [{"text": SCRIPT, "sources": [DATA_URL], "votes": 4}],
        "pivot_alerts": [
            {"from_option": IMG, "to_option": SCRIPT, "text": MARKDOWN, "sources": [EVIL_URL]}
        ],
        "comparison_table": [
            {"option": f"{IMG} opt", "verdict": verdict(5, 3, 1), **row},
            {"option": f"| {SCRIPT}", "verdict": f"{MARKDOWN} (1+ / 0−)", **row},
            {"option": "# third", "verdict": verdict(2, 0, 2), **row},
        ],
        "sources": [
            {"kind": "thread", "id": "p2", "url": JS_URL, "title": f"thread {HOSTILE}"},
            {"kind": "comment", "id": "c1x", "url": COMMENT, "title": f"safe {SCRIPT}"},
            {"kind": "thread", "id": "p3", "url": DATA_URL, "title": "# data"},
            {"kind": "thread", "id": "p4", "url": EVIL_URL + ')"><img src=x>', "title": "evil"},
        ],
    }
    summary = {
        "summary": synthesis["summary"] + f" [post:zzz999] {PAYLOADS['fake_citations']}",
        "highlights": [PAYLOADS["links"] + " [post:p1]", *BLOCKS],
        "cautions": [f"{SCRIPT} [post:p1]", PAYLOADS["closing_fence"]],
        "sources": [{"post_id": "p1", "url": THREAD, "subreddit": IMG, "title": HOSTILE}],
        "status": "partial",
        "reason": f"reason {IMG} {MARKDOWN}",
    }
    result = _result(summary, synthesis, status="partial", question=f"{BLOCKS[0]} {HOSTILE}?")
    response = result.reddit_response
    assert response is not None
    response.source = f"{IMG} {MARKDOWN}"
    response.errors = [f"error {IMG}"]
    return result
