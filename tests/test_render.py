"""The terminal answer: one answer, one numbered source list, no internal id shown."""

from __future__ import annotations

from crowdsift.cli.render import render_research
from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.models import (
    HiddenGem,
    RedditResponse,
    SidecarSource,
    SidecarSynthesis,
)
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.models import Source, SummarizeResult

THREAD = "https://www.reddit.com/r/gadgets/comments/a1/plaud/"
COMMENT = f"{THREAD}k9x/"
VIDEO = "https://www.youtube.com/watch?v=dQw4w9W_-Xc"
PRODUCT = "https://www.amazon.com/dp/B0ABC12345"
TEXT = "Owners like it [post:a1][comment:k9x]. Reviews agree [post:yt-dQw4w9W_-Xc]."


def _result() -> ResearchResult:
    summary = SummarizeResult(
        status="ok",
        summary=TEXT,
        highlights=["The product page lists 30 h [post:amzn-B0ABC12345]."],
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
    synthesis = SidecarSynthesis(
        summary=TEXT,
        hidden_gems=[HiddenGem(text="Set gain to high", sources=[COMMENT], score=12)],
        sources=[
            SidecarSource(kind="thread", id="a1", url=THREAD, title="Plaud after a month"),
            SidecarSource(kind="comment", id="k9x", url=COMMENT, title="Plaud after a month"),
        ],
    )
    reddit = RedditResponse(status="ok", engine="local", source="archive", synthesis=synthesis)
    return ResearchResult(
        question="Is the Plaud Note worth it?", status="ok", engine="local", summary=summary,
        reddit_response=reddit, timings_ms={"total": 10.0}, usage=Usage(),
    )  # fmt: skip


def test_the_answer_is_shown_once_with_one_numbered_source_list() -> None:
    text = render_research(_result(), width=200)
    assert "Owners like it [1][4]. Reviews agree [2]." in text
    assert "The product page lists 30 h [3]." in text  # Amazon ids are numbered too
    assert "Set gain to high (12 points) [4]" in text
    assert text.count("Owners like it") == 1  # the sections do not repeat the summary
    assert text.count("Sources:") == 1
    for number, url in ((1, THREAD), (2, VIDEO), (3, PRODUCT), (4, COMMENT)):
        assert f"  [{number}] " in text and f"      {url}" in text
    assert "post:" not in text and "comment:" not in text  # no internal id reaches a person
