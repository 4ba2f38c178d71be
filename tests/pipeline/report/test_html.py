"""``--format html``: one self-contained page — escaped evidence, no script, nothing fetched —
and, for "X vs Y", an inline SVG chart of the stance counts per option."""

from __future__ import annotations

import re

from crowdsift.pipeline.report.content import build_report
from crowdsift.pipeline.report.html import CSP, render_html
from tests.pipeline.report.results import (
    BLOCKS,
    COMMENT,
    IMG,
    MARKDOWN,
    SCRIPT,
    THREAD,
    comparison_result,
    hostile_result,
)
from tests.pipeline.report.test_markdown import Tags

FETCHING_ATTRIBUTES = {"src", "srcset", "action", "formaction", "poster", "data", "background"}


def parsed(html: str) -> Tags:
    page = Tags()
    page.feed(html)
    return page


def test_hostile_text_is_escaped_everywhere_and_only_safe_permalinks_are_links() -> None:
    html = render_html(hostile_result())
    page = parsed(html)
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "img", "iframe", "object", "embed", "link", "base", "form"}
    for tag, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not FETCHING_ATTRIBUTES & set(attrs), (tag, attrs)
        if tag == "a":
            href = attrs.get("href") or ""
            assert re.fullmatch(r"#source-\d+", href) or href in (THREAD, COMMENT), href
    text = "".join(page.text)
    for literal in (IMG, SCRIPT, MARKDOWN, *BLOCKS):
        assert " ".join(literal.split()) in text, literal
    assert "evil.example" not in " ".join(str(a.get("href")) for _, a in page.tags)


def test_the_page_can_fetch_nothing() -> None:
    html = render_html(comparison_result())
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in html
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    page = parsed(html)
    assert [tag for tag, _ in page.tags].count("style") == 1
    assert not {"script", "img", "link", "iframe"} & {tag for tag, _ in page.tags}
    assert "url(" not in html and "@import" not in html
    outside = re.findall(r"https?://[^\s\"'<>]+", html)
    assert outside and all(url.startswith("https://www.reddit.com/r/") for url in outside)


def test_every_citation_leads_to_an_entry_of_the_source_list() -> None:
    page = parsed(render_html(comparison_result()))
    ids = [a["id"] for tag, a in page.tags if tag == "li" and a.get("id")]
    assert ids == ["source-1", "source-2", "source-3"]
    cites = {a["href"] for tag, a in page.tags if tag == "a" and str(a.get("href")).startswith("#")}
    assert cites and {href.lstrip("#") for href in cites if href} <= set(ids)


def test_a_comparison_of_two_counted_options_gets_a_chart_with_one_bar_each() -> None:
    html = render_html(comparison_result())
    assert html.count("<svg") == 1
    chart = html[html.index("<svg") : html.index("</svg>")]
    assert re.findall(r'data-option="([^"]+)"', chart) == ["airflow", "dagster"]
    widths = {
        (option, kind): float(width)
        for option, body in re.findall(r'data-option="([^"]+)"(.*?)</g>', chart)
        for kind, width in re.findall(
            r'class="(positive|neutral|negative)"[^>]*width="([\d.]+)"', body
        )
    }
    # airflow: 12 mentions, 4+ / 3−; dagster: 8 mentions, 6+ / 1−; the longest bar is 300 px
    assert widths[("airflow", "positive")] == 100.0 and widths[("airflow", "negative")] == 75.0
    assert widths[("dagster", "positive")] == 150.0 and widths[("dagster", "neutral")] == 25.0
    assert "4+ / 3− of 12" in chart and "6+ / 1− of 8" in chart


def test_no_chart_without_two_options_that_have_counts() -> None:
    one = comparison_result()
    synthesis = one.reddit_response.synthesis  # type: ignore[union-attr]
    assert synthesis is not None
    synthesis.comparison_table = synthesis.comparison_table[:1]
    assert "<svg" not in render_html(one)
    worded = comparison_result()
    table = worded.reddit_response.synthesis.comparison_table  # type: ignore[union-attr]
    table[1].verdict = "the community's favourite"
    assert build_report(worded).chart_rows == ()
    assert "<svg" not in render_html(worded) and "the community&#x27;s favourite" in render_html(
        worded
    )


def test_the_hostile_chart_labels_are_escaped() -> None:
    html = render_html(hostile_result())
    chart = html[html.index("<svg") : html.index("</svg>")]
    assert "<img" not in chart and "<script" not in chart
    assert "&lt;img src=x onerror=alert(1)&gt; opt" in chart
