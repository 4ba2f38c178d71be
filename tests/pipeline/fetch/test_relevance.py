"""evaluate_post_relevance: title beats body, phrases beat scattered words, negatives subtract."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsift.core.words import tokenize
from crowdsift.pipeline.fetch.relevance import (
    RelevanceConfig,
    _compile_term,
    evaluate_post_relevance,
)

TERMS = ["plaud.ai", "voice recorder"]


def score(title: str, body: str, terms: list[str] = TERMS, **config: object) -> float:
    result = evaluate_post_relevance(
        "p1", title, body, search_terms=terms, config=RelevanceConfig(**config)
    )
    return result.relevance_score


def test_returns_the_seed_four_tuple() -> None:
    relevance, positives, negatives, passed = evaluate_post_relevance(
        "p1", "Plaud.ai after a month", "It records fine.", search_terms=TERMS
    )
    assert (relevance, positives, negatives, passed) == (1.0, ["plaud.ai"], [], True)


def test_title_phrase_outranks_body_phrase_outranks_partial() -> None:
    title_hit = score("My voice recorder setup", "nothing here")
    body_hit = score("Setup question", "I use a voice recorder daily")
    partial = score("Setup question", "my voice is hoarse")
    assert title_hit == 1.0
    assert body_hit == 0.6
    assert 0 < partial < body_hit
    assert score("Best drill for concrete", "SDS plus hammer drill") == 0.0


def test_phrase_matching_respects_word_boundaries_and_plurals() -> None:
    assert score("Voice recorders compared", "") == 1.0  # plural folds to singular
    assert score("plaudai is not plaud ai", "", terms=["plaud.ai"]) == 1.0
    assert score("applaud ai research", "", terms=["plaud.ai"]) < 1.0


def test_each_extra_matched_term_adds_a_bonus() -> None:
    terms = ["plaud", "notepin", "battery"]
    assert score("Question", "my plaud", terms=terms) == 0.6
    assert score("Question", "my plaud notepin", terms=terms) == 0.7
    assert score("Question", "my plaud notepin battery", terms=terms) == 0.8
    assert score("Plaud", "notepin battery", terms=terms) == 1.0  # clamped at 1


def test_negative_keywords_penalise_and_can_fail_the_threshold() -> None:
    result = evaluate_post_relevance(
        "p1",
        "Plaud.ai giveaway",
        "win a free one",
        search_terms=TERMS,
        config=RelevanceConfig(negative_keywords=("giveaway", "free one"), threshold=0.5),
    )
    assert result.negative_keywords == ["giveaway", "free one"]
    assert result.relevance_score == 0.3
    assert result.passed is False


def test_threshold_decides_passed() -> None:
    args = ("p1", "Setup question", "I use a voice recorder daily")
    assert evaluate_post_relevance(*args, search_terms=TERMS).passed is True
    strict = RelevanceConfig(threshold=0.61)
    assert evaluate_post_relevance(*args, search_terms=TERMS, config=strict).passed is False


def test_score_does_not_depend_on_post_id_and_blank_terms_are_ignored() -> None:
    a = evaluate_post_relevance("a", "voice recorder", "", search_terms=[" ", "voice recorder"])
    b = evaluate_post_relevance("b", "voice recorder", "", search_terms=["voice recorder"])
    assert a == b


# --- the fast path equals the definition ----------------------------------------------------
# evaluate_post_relevance finds a plan's words with one pattern and searches a phrase only where
# all its words are. The reference below is the module docstring taken literally: every word of
# the text, every phrase searched, every share counted. Any text and terms must score the same.

_WORDS = ["plaud", "plauds", "ai", "ais", "voice", "recorder", "recorderes", "glass", "ß", "ü"]
_PIECES = st.sampled_from([*_WORDS, " ", ".", "-", "_", "x", "\n", "İ", "2", "applaud"])
_TEXT = st.lists(_PIECES, max_size=30).map("".join)
_TERM = st.lists(st.sampled_from([*_WORDS, ".", " "]), min_size=1, max_size=4).map(" ".join)


def _reference(title: str, body: str, terms: list[str], config: RelevanceConfig) -> tuple:
    title, body = title.lower(), body.lower()
    words = {"title": set(tokenize(title)), "body": set(tokenize(body))}
    scores, positives = [], []
    for text in terms:
        term = _compile_term(text)
        if term is None:
            continue
        present = {
            side: [bool(words[side] & forms) for forms in term.words] for side in ("title", "body")
        }
        if term.phrase.search(title):
            score = config.title_phrase
        elif term.phrase.search(body):
            score = config.body_phrase
        else:
            shares = {side: sum(hits) / len(hits) for side, hits in present.items()}
            score = config.partial_factor * max(
                shares["title"] * config.title_phrase, shares["body"] * config.body_phrase
            )
        scores.append(score)
        everywhere = all(t or b for t, b in zip(present["title"], present["body"], strict=True))
        if score >= config.body_phrase or everywhere:
            positives.append(text)
    negatives = [
        k
        for k in config.negative_keywords
        if (term := _compile_term(k)) and (term.phrase.search(title) or term.phrase.search(body))
    ]
    raw = max(scores, default=0.0) + config.extra_term_bonus * max(len(positives) - 1, 0)
    relevance = round(min(max(raw - config.negative_penalty * len(negatives), 0.0), 1.0), 4)
    return relevance, positives, negatives, relevance >= config.threshold


@settings(max_examples=400, deadline=None)
@given(title=_TEXT, body=_TEXT, terms=st.lists(_TERM, max_size=4), negative=_TERM)
def test_the_fast_scorer_equals_the_literal_definition(
    title: str, body: str, terms: list[str], negative: str
) -> None:
    config = RelevanceConfig(negative_keywords=(negative,))
    result = evaluate_post_relevance("p", title, body, search_terms=terms, config=config)
    assert tuple(result) == _reference(title, body, terms, config)
