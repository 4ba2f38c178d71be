"""The terminal answer: one answer, short by default, one numbered source list, no internal id
shown; ``--full`` prints everything."""

from __future__ import annotations

import asyncio
import re

import pytest

from crowdsift.cli.render import SHORT_LINES, WIDTH, render_research
from crowdsift.core.config import Settings
from crowdsift.engines.base import Usage
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, ResearchResult
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.display import source_list
from crowdsift.pipeline.synthesis.models import (
    CitedSource,
    ComparisonRow,
    HiddenGem,
    MinorityReport,
    RedditSynthesis,
    Source,
    SummarizeResult,
)
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.experts.models import ExpertResponse, ExpertSource, Relevance

THREAD = "https://www.reddit.com/r/gadgets/comments/a1/plaud_after_a_month/"
COMMENT = f"{THREAD}k9x/"
OTHER = "https://www.reddit.com/r/gadgets/comments/b2/other_thread/"
OTHER_COMMENT = f"{OTHER}c7/"
VIDEO = "https://www.youtube.com/watch?v=dQw4w9W_-Xc"
PRODUCT = "https://www.amazon.com/dp/B0ABC12345"
TEXT = "Owners like it [post:a1][comment:k9x]. Reviews agree [post:yt-dQw4w9W_-Xc]."
CITATION = re.compile(r"\[[^\[\]\n]*\]")


def _result(**synthesis_parts: object) -> ResearchResult:
    summary = SummarizeResult(
        status="ok",
        summary=TEXT,
        highlights=["The product page lists 30 h [post:amzn-B0ABC12345]."],
        cautions=["The switch is easy to bump [comment:c7]."],
        sources=[
            Source(post_id="a1", url=THREAD, subreddit="gadgets", title="Plaud after a month"),
            Source(post_id="yt-dQw4w9W_-Xc", kind="youtube", url=VIDEO, subreddit="Gadget TV",
                   title="Review"),
            Source(post_id="amzn-B0ABC12345", kind="amazon", url=PRODUCT, subreddit="amazon.com",
                   title="Plaud Note"),
        ],
        prompt_version="v1",
        engine="local",
    )  # fmt: skip
    synthesis = RedditSynthesis(
        summary=TEXT,
        sources=[
            CitedSource(kind="thread", id="a1", url=THREAD, title="Plaud after a month"),
            CitedSource(kind="comment", id="k9x", url=COMMENT, title="Plaud after a month"),
            CitedSource(kind="comment", id="c7", url=OTHER_COMMENT, title="Other thread"),
        ],
        **synthesis_parts,  # type: ignore[arg-type]
    )
    reddit = RedditResponse(status="ok", engine="local", source="archive", synthesis=synthesis)
    return ResearchResult(
        question="Is the Plaud Note worth it?", status="ok", engine="local", summary=summary,
        reddit_response=reddit, timings_ms={"total": 10.0}, usage=Usage(),
    )  # fmt: skip


def _gems() -> dict[str, object]:
    return {
        "hidden_gems": [HiddenGem(text="Set gain to high", sources=[COMMENT], score=12)],
        "minority_report": [MinorityReport(text="The phone is enough", sources=[THREAD], votes=3)],
        "comparison_table": [
            ComparisonRow(option="plaud", verdict="mostly positive", pros=["battery"],
                          sources=[COMMENT])
        ],
    }  # fmt: skip


# --- one list, [n] only ---------------------------------------------------------------------


def test_a_count_of_one_reads_as_one_point_and_one_vote() -> None:
    parts = _gems()
    parts["hidden_gems"] = [HiddenGem(text="Set gain to high", sources=[COMMENT], score=1)]
    parts["minority_report"] = [
        MinorityReport(text="The phone is enough", sources=[THREAD], votes=1)
    ]
    text = render_research(_result(**parts), full=True)
    assert "Set gain to high (1 point) [" in text and "(1 points)" not in text
    assert "The phone is enough (1 vote) [" in text and "(1 votes)" not in text


def test_a_comment_is_listed_under_its_thread_and_every_source_once() -> None:
    text = render_research(_result(**_gems()), full=True)
    assert "Owners like it [1][2]. Reviews agree [3]." in text  # numbered in reading order
    assert "The product page lists 30 h [4]." in text  # Amazon ids are numbered too
    assert "The switch is easy to bump [5]." in text
    assert "Set gain to high (12 points) [2]" in text  # a section claim cites its permalink
    assert text.count("Sources:") == 1
    assert text.count("Plaud after a month") == 1  # the comment does not repeat its thread
    assert "  [1] r/gadgets — Plaud after a month\n" in text
    assert f"      {THREAD}\n      [2] comment " in text
    assert "  [3] YouTube · Gadget TV — Review" in text and f"      {VIDEO}" in text
    assert "  [4] Amazon · amazon.com — Plaud Note" in text and f"      {PRODUCT}" in text
    assert "  r/gadgets — Other thread\n      [5] comment " in text  # its thread is not a source
    assert "post:" not in text and "comment:" not in text  # no internal id reaches a person


def test_the_short_list_holds_only_what_the_short_answer_cites() -> None:
    result = _result()
    assert result.reddit_response is not None
    listing = source_list(
        result.summary, result.reddit_response.synthesis, ["comment:k9x"], complete=False
    )
    assert [(g.number, g.title, [c.number for c in g.comments]) for g in listing.groups] == [
        (None, "Plaud after a month", [1])
    ]
    assert listing.available == 5 and listing.count == 1  # the thread is named, not counted


def test_opening_sentences_keep_the_citations_that_follow_them() -> None:
    text = "It is $159, e.g. a lot. [post:a] The app helps. [comment:b] Fine. Last one."
    opening, count = CitedText.decode(text).opening(2)
    assert (opening.marked(), count) == ("It is $159, e.g. a lot. [post:a] The app helps. "
                                         "[comment:b]", 4)  # fmt: skip


# --- order and the empty-section rule ---------------------------------------------------------


def test_parts_come_in_order_answer_takeaways_risks_sections_sources_footer() -> None:
    text = render_research(_result(**_gems()))
    marks = ["Owners like it", "Highlights:", "Cautions:", "Hidden gems:", "Minority report:",
             "Comparison:", "Sources:", "engine: local"]  # fmt: skip
    positions = [text.index(mark) for mark in marks]
    assert positions == sorted(positions)
    assert text.index("engine: local") > text.rindex("[4]")


def test_sections_without_content_are_not_printed() -> None:
    text = render_research(_result(), full=True)
    for title in ("Hidden gems", "Minority report", "Pivot alerts", "Comparison"):
        assert title not in text
    shown = render_research(_result(hidden_gems=_gems()["hidden_gems"]), full=True)
    assert "Hidden gems:" in shown and "Minority report" not in shown


def test_a_long_answer_keeps_four_cut_takeaways_and_the_direct_answer_first() -> None:
    result = _result(**_gems())
    assert result.summary is not None
    many = [CitedText.decode(f"Takeaway number {i} {'goes on and on ' * 30}"
                             "[comment:k9x][post:a1][comment:c7].") for i in range(30)]  # fmt: skip
    longer = CitedText.decode(TEXT + " More. Even more.")
    summary = result.summary.model_copy(
        update={"highlights": many, "cautions": many, "summary": longer}
    )
    text = render_research(result.model_copy(update={"summary": summary}))
    lines = text.splitlines()
    assert len(lines) <= SHORT_LINES and all(len(line) <= WIDTH for line in lines)
    assert lines[0].startswith("Owners like it [1][2].")  # the direct answer first, whole
    assert "Highlights:" in text and text.count("Takeaway number") >= 2
    bullets = text.split("Highlights:")[1].split("\n\n")[0].split("  • ")[1:]
    assert 1 <= len(bullets) <= 4  # at most four takeaways …
    assert all(
        b.count("\n") <= 3 and "… [1][2]." in b for b in bullets
    )  # … of ≤ 3 lines, 2 of 3 cites
    assert "(--full shows everything:" in text and "more points" in text


def test_a_short_answer_keeps_the_first_two_citations_of_a_sentence() -> None:
    text = CitedText.decode("A. [comment:a][comment:b] [post:c] B [post:d, comment:e, f].")
    assert text.thin(2).marked() == ("A. [comment:a][comment:b] B [post:d][comment:e].")


# --- the footer ------------------------------------------------------------------------------


def test_the_footer_shows_the_overall_status_and_its_reason() -> None:
    result = _result()
    assert result.summary is not None
    partial = result.model_copy(
        update={
            "status": "partial",
            "summary": result.summary.model_copy(update={"reason": "dropped post:zz9"}),
        }
    )
    footer = render_research(partial).splitlines()[-2:]
    assert footer[0].startswith("engine: local (extractive") and "not an LLM" in footer[0]
    assert "source: archive" in footer[0] and "0.0 s" in footer[0]
    assert footer[1].startswith("status: partial (dropped post:zz9)")
    assert "status ok" not in render_research(partial, full=True)  # the Reddit part's own "ok"
    assert render_research(result).splitlines()[-1] == "status: ok"


def test_an_abstention_is_not_explained_twice_in_the_footer() -> None:
    """The answer says why it abstained; the one-line footer points there instead of repeating
    the reason cut short, and ``--full`` keeps the whole reason. Other reasons still show."""
    result = _result()
    assert result.summary is not None
    why = "abstained: the search found no post that passed the filters and the relevance check"
    abstained = result.model_copy(
        update={
            "status": "partial",
            "summary": result.summary.model_copy(update={"reason": why, "abstained": True}),
        }
    )
    assert render_research(abstained).splitlines()[-1] == (
        "status: partial (abstained: the answer says why)"
    )
    assert why in render_research(abstained, full=True).replace("\n", " ")
    spent = abstained.usage.model_copy(update={"budget_exhausted": True, "budget_usd": 0.05})
    also = abstained.model_copy(update={"usage": spent})
    status = next(line for line in render_research(also).splitlines() if line.startswith("status"))
    assert status.startswith("status: partial (abstained: the search found")  # every reason


def test_a_long_status_wraps_at_word_ends_and_is_never_cut() -> None:
    """The footer once read "passed the… ·": a reason cut to fit one line."""
    result = _result()
    assert result.summary is not None
    why = (
        "the relevance check passed the threads about the Plaud Note but not the ones about "
        "phone recording apps, so the comparison rests on one side of it"
    )
    partial = result.model_copy(
        update={"status": "partial", "summary": result.summary.model_copy(update={"reason": why})}
    )
    lines = render_research(partial, width=80).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("status: "))
    status = lines[start:]
    assert len(status) > 1 and all(len(line) <= 80 for line in status)
    assert "…" not in "".join(status)
    assert f"status: partial ({why})" in " ".join(status)


def test_sample_data_is_said_first_and_in_the_footer() -> None:
    text = render_research(_result().model_copy(update={"sample_data": True}))
    assert text.startswith("SAMPLE DATA: this answer comes from the bundled sample archive")
    assert "source: archive (SAMPLE data) · 0.0 s" in text
    assert "SAMPLE" not in render_research(_result())


# --- experts ---------------------------------------------------------------------------------


def test_each_expert_block_numbers_its_own_sources() -> None:
    when = "2026-01-02T00:00:00+00:00"
    expert = ExpertResponse(
        expert_id="desk",
        engine="local",
        answer="- Buy it [post:13]\n- Or not [post:50][post:13]",
        main_sources=[
            ExpertSource(post_id=50, url="https://t.me/desk/50", date=when,  # type: ignore[arg-type]
                         relevance=Relevance.HIGH),
            ExpertSource(post_id=13, url="https://t.me/desk/13", date=when,  # type: ignore[arg-type]
                         relevance=Relevance.MEDIUM),
        ],
    )  # fmt: skip
    result = _result().model_copy(update={"expert_responses": [expert]})
    text = render_research(result)
    block = text[text.index("== Expert desk") :]
    assert "- Buy it [1]" in block and "- Or not [1][2]" in block
    assert "  [1] 2026-01-02 MEDIUM  https://t.me/desk/13" in block
    assert "  [2] 2026-01-02 HIGH    https://t.me/desk/50" in block
    assert "post:" not in text


# --- a real run ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_result(tmp_path_factory: pytest.TempPathFactory) -> ResearchResult:
    archive = ensure_demo_archive(tmp_path_factory.mktemp("demo"))
    source = ArchiveSource(archive)
    deps = AskDeps(
        settings=Settings(),
        engine=LocalEngine(embedder=HashingEmbedder()),
        source=source,
        candidates=subreddit_profiles(archive),
    )
    question = "Is the Plaud Note worth it compared to a phone recording app?"
    try:
        return asyncio.run(run_research(question, deps)).result
    finally:
        source.close()


def _is_lone_url(line: str) -> bool:
    return re.fullmatch(r"\s*https?://\S+", line) is not None


def test_a_real_local_answer_fits_a_terminal_screen(demo_result: ResearchResult) -> None:
    text = render_research(demo_result)
    lines = text.splitlines()
    assert len(lines) <= SHORT_LINES
    assert all(len(line) <= WIDTH or _is_lone_url(line) for line in lines), max(lines, key=len)
    summary = demo_result.summary
    assert summary is not None
    first = summary.summary.opening(1)[0].marked().split("[")[0].split()[:6]
    assert lines[0].split()[:6] == first  # the direct answer comes first
    assert text.count("Sources:") == 1
    assert "post:" not in text and "comment:" not in text
    cited = set(CITATION.findall(text))
    assert cited and all(re.fullmatch(r"\[\d+\]", c) for c in cited), cited  # [n] only
    listed = re.findall(r"^\s+\[(\d+)\] ", text, re.MULTILINE)
    assert listed == [str(n) for n in range(1, len(listed) + 1)]  # each source once, in order
    assert {c.strip("[]") for c in cited} <= set(listed)  # every [n] leads into the list
    assert "Highlights:" in text and text.index("Highlights:") < text.index("Sources:")
    assert lines[-2].startswith("engine: local (extractive")
    assert lines[-1].startswith(f"status: {demo_result.status}")
    assert "(--full shows everything" in text


def test_full_shows_more_of_the_same_answer(demo_result: ResearchResult) -> None:
    short, full = render_research(demo_result), render_research(demo_result, full=True)
    assert len(full.splitlines()) > len(short.splitlines())
    assert len(re.findall(r"^\s+\[\d+\] ", full, re.MULTILINE)) > len(
        re.findall(r"^\s+\[\d+\] ", short, re.MULTILINE)
    )
    assert full.count("Sources:") == 1 and "post:" not in full and "comment:" not in full
    assert "(--full shows everything" not in full
    summary = demo_result.summary
    assert summary is not None
    for highlight in summary.highlights:  # every takeaway, whole
        assert highlight.marked().split("[")[0].strip()[:60] in " ".join(full.split())


def test_the_direct_answer_keeps_its_sentences_while_side_sections_shrink() -> None:
    long = "goes on and on " * 30
    gem = HiddenGem(text=f"Set gain to high, {long}", sources=[COMMENT], score=12)
    parts = {**_gems(), "hidden_gems": [gem, gem, gem]}
    result = _result(**parts)
    assert result.summary is not None
    answer = CitedText.decode(" ".join(
        f"Point {n} {'is said at some length here ' * 22}[comment:k9x][post:a1]." for n in range(4)
    ))  # fmt: skip
    items = [
        CitedText.decode(f"Takeaway {i} {long}[comment:k9x][post:a1][comment:c7].")
        for i in range(4)
    ]
    summary = result.summary.model_copy(
        update={"summary": answer, "highlights": items, "cautions": items}
    )
    text = render_research(result.model_copy(update={"summary": summary}))
    assert len(text.splitlines()) <= SHORT_LINES
    assert all(f"Point {n} " in text for n in range(4))  # the direct answer whole …
    assert "Hidden gems:" not in text  # … while a gem had to go
