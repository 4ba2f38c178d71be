"""How the local engine weighs a claim: one score, its weights in settings.

The formula and its weights are documented once, on ``crowdsift.core.config.ScoringConfig``
(``CROWDSIFT_SCORE_*``). ``claim_scores`` blends what a claim says about the question
(similarity, centrality, the question's words it holds, its own penalty), and
``reader_bonus`` adds what a careful reader weighs besides: votes (log-scaled; downvoted
loses), agreement across threads, and what the question's intent asks for (instructions and
fixes for how-to and troubleshooting, stances on the compared options, a reported move when
the question asks about one). ``on_subject`` keeps the answering claims as specific as the
best one. Pure: vectors and claims in, scores out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from crowdsift.core.config.scoring import ScoringConfig
from crowdsift.core.words import content_terms, rarity_weights, word_share
from crowdsift.pipeline.synthesis.candidates import Candidate
from crowdsift.pipeline.synthesis.sections import AnswerScope
from crowdsift.pipeline.synthesis.specifics import find_pivots, option_pattern
from crowdsift.pipeline.synthesis.stance import option_stance

Floats = npt.NDArray[np.float32]

HOW_TO, TROUBLESHOOTING, COMPARISON = "how_to", "troubleshooting", "comparison"
DEFAULT_WEIGHTS = ScoringConfig.model_construct()
"""The documented defaults, for callers that pass no settings (the environment is not read)."""
_MOVE_QUESTION = re.compile(r"\b(?:mov|switch|migrat|leav|left|ditch|replac)\w*", re.IGNORECASE)


def claim_scores(
    query: str,
    candidates: list[Candidate],
    relevance: Floats,
    similarity: Floats,
    weights: ScoringConfig | None = None,
) -> Floats:
    """Each claim's score before the reader's bonus (``ScoringConfig``'s first line)."""
    w = weights or DEFAULT_WEIGHTS
    count = len(candidates)
    if count > 1:
        centrality = (similarity.sum(axis=1) - np.diag(similarity)) / (count - 1)
    else:
        centrality = np.zeros(count, dtype=np.float32)
    lexical = lexical_share(query, candidates)
    penalty = np.array([c.penalty for c in candidates], dtype=np.float32)
    blended = w.relevance * relevance + w.centrality * centrality + w.lexical * lexical - penalty
    return np.asarray(blended, dtype=np.float32)


def term_weights(
    query: str, candidates: list[Candidate]
) -> tuple[list[set[str]], dict[str, float]]:
    """Each claim's content words, and each question word's weight: how rare it is in the
    evidence ("Obsidian" in a Plaud thread says more than "Plaud" does)."""
    held = [content_terms(c.text) for c in candidates]
    return held, rarity_weights(content_terms(query), held)


def lexical_share(query: str, candidates: list[Candidate]) -> Floats:
    """Share of the question's words each claim holds, a word weighted by its rarity."""
    texts = [c.text for c in candidates]
    return np.array(word_share(query, texts, by_rarity=True), dtype=np.float32)


def on_subject(
    query: str, candidates: list[Candidate], scores: Floats, answering: list[int]
) -> list[int]:
    """The answering claims that name something of the question as specific as the best of
    them does: a question word the evidence holds no more often than the best claim's rarest.

    "Best way to drill pocket holes?": the best claim is about pocket screws ("pocket": 1 claim
    of 123); "spritz water on the bit when drilling a long run of holes" names only "drill"
    (27) and "holes" (5), and answers another question. "Tapcons spinning usually means the
    hole is oversized" stays beside "For Tapcons, use the bit … deeper than the screw goes":
    "spinning" is as rare as "screw". A confirmed fix names the symptom in its own words.
    """
    if len(answering) < 2:
        return answering
    held, weight = term_weights(query, candidates)
    top = max(answering, key=lambda i: float(scores[i]))
    specific = max((weight[t] for t in weight if t in held[top]), default=None)
    if specific is None:
        return answering
    return [
        i
        for i in answering
        if candidates[i].fix or any(weight[t] >= specific for t in weight if t in held[i])
    ]


def reader_bonus(
    query: str,
    candidates: list[Candidate],
    similarity: Floats,
    scope: AnswerScope,
    weights: ScoringConfig | None = None,
) -> Floats:
    """What a careful reader weighs besides relevance: votes, agreement, and what the
    question's intent asks for (instructions, fixes, stances on the options, reported moves)."""
    w = weights or DEFAULT_WEIGHTS
    most = max((math.log1p(max(c.votes, 0)) for c in candidates), default=0.0) or 1.0
    agree = _agreement(candidates, similarity, w.agreement)
    agree_weight = w.agree * (1.5 if scope.intent not in {HOW_TO, TROUBLESHOOTING, COMPARISON}
                              else 1.0)  # fmt: skip
    patterns = [option_pattern(o) for o in scope.compared if o.strip()]
    moves = {p.key for p in find_pivots(query)} if _MOVE_QUESTION.search(query) else set()
    bonus = np.zeros(len(candidates), dtype=np.float32)
    for index, candidate in enumerate(candidates):
        value = (
            w.votes * (math.log1p(max(candidate.votes, 0)) / most if candidate.comment else 0.5)
            - (w.downvoted if candidate.comment and candidate.votes < 0 else 0.0)
            + agree_weight * min(agree[index] - 1, w.max_agree)
        )
        if scope.intent in {HOW_TO, TROUBLESHOOTING} and candidate.instruction:
            value += w.instruction
            if candidate.fix:
                value += w.fix if scope.intent == TROUBLESHOOTING else w.fix_how_to
        if scope.intent == COMPARISON and candidate.decision:
            value += w.decision
        if patterns and takes_side_on_options(candidate.text, patterns):
            value += w.stance + (
                w.both_options if sum(bool(p.search(candidate.text)) for p in patterns) > 1 else 0
            )
        if moves and any(p.key in moves for p in find_pivots(candidate.text)):
            value += w.pivot
        bonus[index] = value
    return bonus


def _agreement(candidates: list[Candidate], similarity: Floats, cosine: float) -> list[int]:
    """How many threads say each claim: its own items' and those of claims alike it."""
    threads = [{item.thread for item in c.items} for c in candidates]
    counts: list[int] = []
    for index in range(len(candidates)):
        alike = np.flatnonzero(similarity[index] >= cosine)
        counts.append(len(set().union(threads[index], *(threads[int(j)] for j in alike))))
    return counts


def takes_side_on_options(text: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    """Names a compared option and leans for or against it."""
    named = [p for p in patterns if p.search(text)]
    return any(
        option_stance(text, p, [o for o in patterns if o is not p]) != "neutral" for p in named
    )
