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

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.core.text import tokenize


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


_DEFAULT_CONFIG = RelevanceConfig()


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


class _Term(NamedTuple):
    """A plan term compiled once: its words (each with its plural forms) and a phrase pattern."""

    words: tuple[frozenset[str], ...]
    phrase: re.Pattern[str]


@lru_cache(maxsize=4096)
def _compile_term(term: str) -> _Term | None:
    """'plaud.ai' matches "plaud.ai", "plaud ai" and "Plaud-AI"; plurals fold to singular.

    Cached: a plan has a handful of terms scored against hundreds of posts.
    """
    words = tuple(_stem(token) for token in tokenize(term))
    if not words:
        return None
    # The first word leads as a literal (the regex engine then scans for it at C speed, ~15x
    # faster than a leading \b); a lookbehind after it checks the word boundary instead.
    first = re.escape(words[0])
    rest = "".join(rf"[\W_]+{re.escape(word)}(?:e?s)?" for word in words[1:])
    pattern = rf"{first}(?<![^\W_]{first})(?:e?s)?{rest}(?![^\W_])"
    forms = tuple(frozenset({word, f"{word}s", f"{word}es"}) for word in words)
    return _Term(forms, re.compile(pattern))


class _View:
    """A lower-cased text, with its word set built only if a partial match needs it."""

    __slots__ = ("_words", "text")

    def __init__(self, text: str) -> None:
        self.text = text.lower()
        self._words: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(tokenize(self.text))
        return self._words

    def has_word(self, forms: frozenset[str]) -> bool:
        """Whether any form of a word (singular or plural) occurs in the text."""
        return not self.words.isdisjoint(forms)


def _term_score(term: _Term, title: _View, body: _View, config: RelevanceConfig) -> float:
    if term.phrase.search(title.text):
        return config.title_phrase
    if term.phrase.search(body.text):
        return config.body_phrase
    title_share = sum(title.has_word(word) for word in term.words) / len(term.words)
    body_share = sum(body.has_word(word) for word in term.words) / len(term.words)
    return config.partial_factor * max(
        title_share * config.title_phrase, body_share * config.body_phrase
    )


def _all_words_present(term: _Term, title: _View, body: _View) -> bool:
    return all(title.has_word(word) or body.has_word(word) for word in term.words)


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
    config = config or _DEFAULT_CONFIG
    title_view = _View(title)
    body_view = _View(body)
    scores: list[float] = []
    positives: list[str] = []
    for text in search_terms:
        term = _compile_term(text)
        if term is None:
            continue
        score = _term_score(term, title_view, body_view, config)
        scores.append(score)
        if score >= config.body_phrase or _all_words_present(term, title_view, body_view):
            positives.append(text)

    negatives = [
        keyword
        for keyword in config.negative_keywords
        if (term := _compile_term(keyword))
        and (term.phrase.search(title_view.text) or term.phrase.search(body_view.text))
    ]
    best = max(scores, default=0.0)
    bonus = config.extra_term_bonus * max(len(positives) - 1, 0)
    raw = best + bonus - config.negative_penalty * len(negatives)
    relevance = round(min(max(raw, 0.0), 1.0), 4)
    return RelevanceResult(relevance, positives, negatives, relevance >= config.threshold)
