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
from operator import or_
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.core.words import tokenize


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


class _Plan(NamedTuple):
    """A plan's terms compiled once, with one pattern that finds every word any term uses.

    Scoring needs only which of the plan's words a post contains, not the post's every word:
    one scan for the plan's words costs about a third of splitting a body into a word set.
    """

    terms: tuple[tuple[str, _Term], ...]
    words: re.Pattern[str]


@lru_cache(maxsize=256)
def _compile_plan(search_terms: tuple[str, ...]) -> _Plan:
    terms = tuple((text, term) for text in search_terms if (term := _compile_term(text)))
    stems = sorted({min(forms, key=len) for _, term in terms for forms in term.words})
    # Each word checks its own start (as in _compile_term); the match then spans the whole
    # token, so what it finds is exactly the tokens that are a form of some plan word.
    alternatives = "|".join(rf"{re.escape(w)}(?<![^\W_]{re.escape(w)})" for w in stems)
    return _Plan(terms, re.compile(rf"(?:{alternatives or '(?!)'})(?:e?s)?(?![^\W_])"))


def _term_score(
    term: _Term, title: str, body: str, found: tuple[set[str], set[str]], config: RelevanceConfig
) -> tuple[float, bool]:
    """(score, all words present) of one term, from the plan words found in title and body.

    A one-word phrase is its word (the tokenizer and the pattern agree on word boundaries),
    and a longer phrase is only searched for where every one of its words is: most posts miss
    most terms, and set lookups cost far less than a scan.
    """
    title_found, body_found = found
    if len(term.words) == 1:
        forms = term.words[0]
        if not title_found.isdisjoint(forms):
            return config.title_phrase, True
        if not body_found.isdisjoint(forms):
            return config.body_phrase, True
        return 0.0, False
    in_title = [not title_found.isdisjoint(forms) for forms in term.words]
    in_body = [not body_found.isdisjoint(forms) for forms in term.words]
    everywhere = all(map(or_, in_title, in_body))
    if all(in_title) and term.phrase.search(title):
        return config.title_phrase, True
    if all(in_body) and term.phrase.search(body):
        return config.body_phrase, True
    count = len(term.words)
    share = max(
        sum(in_title) / count * config.title_phrase, sum(in_body) / count * config.body_phrase
    )
    return config.partial_factor * share, everywhere


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
    title, body = title.lower(), body.lower()
    plan = _compile_plan(tuple(search_terms))
    found = set(plan.words.findall(title)), set(plan.words.findall(body))
    scores: list[float] = []
    positives: list[str] = []
    for text, term in plan.terms:
        score, all_words = _term_score(term, title, body, found, config)
        scores.append(score)
        if all_words or score >= config.body_phrase:
            positives.append(text)

    negatives = [
        keyword
        for keyword in config.negative_keywords
        if (negative := _compile_term(keyword))
        and (negative.phrase.search(title) or negative.phrase.search(body))
    ]
    best = max(scores, default=0.0)
    bonus = config.extra_term_bonus * max(len(positives) - 1, 0)
    raw = best + bonus - config.negative_penalty * len(negatives)
    relevance = round(min(max(raw, 0.0), 1.0), 4)
    return RelevanceResult(relevance, positives, negatives, relevance >= config.threshold)
