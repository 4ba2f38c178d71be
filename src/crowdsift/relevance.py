"""Lexical relevance of a post to a search plan: pure, deterministic, fast.

``evaluate_post_relevance`` keeps the seed's interface and returns the seed's 4-tuple
``(relevance_score, positive_keywords, negative_keywords, passed)``. A later stage may chain a
semantic score after it (seed 000, section 9) without touching transport or filtering.

Scoring, per plan term (a word or a phrase such as "plaud.ai" or "voice recorder"):
- the whole phrase in the title scores ``title_phrase`` (1.0), in the body ``body_phrase``;
- otherwise the share of its words present, weighted the same way but halved;
the post's score is its best term's score, plus a small bonus per further matched term, minus a
penalty per negative keyword found, clamped to 0..1. Titles weigh more than bodies because
Reddit titles state the topic and bodies wander.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.text import tokenize


class RelevanceConfig(BaseModel):
    """Weights and thresholds of the lexical scorer (defaults from Settings)."""

    model_config = ConfigDict(frozen=True)

    threshold: float = Field(0.2, ge=0.0, le=1.0)
    title_phrase: float = 1.0
    body_phrase: float = 0.6
    partial_factor: float = 0.5
    extra_term_bonus: float = 0.1
    negative_penalty: float = 0.35
    negative_keywords: tuple[str, ...] = ()


class RelevanceResult(NamedTuple):
    """The seed's tuple, with names."""

    relevance_score: float
    positive_keywords: list[str]
    negative_keywords: list[str]
    passed: bool


def _stem(token: str) -> str:
    """A light plural fold so 'recorders' matches 'recorder' (no dictionary, no I/O)."""
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _terms(text: str) -> tuple[str, ...]:
    return tuple(_stem(token) for token in tokenize(text))


def _contains_phrase(haystack: str, phrase: tuple[str, ...]) -> bool:
    """Word-boundary phrase match on a space-joined token string padded with spaces."""
    return f" {' '.join(phrase)} " in haystack


class _View(NamedTuple):
    """A text prepared once for many term lookups."""

    joined: str  # " tok tok tok " for phrase search on word boundaries
    words: frozenset[str]

    @classmethod
    def of(cls, text: str) -> _View:
        tokens = _terms(text)
        return cls(f" {' '.join(tokens)} ", frozenset(tokens))


def _term_score(
    phrase: tuple[str, ...], title: _View, body: _View, config: RelevanceConfig
) -> float:
    if _contains_phrase(title.joined, phrase):
        return config.title_phrase
    if _contains_phrase(body.joined, phrase):
        return config.body_phrase
    words = set(phrase)
    title_share = len(words & title.words) / len(words)
    body_share = len(words & body.words) / len(words)
    return config.partial_factor * max(
        title_share * config.title_phrase, body_share * config.body_phrase
    )


def evaluate_post_relevance(
    post_id: str,
    title: str,
    body: str,
    *,
    search_terms: Sequence[str],
    config: RelevanceConfig | None = None,
) -> RelevanceResult:
    """Score cleaned ``title`` and ``body`` against the plan's ``search_terms``.

    ``post_id`` is part of the seed's interface so callers can log the decision beside it; the
    score never depends on it. A term counts as a positive keyword when all its words occur.
    """
    del post_id  # identity never influences relevance
    config = config or RelevanceConfig()
    title_view = _View.of(title)
    body_view = _View.of(body)
    all_words = title_view.words | body_view.words

    scores: list[float] = []
    positives: list[str] = []
    for term in search_terms:
        phrase = _terms(term)
        if not phrase:
            continue
        score = _term_score(phrase, title_view, body_view, config)
        scores.append(score)
        if set(phrase) <= all_words:
            positives.append(term)

    negatives = [
        keyword
        for keyword in config.negative_keywords
        if (phrase := _terms(keyword))
        and (
            _contains_phrase(title_view.joined, phrase)
            or _contains_phrase(body_view.joined, phrase)
        )
    ]
    best = max(scores, default=0.0)
    bonus = config.extra_term_bonus * max(len(positives) - 1, 0)
    raw = best + bonus - config.negative_penalty * len(negatives)
    relevance = round(min(max(raw, 0.0), 1.0), 4)
    return RelevanceResult(relevance, positives, negatives, relevance >= config.threshold)
