"""The staff-engineer sections of the local answer (seed 001's four sections), found, not written.

The local engine writes no prose, so these sections are *found* in what people wrote, each
claim cited to the post or comment it came from (the detectors are in ``specifics``):

- **hidden gems**: comments at any depth holding concrete specifics (flags, versions,
  settings, model numbers, quantities), ranked by karma × specificity × relevance with a small
  bonus for depth: the spec's "specific configs/flags in deep comments".
- **minority report**: upvoted comments (score > 1 and at least their thread's median) with a
  disagreement marker and a reason (a claim after the marker, or a specific). The same dissent
  posted in several comments is one entry citing each; "argued at length" is said only of
  dissent that gives ``ARGUED_CLAIMS`` claims or more.
- **pivot alerts**: "switched from X to Y" / "moved off X to Y" / "replaced X with Y"
  statements, in titles, bodies and comments, grouped by (X, Y); a shift needs at least
  ``MIN_REPLIES`` separate posts or comments: one person's move, like one person's pick
  (``recommended``), is an anecdote.
- **comparison table**: for each compared option, the claims naming it, each with its stance
  toward the option (``stance``: VADER plus negation, contrast and moves), a verdict counted
  from the claims that take a side, up to two pros and two cons (caveats are cons).

Only claims are read (``claims``): no questions, askers' background, meta or fragments.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz

from crowdsift.core.sentences import split_sentences, truncate_words
from crowdsift.engines.embedding import Embedder, blended_relevance
from crowdsift.pipeline.synthesis.candidates import MAX_CITES, Item
from crowdsift.pipeline.synthesis.claims import CLAIM_CHARS, statements
from crowdsift.pipeline.synthesis.models import AnswerDraft, DraftClaim, DraftPivot, DraftRow
from crowdsift.pipeline.synthesis.recommended import MIN_REPLIES, recommended_rows
from crowdsift.pipeline.synthesis.specifics import (
    TABLE_SENTENCE_CHARS,
    Pivot,
    dissent_marker,
    find_pivots,
    find_specifics,
    gives_reason,
    option_pattern,
    verdict,
)
from crowdsift.pipeline.synthesis.stance import compound, option_stance

Floats = npt.NDArray[np.float32]

MIN_TABLE_SENTENCE_CHARS = 12
DEPTH_BONUS = 0.1
"""Gem rank bonus per level of nesting (up to 3): the spec digs for specifics deep in threads."""
MAX_GEM_SPECIFICS = 4
MAX_PIVOTS = 3
GEM_POOL = 50
"""Gem candidates embedded for relevance: the best by karma × specificity (the rest cannot win)."""
TWIN_SIMILARITY = 85.0
GEM_SUBJECT_SHARE = 0.5
"""A gem's relevance to the question is at least this share of the most relevant one's."""
"""rapidfuzz token_set_ratio at or above which two gems are the same tip (reposted comments)."""
ARGUED_CLAIMS = 3
"""Dissent giving at least this many claims (marker sentence included) is argued at length."""


@dataclass(frozen=True)
class AnswerScope:
    """What the answer is to cover: the question's intent and the options it compares (a table
    needs two), whether it asks what to get, and the caps on gems and dissent."""

    compared: Sequence[str] = field(default_factory=tuple)
    max_gems: int = 5
    max_dissent: int = 3
    intent: str = ""
    """The question's intent (``QueryAnalysis.intent``): what the direct answer is made of."""
    pick: bool = False
    """The question asks what to get ("which … should I buy?"): the table counts the names the
    replies recommend (``recommended``)."""


@dataclass(frozen=True)
class Sentence:
    text: str
    item: Item


def draft_sections(
    question: str,
    items: Sequence[Item],
    embedder: Embedder,
    scope: AnswerScope,
    *,
    shown: Collection[str] = (),
    near: Collection[int] | None = None,
) -> AnswerDraft:
    """The four sections as an (otherwise empty) draft, ids only; ``shown`` are the claims the
    summary, highlights and cautions already quote (a gem never repeats one); ``near``: the
    threads about the question, where gems, the table and the recommendations come from (all
    threads when None or none)."""
    said = [item for item in items if not item.is_title]  # titles name topics, not claims
    nearby = [item for item in said if near is None or item.thread in near] or said
    picks = recommended_rows(nearby, question, options=scope.compared) if scope.pick else []
    return AnswerDraft(
        summary="",
        hidden_gems=hidden_gems(question, nearby, embedder, scope.max_gems, shown=shown),
        minority_report=_unsaid(minority_report(said, len(said)), shown)[: scope.max_dissent],
        pivot_alerts=pivot_alerts(items),  # a title can report a move ("Left Airflow for …")
        comparison_table=comparison_table(scope.compared, nearby, said) + picks,
    )


def sentences_of(items: Sequence[Item], min_chars: int) -> list[Sentence]:
    """The items' claims (``claims.statements``), each once, at least ``min_chars`` long."""
    seen: set[str] = set()
    found: list[Sentence] = []
    for item in items:
        for line in item.text.splitlines():
            for claim in statements(line, asker=item.asker, title=item.is_title):
                key = " ".join(claim.text.lower().split())
                if len(claim.text) < min_chars or key in seen:
                    continue
                seen.add(key)
                found.append(Sentence(claim.text, item))
    return found


def relevance(question: str, texts: Sequence[str], embedder: Embedder) -> Floats:
    """Relevance of each text to the question (``blended_relevance``)."""
    return blended_relevance(question, texts, embedder)


def hidden_gems(
    question: str,
    items: Sequence[Item],
    embedder: Embedder,
    limit: int,
    *,
    shown: Collection[str] = (),
) -> list[DraftClaim]:
    """Comments (score ≥ 1) whose sentences hold specifics, best first, one gem per comment;
    a tip repeated in another comment adds that comment as a citation instead of a gem.

    A gem is news: a sentence the answer already quotes (``shown``) is never part of one, and
    a gem is on the question's subject — at least ``GEM_SUBJECT_SHARE`` of the most relevant
    candidate's relevance (a llama.cpp flag is no gem for a question about VRAM)."""
    quoted = {_key(text) for text in shown}
    found: list[tuple[Item, str, int]] = []
    for item in items:
        if not item.is_comment or item.score < 1:
            continue
        holding = [
            s.text
            for s in sentences_of([item], 1)
            if find_specifics(s.text) and _key(s.text) not in quoted
        ]
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

    floor = GEM_SUBJECT_SHARE * max(float(rel.max()), 0.0)
    chosen: list[DraftClaim] = []
    for index in sorted(range(len(found)), key=rank):
        item, text, _ = found[index]
        if float(rel[index]) < floor:
            continue  # off the question's subject, however specific
        twin = next(
            (c for c in chosen if fuzz.token_set_ratio(c.text, text) >= TWIN_SIMILARITY), None
        )
        if twin is not None:  # the same tip said again elsewhere: one gem, both citations
            if item.marker not in twin.cites:
                twin.cites.append(item.marker)
        elif len(chosen) < limit:
            chosen.append(DraftClaim(text=text, cites=[item.marker]))
    return chosen


def _key(text: str) -> str:
    """A claim compared with others: lower case, spacing folded, its citations left out."""
    return " ".join(re.sub(r"\s*\[[^\[\]]*\]", "", text).lower().split())


def minority_report(items: Sequence[Item], limit: int) -> list[DraftClaim]:
    """Upvoted, reasoned disagreement, most upvoted first; one entry per distinct dissent
    (the same words in another comment add that comment as a citation)."""
    medians: dict[int, float] = {}
    for thread in {item.thread for item in items}:
        scores = [i.score for i in items if i.thread == thread and i.is_comment]
        medians[thread] = statistics.median(scores) if scores else 0.0
    found: list[tuple[int, int, str, Item]] = []
    for position, item in enumerate(items):
        if not item.is_comment or item.asker or item.score <= 1:
            continue  # the asker's replies are their question's context, not dissent
        if item.score < medians[item.thread]:
            continue
        marker = dissent_marker(item.text)
        text = _dissent_text(item, marker) if marker is not None else None
        if text is not None:
            found.append((-item.score, position, text, item))
    found.sort(key=lambda f: (f[0], f[1]))
    chosen: list[DraftClaim] = []
    for _, _, text, item in found:
        quote = text.split(" (argued", 1)[0]
        twin = next(
            (c for c in chosen
             if fuzz.ratio(c.text.split(" (argued", 1)[0], quote) >= TWIN_SIMILARITY),
            None,
        )  # fmt: skip
        if twin is not None:
            if item.marker not in twin.cites:
                twin.cites.append(item.marker)
        elif len(chosen) < limit:
            chosen.append(DraftClaim(text=text, cites=[item.marker]))
    return chosen


def _unsaid(claims: list[DraftClaim], shown: Collection[str]) -> list[DraftClaim]:
    """The dissent no other part of the answer already quotes: a sentence is shown once."""
    said = {_key(text) for text in shown}
    return [
        claim
        for claim in claims
        if not any(_key(s) in said for s in split_sentences(claim.text.split(" (argued")[0]))
    ]


def _dissent_text(item: Item, marker: str) -> str | None:
    """The claims from the marker on, and, when it argued more than a reason, how (in a
    reader's words: its votes are shown beside it); None when it argues nothing (a marker
    alone, "Not sure I agree.", or its sentence alone when short and unspecific, "I was about
    to do the opposite.", is a grunt, not an argument: ``gives_reason``)."""
    claims = [c.text for c in statements(item.text)]
    sentences = [s for s in claims if marker.lower() in s.lower()]
    start = claims.index(sentences[0]) if sentences else _after_marker(item.text, marker, claims)
    argued = claims[start:]
    beyond = [c for c in argued if marker.lower() not in c.lower()]
    if not beyond and not gives_reason(" ".join(argued)):
        return None  # the marker's own sentence, too short to carry a reason
    quote = truncate_words(" ".join(argued[:2]), CLAIM_CHARS)
    specifics = [s.text for s in find_specifics(" ".join(argued))][:3]
    if specifics:
        return f"{quote} (argued with specifics: {', '.join(specifics)})"
    if len(argued) >= ARGUED_CLAIMS:
        return f"{quote} (argued at length)"
    return quote


def _after_marker(text: str, marker: str, claims: Sequence[str]) -> int:
    """Index of the first claim written after the marker (the marker sentence is meta)."""
    where = text.lower().find(marker.lower())
    for index, claim in enumerate(claims):
        if text.find(claim) > where:
            return index
    return len(claims)


def pivot_alerts(items: Sequence[Item]) -> list[DraftPivot]:
    """Moves from one option to another that several posts or comments describe."""
    groups: dict[tuple[str, str], tuple[Pivot, list[Item]]] = {}
    for item in items:
        for pivot in find_pivots(item.text):
            mentions = groups.setdefault(pivot.key, (pivot, []))[1]
            if item.marker not in {m.marker for m in mentions}:
                mentions.append(item)
    ranked = sorted(
        (group for group in groups.values() if len(group[1]) >= MIN_REPLIES),
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


def comparison_table(
    options: Sequence[str], items: Sequence[Item], wider: Sequence[Item] = ()
) -> list[DraftRow]:
    """One row per compared option that the threads mention (needs two options or more).

    An option's claims come from ``items`` (the threads about the question), or from
    ``wider`` (all the evidence) only when those never name it: "Google" in an Alexa thread
    says nothing of Google Wifi when the mesh thread discusses it. Each claim naming the
    option takes a stance toward it (``option_stance``); the verdict counts those that take a
    side (a caveat, "great until …", counts against), and no row says "no clear sentiment"
    while one of its claims takes a side.
    """
    names = list(dict.fromkeys(o.strip() for o in options if o.strip()))
    if len(names) < 2:
        return []
    patterns = {name: option_pattern(name) for name in names}
    near = sentences_of(items, MIN_TABLE_SENTENCE_CHARS)
    rows: list[DraftRow] = []
    for name, pattern in patterns.items():
        others = [p for n, p in patterns.items() if n != name]
        naming = [s for s in near if pattern.search(s.text)] or [
            s for s in sentences_of(wider, MIN_TABLE_SENTENCE_CHARS) if pattern.search(s.text)
        ]
        scored = [(s, option_stance(s.text, pattern, others)) for s in naming]
        if not any(lean != "neutral" for _, lean in scored):
            continue  # mentioned, but no claim takes a side: a count is not a verdict
        positive = sorted((s for s, lean in scored if lean == "positive"), key=_most(1))
        negative = sorted((s for s, lean in scored if lean in {"negative", "caveat"}),
                          key=_most(-1))  # fmt: skip
        pros, cons = positive[:2], negative[:2]
        by_karma = sorted((s for s, _ in scored), key=lambda s: -s.item.score)
        cites = list(dict.fromkeys(s.item.marker for s in [*pros, *cons, *by_karma]))
        rows.append(
            DraftRow(
                option=name,
                verdict=verdict(len(scored), len(positive), len(negative)),
                pros=[truncate_words(s.text, TABLE_SENTENCE_CHARS) for s in pros],
                cons=[truncate_words(s.text, TABLE_SENTENCE_CHARS) for s in cons],
                cites=cites[:MAX_CITES],
            )
        )
    return rows


def _most(sign: int) -> Callable[[Sentence], tuple[float, int]]:
    """Sort key: the most positive (``sign`` 1) or negative (−1) sentence first, the more
    upvoted of equals first (log-scaled: a post's karma is not a comment's votes)."""

    def key(sentence: Sentence) -> tuple[float, int]:
        votes = math.log1p(max(sentence.item.score, 0))
        return (-(sign * compound(sentence.text) + 0.1 * votes), len(sentence.text))

    return key
