"""The eval checks: invalid sources, broken budgets and unsupported highlights are caught."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

from crowdsift.core.models import Comment, FetchResult, Post
from crowdsift.pipeline.evaluation import EvalCase, check, load_cases, preview_text
from crowdsift.pipeline.synthesis.config import SummarizerConfig
from crowdsift.pipeline.synthesis.models import Source, SummarizeResult

NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://www.reddit.com/r/gadgets/comments/{}/t/"


def evidence() -> FetchResult:
    post = Post(
        id="a1", title="Plaud battery", selftext="The battery lasts thirty hours of recording.",
        post_karma=1, relevance_score=1, url=URL.format("a1"), fetched_at=NOW,
        source="archive", subreddit="gadgets",
    )  # fmt: skip
    return FetchResult(
        query="q", plan_id=uuid4(), search_terms=["x"], subreddits=["gadgets"],
        fetched_at=NOW, posts=[post],
    )  # fmt: skip


def summary(**fields: object) -> SummarizeResult:
    base: dict[str, object] = {
        "status": "ok",
        "summary": "Battery lasts long. [post:a1]",
        "highlights": ["The battery lasts thirty hours [post:a1]", "Cheap and great [post:a1]"],
        "sources": [Source(post_id="a1", url=URL.format("a1"), subreddit="gadgets", title="t")],
        "prompt_version": "v1",
        "engine": "local",
    }
    base.update(fields)
    return SummarizeResult.model_validate(base)


CASE = EvalCase(id="c1", question="q")


def test_a_grounded_answer_passes_and_support_is_counted() -> None:
    report = check(CASE, evidence(), summary(), SummarizerConfig())
    assert report.passed and report.sources_valid and report.budget_respected
    assert (report.highlights, report.highlights_supported) == (2, 1)


def test_unknown_sources_citations_and_budgets_fail() -> None:
    foreign = Source(post_id="zz", url=URL.format("zz"), subreddit="gadgets", title="t")
    assert not check(CASE, evidence(), summary(sources=[foreign]), SummarizerConfig()).passed
    cited = summary(summary="Invented. [post:zz]")
    assert not check(CASE, evidence(), cited, SummarizerConfig()).sources_valid
    long = summary(summary="x" * 200)
    assert not check(CASE, evidence(), long, SummarizerConfig(summary_char_budget=100)).passed
    assert not check(CASE, evidence(), summary(status="error"), SummarizerConfig()).passed


def test_the_shipped_cases_load(tmp_path: Path) -> None:
    cases = load_cases(Path("data/eval/cases.json"))
    assert len(cases) >= 4 and len({c.id for c in cases}) == len(cases)
    previews = sorted(p.stem for p in Path("data/eval/previews").glob("*.json"))
    assert previews == sorted(c.id for c in cases)
    saved = json.loads(Path(f"data/eval/previews/{cases[0].id}.json").read_text())
    FetchResult.model_validate(saved["fetch_result"])
    SummarizeResult.model_validate(saved["summarize_result"])


def test_a_video_citation_and_an_unknown_dashed_id_are_checked_and_numbered() -> None:
    video = Source(
        post_id="yt-dQw4w9W_-Xc", kind="youtube", url="https://www.youtube.com/watch?v=dQw4w9W_-Xc",
        subreddit="GadgetChannel", title="Review",
    )  # fmt: skip
    answer = summary(
        summary="Battery lasts long [post:a1]. The review agrees [post:yt-dQw4w9W_-Xc].",
        sources=[*summary().sources, video],
    )
    # the evidence of a case is Reddit only: a video id is not in it (the old regex never saw it)
    assert not check(CASE, evidence(), answer, SummarizerConfig()).sources_valid
    text = preview_text(answer)
    assert text.startswith("Battery lasts long [1]. The review agrees [2].")
    assert (
        "[2] YouTube · GadgetChannel — Review https://www.youtube.com/watch?v=dQw4w9W_-Xc" in text
    )
    assert "post:" not in text


def test_a_comment_citation_is_valid_evidence_and_supports_its_highlight() -> None:
    fetched = evidence()
    post = fetched.posts[0]
    comment = Comment(
        comment_id="k-1", post_id="a1", body="Mine died after a week of recording meetings.",
        comment_karma=3, source="archive", fetched_at=NOW,
    )  # fmt: skip
    fetched = fetched.model_copy(
        update={"posts": [post.model_copy(update={"comments": [comment]})]}
    )
    answer = summary(highlights=["Mine died after a week of recording [comment:k-1]"])
    report = check(CASE, fetched, answer, SummarizerConfig())
    assert report.sources_valid and report.highlights_supported == 1
