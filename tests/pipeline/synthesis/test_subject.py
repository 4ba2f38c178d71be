"""The subject matcher: pure cases of what counts as evidence discussing a question's subject."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crowdsift.pipeline.reddit.models import (
    DrilledThread,
    QueryAnalysis,
    RankedPost,
    Subject,
    ThreadComment,
)
from crowdsift.pipeline.synthesis.subject import (
    abstention_sentence,
    judge_subject,
    looked_in,
    mentions,
    question_subject,
    tokens,
)
from crowdsift.sources.models import EvidenceItem
from crowdsift.testing.factories import make_post

SONY = "Is the Sony WH-1000XM6 worth it?"


def _discussed(question: str, *texts: str, analysis: QueryAnalysis | None = None) -> bool:
    return judge_subject(question, analysis, [_thread(*texts)]).discussed


def _thread(title: str, body: str = "", *comments: str, sub: str = "gadgets") -> DrilledThread:
    post = make_post("p1", title, body, subreddit=sub)
    rank = RankedPost(
        post_id="p1", url=post.url, title=title, subreddit=sub, post_karma=1, num_comments=0,
        strategies=["targeted"], relevance=0.5, engagement=0.5, final_score=0.5,
    )  # fmt: skip
    return DrilledThread(
        post=post, rank=rank, comments=[_comment(n, b, sub) for n, b in enumerate(comments)]
    )


def _comment(n: int, body: str, sub: str) -> ThreadComment:
    return ThreadComment(
        comment_id=f"c{n}", post_id="p1", parent_id="t3_p1", depth=0, body=body, score=1,
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        permalink=f"https://www.reddit.com/r/{sub}/comments/p1/t/c{n}/",
    )  # fmt: skip


def _analysis(question: str, **fields: object) -> QueryAnalysis:
    values: dict[str, object] = {
        "question": question, "language": "en", "english_question": question,
        "intent": "general", "ai_mode": "none", "temporal": "evergreen", "time_filter": "all",
        "keywords": ["x"], "subreddits": ["gadgets", "productivity"], "compared": [],
    }  # fmt: skip
    values.update(fields)
    return QueryAnalysis.model_validate(values)


@pytest.mark.parametrize(
    "text",
    ["the WH-1000XM6 is great", "wh1000xm6 owners?", "Sony WH 1000 XM6 review", "WH-1000 XM6s"],
)
def test_a_model_number_matches_with_any_hyphens_spaces_case_or_plural(text: str) -> None:
    assert _discussed(SONY, text)


@pytest.mark.parametrize(
    "text",
    [
        "A basic Sony voice recorder with a decent mic plus local Whisper",  # the brand only
        "I moved from the WH-1000XM5 to Bose",  # another model
        "wh-1000xm60 is a typo",  # a longer token is another name
    ],
)
def test_the_brand_or_another_model_does_not_discuss_a_model(text: str) -> None:
    assert not _discussed(SONY, text)


def test_a_named_product_matches_by_its_name_or_its_brand() -> None:
    question = "Is the Plaud Note worth it for meetings?"
    assert _discussed(question, "Plaud NotePin review", "")
    assert _discussed(question, "Which recorder?", "", "the plaud note's battery is fine")
    assert _discussed("My Plaud NotePin stopped syncing, how do I fix it?", "Note Pin tips", "")
    assert not _discussed(question, "Otter vs Fireflies", "meeting notes apps compared")


def test_tokens_fold_case_punctuation_and_plurals() -> None:
    assert tokens("Starters, BATTERIES & glass!") == ["starter", "battery", "glass"]
    assert mentions(tokens("two sourdough starters died"), ("sourdough", "starter"))
    assert mentions(tokens("NotePin"), ("note", "pin"))
    assert not mentions(tokens("NotePin"), ("note",))  # never inside a longer token


def test_a_generic_question_is_judged_by_its_content_terms() -> None:
    question = "how do I keep a sourdough starter going"
    subject = question_subject(question, None)
    assert subject is not None and subject.name == "sourdough starter"
    assert ("keep",) not in subject.terms and ("going",) not in subject.terms
    assert _discussed(question, "Feeding schedule", "my starter doubles in 6 hours")
    assert not _discussed(question, "Keep your impact driver going", "oil it, keep it dry")


def test_nothing_is_judged_when_unsure() -> None:
    assert question_subject("how do I fix it?", None) is None
    russian = _analysis("Как починить это?", language="ru", english_question="Как починить это?")
    assert question_subject(russian.question, russian) is None
    assert _discussed("how do I fix it?", "anything at all")


def test_acronyms_and_contractions_are_not_products() -> None:
    subject = question_subject("I'm new. Is a dedicated AI voice recorder worth it?", None)
    assert subject is not None and subject.name == "voice recorder"
    assert ("ai",) not in subject.terms and ("i'm",) not in subject.terms
    assert _discussed("Is a dedicated AI voice recorder worth it?", "Voice recorders for lectures")


def test_compared_options_count_and_any_one_is_enough() -> None:
    question = "Airflow vs Dagster for a small data team?"
    analysis = _analysis(question, compared=["airflow", "dagster"], intent="comparison")
    subject = question_subject(question, analysis)
    assert subject is not None and subject.name == "Dagster or Airflow"
    assert _discussed(question, "Why I still like Airflow", analysis=analysis)
    assert not _discussed(question, "Prefect 3 upgrade", analysis=analysis)


def test_the_formulations_subject_is_the_one_judged() -> None:
    """The subject travels in the analysis: the synthesis holds the evidence to it and does
    not read the question again; an analysis stored without one gets it derived the same way."""
    sony = Subject(name="the Sony WH-1000XM6", terms=(("wh", "1000xm6"),))
    analysis = _analysis("Which headphones?", subject=sony)
    assert question_subject(analysis.question, analysis) == sony
    assert not _discussed(analysis.question, "Which headphones? AirPods", analysis=analysis)
    assert question_subject("how do I fix it?", _analysis("how do I fix it?", subject=None)) is None
    stored = QueryAnalysis.model_validate_json(_analysis(SONY).model_dump_json(exclude={"subject"}))
    assert question_subject(SONY, stored) == question_subject(SONY, None)


def test_videos_and_products_are_evidence_too() -> None:
    video = EvidenceItem(
        kind="youtube", id="v1", title="Sony WH1000XM6 long-term review", text="",
        url="https://www.youtube.com/watch?v=v1", where="Some Channel",
    )  # fmt: skip
    unrelated = _thread("Best voice recorder?", "")
    assert judge_subject(SONY, None, [unrelated], [video]).discussed
    assert not judge_subject(SONY, None, [unrelated]).discussed
    places = looked_in(_analysis(SONY), [unrelated], [video])
    assert places == ["r/gadgets", "r/productivity", "YouTube"]


def test_the_abstention_names_where_it_looked_and_the_subject() -> None:
    subject = question_subject(SONY, None)
    assert subject is not None
    assert (
        abstention_sentence(subject, ["r/gadgets", "r/productivity"])
        == "Nothing in r/gadgets, r/productivity discusses the Sony WH-1000XM6."
    )


def test_an_empty_search_names_what_it_could_not_search_and_why() -> None:
    subject = question_subject(SONY, None)
    assert subject is not None
    places = ["r/headphones", "r/science"]
    skipped = {"Science": "it holds comments but no posts"}
    assert abstention_sentence(subject, places, found=False, skipped=skipped) == (
        "The search of r/headphones found no thread for this question. "
        "r/science was not searched: it holds comments but no posts."
    )
    assert abstention_sentence(subject, ["r/science"], found=False, skipped=skipped) == (
        "No thread could be searched for this question. "
        "r/science was not searched: it holds comments but no posts."
    )
    assert abstention_sentence(subject, ["r/headphones"], found=False) == (
        "The search of r/headphones found no thread for this question."
    )


def test_amounts_are_not_model_numbers() -> None:
    subject = question_subject("Is a 7B model on a 16GB card useful for coding?", None)
    assert subject is not None and ("model",) in subject.terms  # content words, not a "model"
    assert _discussed("Is a 7B model on a 16GB card useful for coding?", "Local models for coding")
    pixel = question_subject("Is the Pixel 8 Pro worth it?", None)
    assert pixel is not None and pixel.terms == (("pixel", "8"),)
    assert _discussed("Is the Pixel 8 Pro worth it?", "Pixel 8 battery after a year")
    assert not _discussed("Is the Pixel 8 Pro worth it?", "Pixel 7 battery after a year")
