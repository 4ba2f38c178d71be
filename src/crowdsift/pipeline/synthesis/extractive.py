"""The local engine's answer: extractive, deterministic, and cited sentence by sentence.

No model writes anything here. The evidence the selector chose (titles, body excerpts, comment
excerpts) becomes *items*, each citable as ``[post:ID]`` or ``[comment:ID]``; items are split
into sentences that remember their item, and every part of the answer is sentences people
wrote, picked by rules:

- **summary**: sentences scored by

      score = 0.65 · similarity to the question      (does it answer what was asked?)
            + 0.25 · centrality                      (do many others say the same thing?)
            + 0.10 · share of the question's words   (a small lexical anchor)

  (less a small penalty for cut-off sentences and for titles that are labels, not claims) and
  picked greedily with maximal marginal relevance (λ = 0.7) until the character budget is full,
  so the summary covers several points instead of repeating the best one. Sentences scoring
  under half the best one are left out even when budget remains: an extractive summary padded
  with off-topic sentences is worse than a short one.
- **highlights**: further strong, short, distinct sentences; **cautions**: relevant sentences
  with risk, failure or disagreement cues.
- **hidden gems, minority report, pivot alerts, comparison table**: ``crowdsift.pipeline.synthesis.
  sections`` over the same items.

Every sentence is embedded once, in one batch, and every tie is broken by evidence order, so
equal inputs give equal output. Votes, karma and dates are filled in by the grounding check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from crowdsift.core.citations import strip_quoted_citations
from crowdsift.core.text import ELLIPSIS, content_terms, split_sentences, tokenize, truncate_words
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.synthesis.config import SummarizerConfig
from crowdsift.pipeline.synthesis.models import AnswerDraft, SourceRef, SummarizeRequest
from crowdsift.pipeline.synthesis.sections import Item, Limits, sections

Floats = npt.NDArray[np.float32]

EMPTY_SUMMARY = "The evidence contains no statements to summarise; read the sources directly."
MIN_SENTENCE_CHARS = 25
HIGHLIGHT_MAX_CHARS = 200
MMR_LAMBDA = 0.7
NEAR_DUPLICATE = 0.92
"""Cosine above which two sentences count as the same point (never both picked)."""
W_RELEVANCE, W_CENTRALITY, W_LEXICAL = 0.65, 0.25, 0.10
TRUNCATED_PENALTY = 0.05
LABEL_TITLE_PENALTY = 0.3
SUMMARY_FLOOR = 0.5
"""Summary sentences must score at least this share of the best sentence's score."""
CONTEXT_FLOOR = 0.35
"""The same for highlights and cautions, which may reach a little further."""
STRONG_CUE_BONUS = 0.05

_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_WEAK_CUES = r"but|however|although|though|careful|issues?|problems?|worse"
_STRONG_CUES = (
    r"don'?t|do not|avoid|broke|broken|breaks|failed|fails|failure|stopped working|died|dead|"
    r"returned|refund(?:ed)?|disagree|risks?|risky|overrated|subscription|privacy|warning|"
    r"beware|regret|downside|drawback|scam|buggy|bugs?|crash(?:es|ed)?|unreliable|not worth|"
    r"hidden fees?|unsafe|dangerous|hazard|warranty|caveat|complain\w*"
)
_CUE = re.compile(rf"\b(?:{_WEAK_CUES}|{_STRONG_CUES})\b", re.IGNORECASE)
_STRONG_CUE = re.compile(rf"\b(?:{_STRONG_CUES})\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:never|not|no|without|hasn'?t|haven'?t|didn'?t)\s+(?:\w+\s+)?$", re.I)


@dataclass(frozen=True)
class Candidate:
    """One evidence sentence, the item it came from, and what it loses in score."""

    text: str
    item: Item
    penalty: float = 0.0

    def cited(self) -> str:
        return f"{self.text} [{self.item.marker}]"


def items_of(request: SummarizeRequest) -> list[Item]:
    """Titles, bodies and comments of the evidence, in evidence order.

    Quotes keep no citation their author typed (``strip_quoted_citations``). Comments without
    an id of their own (a video's) are cited through their post.
    """
    items: list[Item] = []
    for number, post in enumerate(request.post_payloads):
        marker = f"post:{post.post_id}"
        items.append(Item(marker, strip_quoted_citations(post.title), post.post_karma, -1,
                          number, is_comment=False, is_title=True))  # fmt: skip
        items.append(Item(marker, strip_quoted_citations(post.body_excerpt), post.post_karma,
                          -1, number, is_comment=False))  # fmt: skip
        for comment in post.comments:
            cited = f"comment:{comment.comment_id}" if comment.comment_id else marker
            items.append(Item(cited, strip_quoted_citations(comment.excerpt), comment.score,
                              comment.depth, number, is_comment=True))  # fmt: skip
    return items


def candidates_of(items: Sequence[Item]) -> list[Candidate]:
    """Every usable evidence sentence in evidence order, each once.

    Dropped: fragments shorter than ``MIN_SENTENCE_CHARS``, questions (they ask, not tell),
    and sentences with links (a summary must not carry URLs that are not evidence permalinks).
    """
    seen: set[str] = set()
    found: list[Candidate] = []
    for item in items:
        for sentence in split_sentences(" ".join(item.text.split())):
            key = " ".join(tokenize(sentence))
            if (
                len(sentence) < MIN_SENTENCE_CHARS
                or sentence.rstrip(" \"')]”’").endswith("?")
                or _URL.search(sentence)
                or not key
                or key in seen
            ):
                continue
            seen.add(key)
            found.append(Candidate(sentence, item, _penalty(sentence, item.is_title)))
    return found


def _penalty(sentence: str, is_title: bool) -> float:
    """Cut-off sentences say less; a title without a full stop names a topic, not a claim."""
    if sentence.endswith(ELLIPSIS):
        return TRUNCATED_PENALTY
    if is_title and not sentence.endswith((".", "!")):
        return LABEL_TITLE_PENALTY
    return 0.0


def is_caution(text: str) -> bool:
    """A risk, failure or disagreement cue that is not negated ("never died" is not one)."""
    return any(not _NEGATED.search(text[: m.start()]) for m in _CUE.finditer(text))


def local_answer(
    request: SummarizeRequest,
    config: SummarizerConfig,
    embedder: Embedder,
    *,
    limits: Limits,
) -> AnswerDraft:
    """The whole extractive draft: summary within budget, highlights, cautions, sources, and
    the staff-engineer sections (ids only; grounding turns them into checked citations)."""
    items = items_of(request)
    found = sections(request.query, items, embedder, limits)
    candidates = candidates_of(items)
    if not candidates:
        return found.model_copy(update={"summary": EMPTY_SUMMARY})
    vectors = embedder.embed([request.query, *(c.text for c in candidates)])
    similarity: Floats = vectors[1:] @ vectors[1:].T
    scores = _scores(request.query, candidates, vectors[0] @ vectors[1:].T, similarity)
    summary_ids = _pick_summary(candidates, scores, similarity, config.summary_char_budget)
    summary = " ".join(_summary_pieces(candidates, summary_ids, config.summary_char_budget))
    in_context = _above(scores, CONTEXT_FLOOR)
    caution_ids = _pick_cautions(candidates, scores, similarity, config.max_cautions, in_context)
    highlight_ids = mmr_select(
        scores,
        similarity,
        eligible=[i for i in in_context if len(candidates[i].cited()) <= HIGHLIGHT_MAX_CHARS],
        accept=lambda _: True,
        limit=config.max_highlights,
        already=tuple(dict.fromkeys((*summary_ids, *caution_ids))),
    )
    if len(highlight_ids) < config.max_highlights:  # few sentences: reuse short summary ones
        spare = [i for i in summary_ids if len(candidates[i].cited()) <= HIGHLIGHT_MAX_CHARS]
        highlight_ids += spare[: config.max_highlights - len(highlight_ids)]
    highlight_ids.sort(key=lambda i: (-float(scores[i]), i))  # strongest point first
    return found.model_copy(
        update={
            "summary": summary,
            "highlights": [candidates[i].cited() for i in highlight_ids],
            "cautions": [candidates[i].cited() for i in caution_ids],
            "sources": _sources(request, [candidates[i] for i in summary_ids]),
        }
    )


def _sources(request: SummarizeRequest, used: Sequence[Candidate]) -> list[SourceRef]:
    """The posts the summary quotes, with their permalinks (grounding adds the rest)."""
    posts = request.post_payloads
    numbers = list(dict.fromkeys(c.item.thread for c in used))
    return [SourceRef(post_id=posts[n].post_id, url=str(posts[n].url)) for n in numbers]


def _scores(
    query: str, candidates: list[Candidate], relevance: Floats, similarity: Floats
) -> Floats:
    count = len(candidates)
    if count > 1:
        centrality = (similarity.sum(axis=1) - np.diag(similarity)) / (count - 1)
    else:
        centrality = np.zeros(count, dtype=np.float32)
    terms = content_terms(query)
    lexical = np.array(
        [len(terms & content_terms(c.text)) / len(terms) if terms else 0.0 for c in candidates],
        dtype=np.float32,
    )
    penalty = np.array([c.penalty for c in candidates], dtype=np.float32)
    blended = W_RELEVANCE * relevance + W_CENTRALITY * centrality + W_LEXICAL * lexical - penalty
    return np.asarray(blended, dtype=np.float32)


def _above(scores: Floats, share: float) -> list[int]:
    """Indices scoring at least ``share`` of the best score (all of them if none is positive)."""
    best = float(scores.max())
    if best <= 0:
        return list(range(len(scores)))
    return [i for i, score in enumerate(scores) if float(score) >= share * best]


def mmr_select(
    scores: Floats,
    similarity: Floats,
    *,
    eligible: list[int],
    accept: Callable[[int], bool],
    limit: int,
    already: tuple[int, ...] = (),
    lam: float = MMR_LAMBDA,
) -> list[int]:
    """Greedy maximal marginal relevance over ``eligible`` indices.

    Each round takes the best ``lam · score − (1 − lam) · max similarity to those chosen``
    (ties: lowest index, i.e. evidence order). ``already`` are sentences used elsewhere: they
    count as chosen for redundancy but are not returned. Near-duplicates of chosen sentences
    and those ``accept`` refuses (too long for what is left, say) are skipped, not retried.
    """
    remaining = [i for i in eligible if i not in already]
    chosen = list(already)
    picked: list[int] = []
    while remaining and len(picked) < limit:
        if chosen:
            redundancy = similarity[np.ix_(remaining, chosen)].max(axis=1)
        else:
            redundancy = np.zeros(len(remaining), dtype=np.float32)
        marginal = lam * scores[remaining] - (1 - lam) * redundancy
        best = int(np.argmax(marginal))
        index = remaining.pop(best)
        if chosen and float(redundancy[best]) >= NEAR_DUPLICATE:
            continue
        if accept(index):
            picked.append(index)
            chosen.append(index)
    return picked


def _pick_summary(
    candidates: list[Candidate], scores: Floats, similarity: Floats, budget: int
) -> list[int]:
    used = 0

    def fits(index: int) -> bool:
        nonlocal used
        needed = len(candidates[index].cited()) + (1 if used else 0)
        if used + needed > budget:
            return False
        used += needed
        return True

    eligible = _above(scores, SUMMARY_FLOOR)
    picked = mmr_select(scores, similarity, eligible=eligible, accept=fits, limit=len(eligible))
    if not picked:  # even the best sentence is longer than the budget: it is cut below
        picked = [int(np.argmax(scores))]
    return picked


def _summary_pieces(candidates: list[Candidate], picked: list[int], budget: int) -> list[str]:
    pieces = [candidates[i].cited() for i in picked]
    if len(pieces) == 1 and len(pieces[0]) > budget:
        only = candidates[picked[0]]
        citation = f" [{only.item.marker}]"
        pieces = [truncate_words(only.text, max(1, budget - len(citation))) + citation]
    return pieces


def _pick_cautions(
    candidates: list[Candidate],
    scores: Floats,
    similarity: Floats,
    limit: int,
    eligible: list[int],
) -> list[int]:
    """Relevant sentences with risk or disagreement cues, most relevant first, no two alike."""

    def rank(index: int) -> tuple[float, int]:
        strong = _STRONG_CUE.search(candidates[index].text) is not None
        return (-(float(scores[index]) + (STRONG_CUE_BONUS if strong else 0.0)), index)

    picked: list[int] = []
    for index in sorted((i for i in eligible if is_caution(candidates[i].text)), key=rank):
        if len(picked) >= limit:
            break
        if all(float(similarity[index, other]) < NEAR_DUPLICATE for other in picked):
            picked.append(index)
    return picked
