"""The staff-engineer sections of the local answer (seed 001, phase 4), found, not written.

The local engine writes no prose, so these sections are *found* in what people wrote, each
claim cited to the post or comment it came from (the detectors are in ``specifics``):

- **hidden gems**: comments at any depth holding concrete specifics (flags, versions,
  settings, model numbers, quantities), ranked by karma × specificity × relevance with a small
  bonus for depth: the spec's "specific configs/flags in deep comments".
- **minority report**: upvoted comments (score > 1 and at least their thread's median) with a
  disagreement marker and a reason (long enough to argue, or holding a specific).
- **pivot alerts**: "switched from X to Y" statements grouped by (X, Y); a shift needs at least
  ``PIVOT_MIN_MENTIONS`` separate posts or comments, since one person's move is an anecdote.
- **comparison table**: for each compared option, the sentences naming it, a lexicon verdict,
  up to two positive and two negative sentences.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz

from crowdsift.core.text import blend_weights, content_terms, split_sentences, truncate_words
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.reddit.models import DraftClaim, DraftPivot, DraftRow
from crowdsift.pipeline.synthesis.models import AnswerDraft
from crowdsift.pipeline.synthesis.specifics import (
    Pivot,
    dissent_marker,
    find_pivots,
    find_specifics,
    gives_reason,
    option_pattern,
    sentiment,
    verdict,
)

Floats = npt.NDArray[np.float32]

CLAIM_CHARS = 280
TABLE_SENTENCE_CHARS = 200
MIN_TABLE_SENTENCE_CHARS = 12
DEPTH_BONUS = 0.1
"""Gem rank bonus per level of nesting (up to 3): the spec digs for specifics deep in threads."""
MAX_GEM_SPECIFICS = 4
PIVOT_MIN_MENTIONS = 2
MAX_PIVOTS = 3
MAX_ROW_CITES = 5
GEM_POOL = 50
"""Gem candidates embedded for relevance: the best by karma × specificity (the rest cannot win)."""
TWIN_SIMILARITY = 85.0
"""rapidfuzz token_set_ratio at or above which two gems are the same tip (reposted comments)."""
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_OPTION_CLAUSE = re.compile(r"[,;]|\b(?:but|while|whereas|unlike)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Item:
    """One citable text: a post's title or body, or a comment (``marker`` cites it)."""

    marker: str
    text: str
    score: int
    depth: int
    thread: int
    is_comment: bool
    is_title: bool = False


@dataclass(frozen=True)
class Limits:
    """What the sections may hold: the compared options (a table needs two), the caps."""

    compared: Sequence[str] = field(default_factory=tuple)
    max_gems: int = 5
    max_dissent: int = 3


@dataclass(frozen=True)
class Sentence:
    text: str
    item: Item


def sections(
    question: str, items: Sequence[Item], embedder: Embedder, limits: Limits
) -> AnswerDraft:
    """The four sections as an (otherwise empty) draft, ids only."""
    said = [item for item in items if not item.is_title]  # titles name topics, not claims
    return AnswerDraft(
        summary="",
        hidden_gems=hidden_gems(question, said, embedder, limits.max_gems),
        minority_report=minority_report(said, limits.max_dissent),
        pivot_alerts=pivot_alerts(said),
        comparison_table=comparison_table(limits.compared, said),
    )


def sentences_of(items: Sequence[Item], min_chars: int) -> list[Sentence]:
    """Statements of the items, each once: no fragments, questions or links."""
    seen: set[str] = set()
    found: list[Sentence] = []
    for item in items:
        for line in item.text.splitlines():
            for sentence in split_sentences(line.strip()):
                key = " ".join(sentence.lower().split())
                if (
                    len(sentence) < min_chars
                    or sentence.rstrip(" \"')]”’").endswith("?")
                    or _URL.search(sentence)
                    or key in seen
                ):
                    continue
                seen.add(key)
                found.append(Sentence(sentence, item))
    return found


def relevance(question: str, texts: Sequence[str], embedder: Embedder) -> Floats:
    """Relevance of each text to the question: cosine blended with word overlap."""
    vectors = embedder.embed([question, *texts])
    terms = content_terms(question)
    lexical = np.array(
        [len(terms & content_terms(t)) / len(terms) if terms else 0.0 for t in texts],
        dtype=np.float32,
    )
    w_sim, w_lex = blend_weights(question)
    return np.asarray(w_sim * (vectors[1:] @ vectors[0]) + w_lex * lexical, dtype=np.float32)


def hidden_gems(
    question: str, items: Sequence[Item], embedder: Embedder, limit: int
) -> list[DraftClaim]:
    """Comments (score ≥ 1) whose sentences hold specifics, best first, one gem per comment;
    a tip repeated in another comment adds that comment as a citation instead of a gem."""
    found: list[tuple[Item, str, int]] = []
    for item in items:
        if not item.is_comment or item.score < 1:
            continue
        holding = [s.text for s in sentences_of([item], 1) if find_specifics(s.text)]
        if holding:
            text = truncate_words(" ".join(holding[:2]), CLAIM_CHARS)
            found.append((item, text, len(find_specifics(text))))
    if not found or limit <= 0:
        return []
    found.sort(key=lambda f: -(1 + math.log1p(f[0].score)) * min(f[2], MAX_GEM_SPECIFICS))
    found = found[:GEM_POOL]  # stable: equal ranks keep thread order
    rel = relevance(question, [text for _, text, _ in found], embedder)

    def rank(index: int) -> tuple[float, int]:
        item, _, count = found[index]
        value = (
            (1 + math.log1p(item.score))
            * min(count, MAX_GEM_SPECIFICS)
            * (0.5 + max(float(rel[index]), 0.0))
            * (1 + DEPTH_BONUS * min(item.depth, 3))
        )
        return (-value, index)

    chosen: list[DraftClaim] = []
    for index in sorted(range(len(found)), key=rank):
        item, text, _ = found[index]
        twin = next(
            (c for c in chosen if fuzz.token_set_ratio(c.text, text) >= TWIN_SIMILARITY), None
        )
        if twin is not None:  # the same tip said again elsewhere: one gem, both citations
            if item.marker not in twin.cites:
                twin.cites.append(item.marker)
        elif len(chosen) < limit:
            chosen.append(DraftClaim(text=text, cites=[item.marker]))
    return chosen


def minority_report(items: Sequence[Item], limit: int) -> list[DraftClaim]:
    """Upvoted, reasoned disagreement, most upvoted first."""
    medians: dict[int, float] = {}
    for thread in {item.thread for item in items}:
        scores = [i.score for i in items if i.thread == thread and i.is_comment]
        medians[thread] = statistics.median(scores) if scores else 0.0
    chosen: list[tuple[int, int, DraftClaim]] = []
    for position, item in enumerate(items):
        if not item.is_comment or item.score <= 1 or item.score < medians[item.thread]:
            continue
        marker = dissent_marker(item.text)
        if marker is None or not gives_reason(item.text):
            continue
        claim = DraftClaim(text=_dissent_text(item, marker), cites=[item.marker])
        chosen.append((-item.score, position, claim))
    chosen.sort(key=lambda c: (c[0], c[1]))
    return [claim for _, _, claim in chosen[:limit]]


def _dissent_text(item: Item, marker: str) -> str:
    """The comment from the sentence holding the marker, and why it is competent dissent."""
    sentences = split_sentences(" ".join(item.text.split()))
    start = next((i for i, s in enumerate(sentences) if marker in s), 0)
    quote = truncate_words(" ".join(sentences[start : start + 2]), CLAIM_CHARS)
    specifics = [s.text for s in find_specifics(item.text)][:3]
    why = (
        f"argued with specifics ({', '.join(specifics)})"
        if specifics
        else "argued at length rather than asserted"
    )
    return f"{quote} (Upvoted at or above its thread's median, {why}.)"


def pivot_alerts(items: Sequence[Item]) -> list[DraftPivot]:
    """Moves from one option to another that several posts or comments describe."""
    groups: dict[tuple[str, str], tuple[Pivot, list[Item]]] = {}
    for item in items:
        for pivot in find_pivots(item.text):
            mentions = groups.setdefault(pivot.key, (pivot, []))[1]
            if item.marker not in {m.marker for m in mentions}:
                mentions.append(item)
    ranked = sorted(
        (group for group in groups.values() if len(group[1]) >= PIVOT_MIN_MENTIONS),
        key=lambda g: -len(g[1]),
    )  # stable: equal counts keep first-seen order
    alerts: list[DraftPivot] = []
    for pivot, mentions in ranked[:MAX_PIVOTS]:
        alerts.append(
            DraftPivot(
                from_option=pivot.from_option,
                to_option=pivot.to_option,
                text=(
                    f"{_count_phrase(mentions)} moving from {pivot.from_option} to "
                    f"{pivot.to_option}."
                ),
                cites=[m.marker for m in mentions],
            )
        )
    return alerts


def _count_phrase(items: Sequence[Item]) -> str:
    comments = sum(1 for i in items if i.is_comment)
    posts = len(items) - comments
    counts = ((posts, "post"), (comments, "comment"))
    parts = [f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in counts if n]
    verb = "describes" if len(items) == 1 else "describe"
    return f"{' and '.join(parts)} {verb}"


def comparison_table(options: Sequence[str], items: Sequence[Item]) -> list[DraftRow]:
    """One row per compared option that the threads mention (needs two options or more)."""
    names = list(dict.fromkeys(o.strip() for o in options if o.strip()))
    if len(names) < 2:
        return []
    patterns = {name: option_pattern(name) for name in names}
    sentences = sentences_of(items, MIN_TABLE_SENTENCE_CHARS)
    rows: list[DraftRow] = []
    for name, pattern in patterns.items():
        others = [p for n, p in patterns.items() if n != name]
        scored = [
            (s, _option_sentiment(s.text, pattern, others))
            for s in sentences
            if pattern.search(s.text)
        ]
        if not scored:
            continue
        positive = sorted((x for x in scored if x[1] > 0), key=lambda x: (-x[1], -x[0].item.score))
        negative = sorted((x for x in scored if x[1] < 0), key=lambda x: (x[1], -x[0].item.score))
        pros = [s for s, _ in positive[:2]]
        cons = [s for s, _ in negative[:2]]
        by_karma = sorted((s for s, _ in scored), key=lambda s: -s.item.score)
        cites = list(dict.fromkeys(s.item.marker for s in [*pros, *cons, *by_karma]))
        rows.append(
            DraftRow(
                option=name,
                verdict=verdict(len(scored), len(positive), len(negative)),
                pros=[truncate_words(s.text, TABLE_SENTENCE_CHARS) for s in pros],
                cons=[truncate_words(s.text, TABLE_SENTENCE_CHARS) for s in cons],
                cites=cites[:MAX_ROW_CITES],
            )
        )
    return rows


def _option_sentiment(
    text: str, pattern: re.Pattern[str], others: Sequence[re.Pattern[str]]
) -> int:
    """Sentiment about one option: when the sentence names another option too, only the
    clauses naming this one count ("Otter is great but Plaud drains the battery")."""
    if not any(other.search(text) for other in others):
        return sentiment(text)
    clauses = [c for c in _OPTION_CLAUSE.split(text) if pattern.search(c)]
    return sum(sentiment(c) for c in clauses)
