"""``--format md``: the whole answer, ``[n]`` links that land in the numbered source list (the
terminal's numbers), and strangers' text that stays text in a CommonMark/GitHub renderer."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from crowdsift.cli.render import render_research
from crowdsift.pipeline.report.markdown import escape, render_markdown
from crowdsift.pipeline.synthesis.display import compact_permalink
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

CITE = re.compile(r"\[\\\[(\d+)\\\]\]\(#source-(\d+)\)")
ANCHOR = re.compile(r'<a id="source-(\d+)"></a>\\\[(\d+)\\\] ')


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(markdown: str) -> Tags:
    """What a renderer that lets raw HTML through makes of ``markdown``: the strictest test."""
    html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    parser = Tags()
    parser.feed(html.render(markdown))
    return parser


def test_the_report_has_every_part_in_order_and_a_footer() -> None:
    text = render_markdown(comparison_result())
    headings = re.findall(r"^#{1,2} (.+)$", text, re.MULTILINE)
    assert headings == [
        "Airflow vs Dagster for a small team?",
        "Answer",
        "Highlights",
        "Cautions",
        "Hidden gems",
        "Minority report",
        "Pivot alerts",
        "Comparison",
        "Sources",
    ]
    assert "| airflow | 12 mentions: mixed (4+ / 3−) | providers | boring |" in text
    assert text.rstrip().splitlines()[-1] == (
        "status: ok · engine: local (extractive quotes, not an LLM) · source: archive"
    )
    tags = [tag for tag, _ in rendered(text).tags]
    assert tags.count("table") == 1 and tags.count("tr") == 3  # the header and two options


def test_every_citation_links_to_its_entry_in_one_numbered_list() -> None:
    text = render_markdown(comparison_result())
    body, sources = text.split("## Sources")
    cited = {int(a) for a, b in CITE.findall(body) if a == b}
    assert cited and all(a == b for a, b in CITE.findall(body))  # [n] leads to #source-n
    anchors = [(int(a), int(b)) for a, b in ANCHOR.findall(sources)]
    assert all(a == b for a, b in anchors)
    numbers = [a for a, _ in anchors]
    assert numbers == list(range(1, len(numbers) + 1))  # each source once, in order
    assert cited <= set(numbers)
    assert "<a id" not in body  # anchors only in the list
    thread, comment = sources.splitlines()[2:4]  # a comment sits under its thread
    assert thread.startswith("- ") and f"(<{THREAD}>)" in thread
    assert comment.startswith("  - ") and f"(<{COMMENT}>)" in comment


def test_numbers_are_those_of_the_terminal_full_answer() -> None:
    result = comparison_result()
    terminal: dict[str, int] = {}
    lines = render_research(result, full=True).split("Sources:")[1].splitlines()
    for index, line in enumerate(lines):
        comment = re.match(r"\s+\[(\d+)\] comment (\S+)$", line)
        thread = re.match(r"  \[(\d+)\] ", line)
        if comment:
            terminal[comment.group(2)] = int(comment.group(1))
        elif thread:
            terminal[lines[index + 1].strip()] = int(thread.group(1))
    sources = render_markdown(result).split("## Sources")[1]
    ours = {
        compact_permalink(url): int(number)
        for number, url in re.findall(r'id="source-(\d+)".*?\(<(https://[^>]+)>\)', sources)
    }
    assert ours == terminal and len(ours) == 3


def test_hostile_text_stays_text_and_the_only_links_are_the_reports() -> None:
    text = render_markdown(hostile_result())
    page = rendered(text)
    allowed = {"h1", "h2", "p", "ul", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "hr"}
    assert {tag for tag, _ in page.tags} <= allowed | {"blockquote", "strong"}
    for tag, attrs in page.tags:
        if tag != "a":
            assert attrs == {} or tag == "th" or tag == "td", (tag, attrs)
            continue
        href, anchor = attrs.get("href"), attrs.get("id")
        assert (href is None and re.fullmatch(r"source-\d+", anchor or "")) or (
            anchor is None
            and href is not None
            and (re.fullmatch(r"#source-\d+", href) or href in (THREAD, COMMENT))
        ), attrs
    assert [tag for tag, _ in page.tags].count("h1") == 1
    words = "".join(page.text)
    for literal in (IMG, SCRIPT, "**bold**", "![pixel](https://evil.example", *BLOCKS[:5]):
        assert literal in words, literal
    assert "javascript:" not in text.split("## Sources")[1].replace("\\", "")  # no link, no text


def test_no_autolink_survives_outside_the_reports_own_destinations() -> None:
    text = render_markdown(hostile_result())
    prose = re.sub(r"\]\(<https://www\.reddit\.com/[^>]*>\)", "]", text)
    assert not re.search(r"(?<!\\)://", prose)
    assert not re.search(r"(?i)www(?!\\)\.", prose)
    assert not re.search(r"(?<!\\)@", prose)


@pytest.mark.parametrize("block", BLOCKS)
def test_a_line_start_never_makes_a_block(block: str) -> None:
    line = escape(block, block=True)
    page = rendered(line)
    assert [tag for tag, _ in page.tags] == ["p"], (block, line)
    assert "".join(page.text).strip() == " ".join(block.split())


def test_markdown_punctuation_is_escaped_inline() -> None:
    page = rendered(escape(MARKDOWN))
    assert [tag for tag, _ in page.tags] == ["p"]
    assert "".join(page.text).strip() == MARKDOWN


def test_sample_data_is_said_at_the_top_and_in_the_footer() -> None:
    result = comparison_result().model_copy(update={"sample_data": True})
    text = render_markdown(result)
    assert "> **SAMPLE DATA:**" in text
    assert "source: archive (SAMPLE data)" in text
