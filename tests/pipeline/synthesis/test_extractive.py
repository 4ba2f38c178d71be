"""The local engine's extractive summary: deterministic, within budget, every sentence cited."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from crowdsift.core.models import FetchResult, Post
from crowdsift.core.sentences import split_sentences
from crowdsift.engines.embedding import HashingEmbedder, Vectors
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.claims import is_risk
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import (
    candidates_of,
    items_of,
    local_answer,
)
from crowdsift.pipeline.synthesis.models import SummarizeRequest, SummarizeResult
from crowdsift.pipeline.synthesis.sections import AnswerScope
from tests.support.answers import summarize_fetch

_CITED_PIECE = re.compile(r"(.+?) \[((?:post|comment):[A-Za-z0-9_-]+)\]")


def run_local(
    fetched: FetchResult, config: SynthesisConfig | None = None, engine: LocalEngine | None = None
) -> SummarizeResult:
    engine = engine or LocalEngine(embedder=HashingEmbedder())
    return summarize_fetch(fetched, engine=engine, synthesis_config=config)


def evidence_texts(request: SummarizeRequest, fetched: FetchResult) -> dict[str, str]:
    """What each citable id may quote: a post its title, body and comments; a comment itself."""
    posts = {
        f"post:{p.post_id}": " ".join([p.title, p.body_excerpt, *p.top_comment_excerpts])
        for p in request.post_payloads
    }
    comments = {f"comment:{c.comment_id}": c.body for p in fetched.posts for c in p.comments}
    return {key: " ".join(text.split()) for key, text in {**posts, **comments}.items()}


def cited_pieces(cited: CitedText) -> list[tuple[str, str]]:
    """``cited`` as (sentence, ``post:ID``/``comment:ID``) pairs; fails unless every sentence
    carries a citation."""
    text = cited.marked()
    pieces = [(m.group(1).strip(), m.group(2)) for m in _CITED_PIECE.finditer(text)]
    rebuilt = " ".join(f"{sentence} [{cited}]" for sentence, cited in pieces)
    assert rebuilt == text, f"uncited text in {text!r}"
    return [(_words(sentence), cited) for sentence, cited in pieces]


_QUOTE = re.compile(r"“(.+?)(?: …)?” \(-?\d+ points?\)")


def _words(piece: str) -> str:
    """A voted reply's words without its quotation marks and votes; a sentence as it is."""
    quote = _QUOTE.fullmatch(piece)
    return quote.group(1) if quote else piece


def test_local_summary_is_deterministic_and_labelled_local(recorder_fetch: FetchResult) -> None:
    first = run_local(recorder_fetch)
    second = run_local(recorder_fetch)
    assert first == second
    assert first.engine == "local"
    assert first.status == "ok"


def test_every_sentence_is_extracted_from_the_post_it_cites(
    recorder_fetch: FetchResult, recorder_request: SummarizeRequest
) -> None:
    result = run_local(recorder_fetch)
    texts = evidence_texts(recorder_request, recorder_fetch)
    pieces = cited_pieces(result.summary)
    assert len(pieces) >= 2
    for sentence, cited in pieces:
        assert sentence in texts[cited]  # verbatim, from that very post or comment
    for item in [*result.highlights, *result.cautions]:
        [(sentence, cited)] = cited_pieces(item)
        assert sentence in texts[cited]
    owner = {f"comment:{c.comment_id}": p.id for p in recorder_fetch.posts for c in p.comments}
    owner |= {f"post:{p.id}": p.id for p in recorder_fetch.posts}
    posts = {owner[cited] for text in [result.summary, *result.highlights, *result.cautions]
             for _, cited in cited_pieces(text)}  # fmt: skip
    assert {s.post_id for s in result.sources} == posts


def test_budget_and_caps_are_respected(recorder_fetch: FetchResult) -> None:
    config = SynthesisConfig(summary_char_budget=180, max_highlights=2, max_cautions=1)
    result = run_local(recorder_fetch, config)
    assert 0 < len(result.summary.marked()) <= 180
    assert len(result.highlights) <= 2
    assert len(result.cautions) <= 1
    assert result.status == "ok"  # nothing had to be cut by grounding


def test_a_budget_smaller_than_any_sentence_still_yields_one_cited_excerpt(
    recorder_fetch: FetchResult,
) -> None:
    result = run_local(recorder_fetch, SynthesisConfig(summary_char_budget=40))
    assert len(result.summary.marked()) <= 40
    [(sentence, _post_id)] = cited_pieces(result.summary)
    assert sentence.endswith("…")


RISKS = {
    "The app requires a subscription for more than 300 minutes of transcription.",
    "The transcription quality of the Plaud app is good but the subscription price is hard to "
    "justify.",
    "I returned the device after three weeks and got a full refund.",
    "Privacy is my concern, recordings are uploaded to their cloud servers.",
    "Speaker labels get mixed up when people talk over each other.",
}
"""The recorder threads' risks, failures and limits, as this test reads them."""


def test_cautions_carry_risk_cues_and_highlights_avoid_repeating_the_summary(
    recorder_fetch: FetchResult,
) -> None:
    config = SynthesisConfig(summary_char_budget=200, max_highlights=2)
    result = run_local(recorder_fetch, config)
    cautions = [sentence for caution in result.cautions for sentence, _ in cited_pieces(caution)]
    assert cautions and set(cautions) <= RISKS, cautions
    highlighted = {s for h in result.highlights for s, _ in cited_pieces(h)}
    assert not highlighted & RISKS  # a risk is a caution, never a highlight
    summary_sentences = {s for s, _ in cited_pieces(result.summary)}
    highlight_sentences = [s for h in result.highlights for s, _ in cited_pieces(h)]
    assert highlight_sentences
    assert not summary_sentences & set(highlight_sentences)


def test_every_summary_sentence_is_embedded_once_in_one_batch(
    recorder_request: SummarizeRequest,
) -> None:
    class Counting(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[int] = []

        def embed(self, texts: Sequence[str]) -> Vectors:
            self.batches.append(len(texts))
            return super().embed(texts)

    embedder = Counting()
    local_answer(recorder_request, SynthesisConfig(), embedder, scope=AnswerScope())
    # every sentence once, in one batch with the question and each thread's title and opening
    # (which threads are about the question); besides it the hidden gems' relevance batch
    # (comments holding specifics) and the lead's (the question, threads and their replies)
    claims = len(candidates_of(items_of(recorder_request)))
    assert 1 + claims + len(recorder_request.post_payloads) in embedder.batches
    assert len(embedder.batches) <= 3


def test_evidence_of_only_questions_gives_an_uncited_partial_result(
    make_post: Callable[..., Post], make_fetch: Callable[..., FetchResult]
) -> None:
    posts = [
        make_post("q1", title="Is it any good?", body="Does anyone here actually use one daily?")
    ]
    result = run_local(make_fetch(posts), SynthesisConfig(min_evidence_posts=0))
    assert result.sources == []
    assert result.status == "partial" and "cites none" in (result.reason or "")


def test_split_sentences_handles_abbreviations_lower_case_and_no_punctuation() -> None:
    assert split_sentences("It works, e.g. for calls. then it died! Why? ok") == [
        "It works, e.g. for calls.",
        "then it died!",
        "Why?",
        "ok",
    ]
    assert split_sentences("no punctuation at all here") == ["no punctuation at all here"]
    assert split_sentences("") == []


def test_candidates_drop_short_fragments_questions_links_and_repeats(
    make_post: Callable[..., Post], make_fetch: Callable[..., FetchResult]
) -> None:
    from crowdsift.pipeline.synthesis.config import SelectorConfig
    from tests.support.answers import select_evidence

    post = make_post(
        "a1",
        title="A semester with a voice recorder",
        body=(
            "Too short. The battery lasts a full semester of lectures. "
            "Details are at https://example.com/specs for anyone curious. "
            "The battery lasts a full semester of lectures."
        ),
    )
    request = select_evidence(make_fetch([post]), SelectorConfig(), prompt_version="v1")
    assert [c.text for c in candidates_of(items_of(request))] == [
        "The battery lasts a full semester of lectures."
    ]


def test_caution_cues_ignore_negations() -> None:
    """What makes a claim a caution (``claims.is_risk``, which the candidates' ``risk`` reads)."""
    assert is_risk("The app needs a subscription after 300 minutes.")
    assert is_risk("Mine broke after two weeks and I returned it.")
    assert not is_risk("It has never died during a meeting.")
    assert not is_risk("The battery lasts thirty hours on one charge.")


def test_with_the_real_model_a_battery_question_leads_with_the_battery_sentence(
    make_post: Callable[..., Post], make_fetch: Callable[..., FetchResult]
) -> None:
    posts = [
        make_post(
            "scr1",
            title="Thoughts after a month",
            body="The screen is bright enough to read outside in direct sunlight.",
            relevance=0.9,
        ),
        make_post(
            "bat2",
            title="Thoughts after two months",
            body="On a single charge it easily runs for three full days of heavy use.",
            relevance=0.6,
        ),
        make_post(
            "cam3",
            title="Thoughts after a week",
            body="Photos in low light come out grainy and a little washed out.",
            relevance=0.8,
        ),
    ]
    fetched = make_fetch(posts, query="How good is the battery life?")
    result = run_local(fetched, engine=LocalEngine())  # all-MiniLM-L6-v2, offline
    first_sentence, post_id = cited_pieces(result.summary)[0]
    assert post_id == "post:bat2"
    assert first_sentence.startswith("On a single charge")
