"""ground(): an engine's draft checked against the evidence, in code."""

from __future__ import annotations

from typing import Any

from crowdsift.core.sentences import truncate_at_sentence
from crowdsift.core.text import url_key
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.grounding import ground as ground_answer
from crowdsift.pipeline.synthesis.models import (
    AnswerDraft,
    SourceRef,
    SummarizeRequest,
    SummarizeResult,
)

CONFIG = SynthesisConfig()
BAT1 = "https://www.reddit.com/r/gadgets/comments/bat1/some_title/"
APP2 = "https://www.reddit.com/r/gadgets/comments/app2/some_title/"


def ground(
    draft: AnswerDraft, request: SummarizeRequest, config: SynthesisConfig, **kwargs: Any
) -> tuple[SummarizeResult, list[str]]:
    """The checked summary and the problems (the sections are tested in tests/pipeline/reddit)."""
    grounded = ground_answer(draft, request, config, **kwargs)
    return grounded.result, grounded.problems


def draft(**fields: Any) -> AnswerDraft:
    base: dict[str, Any] = {
        "summary": "The battery lasts about thirty hours. [post:bat1]",
        "sources": [{"post_id": "bat1", "url": BAT1}],
    }
    return AnswerDraft.model_validate({**base, **fields})


def test_a_grounded_draft_is_ok_and_sources_come_from_the_evidence(
    recorder_request: SummarizeRequest,
) -> None:
    result, problems = ground(
        draft(sources=[SourceRef(post_id="bat1", url=BAT1)]),
        recorder_request,
        CONFIG,
        engine="scripted",
    )
    assert problems == []
    assert result.status == "ok" and result.reason is None
    assert result.engine == "scripted" and result.prompt_version == "v1"
    [source] = result.sources
    assert (source.post_id, str(source.url), source.subreddit, source.title) == (
        "bat1",
        BAT1,
        "gadgets",
        "Plaud Note battery report after two months",
    )


def test_unknown_post_and_invented_url_are_dropped_and_partial(
    recorder_request: SummarizeRequest,
) -> None:
    result, problems = ground(
        draft(
            sources=[
                {"post_id": "bat1", "url": BAT1},
                {"post_id": "zzz9", "url": "https://www.reddit.com/r/x/comments/zzz9/made_up/"},
                {"post_id": "nope", "url": "https://evil.example/"},
            ]
        ),
        recorder_request,
        CONFIG,
    )
    assert [s.post_id for s in result.sources] == ["bat1"]
    assert result.status == "partial"
    assert len(problems) == 2
    assert result.reason is not None and "'zzz9'" in result.reason and "'nope'" in result.reason


def test_wrong_url_for_a_real_post_is_dropped(recorder_request: SummarizeRequest) -> None:
    result, problems = ground(
        draft(
            sources=[
                {"post_id": "bat1", "url": BAT1},
                {"post_id": "app2", "url": "https://evil.example/r/gadgets/comments/app2/"},
            ]
        ),
        recorder_request,
        CONFIG,
    )
    assert [s.post_id for s in result.sources] == ["bat1"]
    assert result.status == "partial"
    assert "app2" in problems[0] and "evil.example" in problems[0]


def test_a_real_post_cited_inline_keeps_its_evidence_url_not_the_wrong_one(
    recorder_request: SummarizeRequest,
) -> None:
    result, _ = ground(
        draft(
            summary="People switched back to phone apps. [post:app2]",
            sources=[{"post_id": "app2", "url": "https://evil.example/"}],
        ),
        recorder_request,
        CONFIG,
    )
    assert [(s.post_id, str(s.url)) for s in result.sources] == [("app2", APP2)]
    assert result.status == "partial"


def test_url_comparison_ignores_query_trailing_slash_and_www(
    recorder_request: SummarizeRequest,
) -> None:
    loose = "http://reddit.com/r/gadgets/comments/bat1/some_title?utm_source=share"
    result, problems = ground(
        draft(sources=[{"post_id": "bat1", "url": loose}]), recorder_request, CONFIG
    )
    assert problems == [] and str(result.sources[0].url) == BAT1
    assert url_key(loose) == url_key(BAT1)
    assert url_key("https://www.reddit.com/r/gadgets/comments/bat1/other/") != url_key(BAT1)


def test_duplicates_removed_and_inline_citations_added_without_making_it_partial(
    recorder_request: SummarizeRequest,
) -> None:
    result, problems = ground(
        draft(
            summary="Battery is fine. [post:bat1] The app costs extra. [post:app2]",
            highlights=["Rooms are no problem. [post:aud3]"],
            sources=[{"post_id": "bat1", "url": BAT1}, {"post_id": "bat1"}, {"post_id": "bat1"}],
        ),
        recorder_request,
        CONFIG,
    )
    assert problems == []
    assert result.status == "ok"
    assert [s.post_id for s in result.sources] == ["bat1", "app2", "aud3"]


def test_unknown_inline_citations_are_removed_from_all_texts(
    recorder_request: SummarizeRequest,
) -> None:
    result, problems = ground(
        draft(
            summary="Battery lasts long [post:bat1] [post:ghost1]. Apps cost money [post:ghost2].",
            highlights=["A made-up claim [post:ghost3]", "A list [post:bat1, post:ghost4]"],
            cautions=["Careful here. [post:ghost5]"],
        ),
        recorder_request,
        CONFIG,
    )
    assert (
        result.summary.marked() == "Battery lasts long [post:bat1]."
    )  # the other rested on a ghost
    assert [h.marked() for h in result.highlights] == ["A list [post:bat1]"]  # uncited: dropped
    assert result.cautions == []
    assert "ghost" not in result.model_dump_json(include={"summary", "highlights", "cautions"})
    assert [s.post_id for s in result.sources] == ["bat1"]
    assert result.status == "partial"
    assert len(problems) == 8  # five unknown citations, two claims left uncited, one sentence


def test_links_in_text_must_be_evidence_permalinks(recorder_request: SummarizeRequest) -> None:
    result, problems = ground(
        draft(summary=f"See {BAT1} and https://evil.example/buy?now=1. [post:bat1]"),
        recorder_request,
        CONFIG,
    )
    assert (
        result.summary.marked() == "See [post:bat1] and. [post:bat1]"
    )  # an evidence link: a marker
    assert "evil.example" in problems[0]
    assert result.status == "partial"


def test_summary_over_budget_is_cut_at_a_sentence_boundary(
    recorder_request: SummarizeRequest,
) -> None:
    long_summary = " ".join(f"Sentence number {n} says something. [post:bat1]" for n in range(10))
    config = SynthesisConfig(summary_char_budget=120)
    result, problems = ground(draft(summary=long_summary), recorder_request, config)
    assert len(result.summary.marked()) <= 120
    assert result.summary.marked().endswith("says something. [post:bat1]")
    assert long_summary.startswith(result.summary.marked())
    assert result.status == "partial" and "budget" in problems[0]


def test_highlights_and_cautions_are_capped(recorder_request: SummarizeRequest) -> None:
    config = SynthesisConfig(max_highlights=2, max_cautions=1)
    result, problems = ground(
        draft(
            highlights=[f"Point {n}. [post:bat1]" for n in range(4)],
            cautions=[f"Risk {n}. [post:app2]" for n in range(3)],
        ),
        recorder_request,
        config,
    )
    assert [h.marked() for h in result.highlights] == [
        "Point 0. [post:bat1]",
        "Point 1. [post:bat1]",
    ]
    assert [c.marked() for c in result.cautions] == ["Risk 0. [post:app2]"]
    assert result.status == "partial" and len(problems) == 2


def test_a_draft_citing_nothing_is_partial(recorder_request: SummarizeRequest) -> None:
    result, problems = ground(AnswerDraft(summary="Everyone loves it."), recorder_request, CONFIG)
    assert result.sources == []
    assert result.status == "partial" and "cites none" in problems[0]


def test_truncate_at_sentence_falls_back_to_words() -> None:
    assert truncate_at_sentence("One. Two.", 100) == "One. Two."
    assert truncate_at_sentence("First one here. Second one is longer.", 20) == "First one here."
    assert truncate_at_sentence("Claim [post:a] other claim [post:b]", 20) == "Claim [post:a]"
    assert truncate_at_sentence("no boundary anywhere in this text", 15) == "no boundary…"


def test_off_subject_needs_every_cited_thread_judged_and_none_on_the_question() -> None:
    from crowdsift.pipeline.synthesis.grounding import ON_SUBJECT, off_subject
    from crowdsift.pipeline.synthesis.models import Source

    def source(post_id: str) -> Source:
        url = f"https://www.reddit.com/r/diy/comments/{post_id}/t/"
        return Source(post_id=post_id, url=url, subreddit="diy", title=f"thread {post_id}")

    cited = [source("a"), source("b")]
    low = {"a": ON_SUBJECT - 0.1, "b": ON_SUBJECT - 0.05}
    reason = off_subject(cited, low)
    assert reason is not None and "“thread b”" in reason  # the closest is named
    assert off_subject(cited, {**low, "b": ON_SUBJECT}) is None  # one about it is enough
    assert off_subject(cited, {"a": 0.1}) is None  # b was never judged: nothing to say
    assert off_subject([], {}) is None
