"""The local engine's answer: extractive, deterministic, and cited sentence by sentence.

No model writes anything here. The evidence the selector chose (bodies and comment excerpts)
becomes *items*, each citable as ``[post:ID]`` or ``[comment:ID]``; items become *claims*
(``claims``: no questions, askers' background, meta, credentials, fragments or titles), and
every part of the answer is claims people wrote, chosen the way a careful reader would:

- **each claim once**: the same sentence in several comments is one candidate citing each
  (``[comment:a, comment:b]``) — repetition is agreement, shown once;
- **scored** by ``claim_scores`` (similarity to the question, centrality, the question's rare
  words, votes, agreement, and what the question's intent asks for; its weights live there);
- **summary**: the best-voted replies that respond (``voted``), one in turn with the claims
  picked here: first the direct answer — up to ``LEAD_SENTENCES`` of the best claims of the
  intent's kind (instructions, option verdicts, agreed claims) that are also relevant — then
  more claims by maximal marginal relevance (λ = 0.7), within the character budget and
  ``MAX_SUMMARY_SENTENCES``. Claims scoring under half the best are left out even when budget
  remains: a summary padded with off-topic sentences is worse than a short one.
- **highlights**: further strong, short, distinct claims that are not risks; **cautions**:
  relevant risks and caveats (``claims.is_risk``: never a tip), none repeating the summary.
- **hidden gems, minority report, pivot alerts, comparison table**: ``sections.draft_sections``.

Every claim is embedded once, in one batch, and every tie is broken by evidence order, so
equal inputs give equal output. Votes, karma and dates are filled in by the grounding check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from crowdsift.core.config.scoring import ScoringConfig
from crowdsift.core.sentences import truncate_words
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.synthesis.candidates import MAX_CITES, Candidate, candidates_of, items_of
from crowdsift.pipeline.synthesis.candidates import MIN_SENTENCE_CHARS as MIN_SENTENCE_CHARS
from crowdsift.pipeline.synthesis.claim_scores import (
    COMPARISON,
    HOW_TO,
    TROUBLESHOOTING,
    claim_scores,
    lexical_share,
    on_subject,
    reader_bonus,
    takes_side_on_options,
)
from crowdsift.pipeline.synthesis.claims import CLAIM_CHARS
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.models import (
    AnswerDraft,
    PostPayload,
    SourceRef,
    SummarizeRequest,
)
from crowdsift.pipeline.synthesis.sections import AnswerScope, draft_sections
from crowdsift.pipeline.synthesis.specifics import option_pattern
from crowdsift.pipeline.synthesis.voted import THREAD_PEER, Quote, thread_context, voted_lead

Floats = npt.NDArray[np.float32]

EMPTY_SUMMARY = "The evidence contains no statements to summarise; read the sources directly."
MMR_LAMBDA = 0.7
NEAR_DUPLICATE = 0.92
"""Cosine above which two sentences count as the same point (never both picked)."""
SUMMARY_FLOOR = 0.5
"""Summary sentences must score at least this share of the best sentence's score."""
CONTEXT_FLOOR = 0.35
"""The same for highlights and cautions, which may reach a little further."""
LEAD_RELEVANCE = 0.6
"""A direct-answer claim must be at least this share of the most question-like claim."""
FIX_EASING = 0.5
"""A fix its author confirms ("That fixed it") needs half the relevance: it names the symptom
in its own words ("transfer sticks at 0%" for "stopped syncing")."""
LEAD_LEXICAL = 0.25
"""An instruction in the direct answer names more of the question than this (words weighted
by rarity, ``lexical_share``): "get the Note" does not answer how to set it up with Obsidian."""
LEAD_SENTENCES = {"how_to": 3, "troubleshooting": 3, "comparison": 2, "general": 2}
"""How many claims make the direct answer, by intent (instructions come in steps)."""
MAX_SUMMARY_SENTENCES = {"how_to": 4, "troubleshooting": 4, "comparison": 4, "general": 5}
"""The summary's length in claims, by intent: a fix needs no padding."""


def local_answer(
    request: SummarizeRequest,
    config: SynthesisConfig,
    embedder: Embedder,
    *,
    scope: AnswerScope,
) -> AnswerDraft:
    """The whole extractive draft: summary within budget, highlights, cautions, sources, and
    the staff-engineer sections (ids only; grounding turns them into checked citations)."""
    items = items_of(request)
    candidates = candidates_of(items)
    quotes = voted_lead(
        request, embedder, intent=scope.intent, compared=scope.compared,
        budget=config.summary_char_budget,
    )  # fmt: skip
    if not candidates:  # no sentence stands alone as a claim; the voted replies still answer
        found = draft_sections(
            request.query, items, embedder, scope, shown=[q.text for q in quotes]
        )
        summary = _within([q.cited() for q in quotes], config.summary_char_budget)
        update = {"summary": summary or EMPTY_SUMMARY, "sources": _quoted_sources(request, quotes)}
        return found.model_copy(update=update)
    scored = _scored(request, candidates, embedder, scope, config.scoring)
    summary_ids, caution_ids, highlight_ids = _chosen(request, candidates, scored, scope, config)
    quoted = {f"comment:{q.comment_id}" for q in quotes}

    def fresh(ids: Sequence[int]) -> list[int]:  # what the lead quotes is not said again
        return [i for i in ids if not any(it.marker in quoted for it in candidates[i].items)]

    summary_ids, caution_ids, highlight_ids = (
        fresh(summary_ids), fresh(caution_ids), fresh(highlight_ids)
    )  # fmt: skip
    summary = _within(
        _interleaved(
            [q.cited() for q in quotes],
            _summary_pieces(candidates, summary_ids, config.summary_char_budget),
        ),
        config.summary_char_budget,
    )
    shown = [candidates[i].text for i in (*summary_ids, *caution_ids, *highlight_ids)]
    shown += [q.text for q in quotes]
    found = draft_sections(request.query, items, embedder, scope, shown=shown, near=scored.near)
    return found.model_copy(
        update={
            "summary": summary,
            "highlights": [candidates[i].cited() for i in highlight_ids],
            "cautions": [candidates[i].cited() for i in caution_ids],
            "sources": _quoted_sources(request, quotes)
            + _sources(request, [candidates[i] for i in summary_ids]),
        }
    )


@dataclass(frozen=True)
class _Scored:
    """The claims scored against the question and each other, and the threads near it."""

    scores: Floats
    similarity: Floats
    """Claim × claim cosine."""
    relevance: Floats
    """Each claim's cosine to the question."""
    near: set[int]
    """The threads about as close to the question as the closest one (``_peer_threads``)."""
    peers: set[int]
    """The claims said in one of the ``near`` threads."""


def _scored(
    request: SummarizeRequest,
    candidates: list[Candidate],
    embedder: Embedder,
    scope: AnswerScope,
    weights: ScoringConfig,
) -> _Scored:
    """Every claim embedded once, in one batch with the question and each thread's context."""
    contexts = [thread_context(post) for post in request.post_payloads]
    vectors = embedder.embed([request.query, *(c.text for c in candidates), *contexts])
    split = len(vectors) - len(contexts)
    threads, vectors = vectors[split:], vectors[:split]
    similarity: Floats = vectors[1:] @ vectors[1:].T
    relevance: Floats = vectors[0] @ vectors[1:].T
    scores = claim_scores(request.query, candidates, relevance, similarity, weights)
    scores = scores + reader_bonus(request.query, candidates, similarity, scope, weights)
    near = _peer_threads(request.post_payloads, threads @ vectors[0])
    peers = {i for i, c in enumerate(candidates) if any(it.thread in near for it in c.items)}
    return _Scored(scores, similarity, relevance, near, peers)


def _chosen(
    request: SummarizeRequest,
    candidates: list[Candidate],
    scored: _Scored,
    scope: AnswerScope,
    config: SynthesisConfig,
) -> tuple[list[int], list[int], list[int]]:
    """The claims of the summary (the lead first), the cautions and the highlights."""
    scores, similarity, peers = scored.scores, scored.similarity, scored.peers
    answering = _answering(
        candidates, scores, scored.relevance, lexical_share(request.query, candidates)
    )
    answering = on_subject(request.query, candidates, scores, answering)
    focused = scope.intent in {HOW_TO, TROUBLESHOOTING}  # more steps, not more chatter
    if not focused:  # a step that answers is said wherever (``answering`` holds it to the words)
        answering = [i for i in answering if i in peers] or answering
    lead = _pick_lead(candidates, scores, similarity, answering, scope)
    lead = lead if focused else [i for i in lead if i in peers]
    most = MAX_SUMMARY_SENTENCES.get(scope.intent, MAX_SUMMARY_SENTENCES["general"])
    claims = _above(scores, SUMMARY_FLOOR)
    summary_ids = _pick_summary(
        candidates, scores, similarity, config.summary_char_budget, lead, most,
        eligible=answering if focused else [i for i in claims if i in peers] or claims,
    )  # fmt: skip
    context = _above(scores, CONTEXT_FLOOR)  # highlights and cautions: about the question too
    in_context = [i for i in context if i in peers] or context
    caution_ids = _pick_cautions(
        candidates, scores, similarity, config.max_cautions,
        [i for i in in_context if i not in summary_ids],
    )  # fmt: skip
    highlight_ids = mmr_select(
        scores,
        similarity,
        eligible=[
            i
            for i in in_context
            if len(candidates[i].cited()) <= CLAIM_CHARS and not candidates[i].risk
        ],
        accept=lambda _: True,
        limit=config.max_highlights,
        already=tuple(dict.fromkeys((*summary_ids, *caution_ids))),
    )
    highlight_ids = _hear_other_sources(
        request, candidates, scores, in_context, (*summary_ids, *caution_ids), highlight_ids,
        config.max_highlights,
    )  # fmt: skip
    highlight_ids.sort(key=lambda i: (-float(scores[i]), i))  # strongest point first
    return summary_ids, caution_ids, highlight_ids


def _peer_threads(posts: Sequence[PostPayload], closeness: Floats) -> set[int]:
    """The evidence (by index) the answer is made of: the Reddit threads about as close to the
    question as the closest one (``voted.THREAD_PEER`` of its cosine), as the voted lead reads
    them, not a popular thread on something else that shares a word ("Nest or Ring" for a mesh
    Wi-Fi question); and every video and product, which the user asked for by name."""
    reddit = [n for n, post in enumerate(posts) if post.kind == "reddit"]
    best = max((float(closeness[n]) for n in reddit), default=0.0)
    return {
        n for n, post in enumerate(posts)
        if post.kind != "reddit" or float(closeness[n]) >= THREAD_PEER * best
    }  # fmt: skip


def _interleaved(quotes: Sequence[str], claims: Sequence[str]) -> list[str]:
    """The voted replies and the best claims, one of each in turn, a reply first: what the
    community voted up leads, and what many of its members said is not pushed out by it."""
    merged: list[str] = []
    for index in range(max(len(quotes), len(claims))):
        merged += [*quotes[index : index + 1], *claims[index : index + 1]]
    return merged


def _within(pieces: Sequence[str], budget: int) -> str:
    """The pieces in order while they fit ``budget`` characters (the first always)."""
    kept: list[str] = []
    for piece in pieces:
        if kept and len(" ".join([*kept, piece])) > budget:
            break
        kept.append(piece)
    return " ".join(kept)


def _quoted_sources(request: SummarizeRequest, quotes: Sequence[Quote]) -> list[SourceRef]:
    """The threads the lead quotes, in its order."""
    urls = {p.post_id: str(p.url) for p in request.post_payloads}
    return [
        SourceRef(post_id=post_id, url=urls[post_id])
        for post_id in dict.fromkeys(q.post_id for q in quotes)
    ]


def _hear_other_sources(
    request: SummarizeRequest,
    candidates: list[Candidate],
    scores: Floats,
    in_context: list[int],
    used: Sequence[int],
    highlights: list[int],
    limit: int,
) -> list[int]:
    """Each kind of source the person asked for besides Reddit (videos, products) is heard:
    when nothing chosen quotes it, its best relevant claim takes the last highlight."""
    posts = request.post_payloads

    def kind(index: int) -> str:
        return posts[candidates[index].item.thread].kind

    chosen = [*used, *highlights]
    for other in dict.fromkeys(p.kind for p in posts if p.kind != "reddit"):
        if any(kind(i) == other for i in chosen) or limit <= 0:
            continue
        best = next(
            (i for i in sorted(in_context, key=lambda i: (-float(scores[i]), i))
             if kind(i) == other and not candidates[i].risk and i not in chosen),
            None,
        )  # fmt: skip
        if best is None:
            continue
        if len(highlights) >= limit:
            highlights = highlights[:-1]
        highlights = [*highlights, best]
        chosen.append(best)
    return highlights


def _sources(request: SummarizeRequest, used: Sequence[Candidate]) -> list[SourceRef]:
    """The posts the summary quotes, with their permalinks (grounding adds the rest)."""
    posts = request.post_payloads
    numbers = list(dict.fromkeys(item.thread for c in used for item in c.items[:MAX_CITES]))
    return [SourceRef(post_id=posts[n].post_id, url=str(posts[n].url)) for n in numbers]


def _answering(
    candidates: list[Candidate],
    scores: Floats,
    relevance: Floats,
    lexical: Floats,
) -> list[int]:
    """Claims that may answer: well scored, near the most question-like claim, and naming
    a fair share of what the question names (words weighted by rarity) or being a fix its
    author confirms. A tip about another part of the product
    does not answer the question however well it is voted."""
    best = float(relevance.max())
    named = LEAD_LEXICAL
    return [
        i for i in _above(scores, SUMMARY_FLOOR)
        if (best <= 0 or float(relevance[i]) >= LEAD_RELEVANCE * best * (FIX_EASING if
                                                                        candidates[i].fix else 1))
        and (float(lexical[i]) > named or candidates[i].fix)
    ]  # fmt: skip


def _pick_lead(
    candidates: list[Candidate],
    scores: Floats,
    similarity: Floats,
    answering: list[int],
    scope: AnswerScope,
) -> list[int]:
    """The direct answer: the best answering claims of the kind the question asks for."""
    patterns = [option_pattern(o) for o in scope.compared if o.strip()]
    limit = LEAD_SENTENCES.get(scope.intent, LEAD_SENTENCES["general"])
    if scope.intent in {HOW_TO, TROUBLESHOOTING}:
        kind = [i for i in answering if candidates[i].instruction]
    elif patterns:  # naming a compared option is what makes a verdict relevant
        kind = [
            i
            for i in _above(scores, SUMMARY_FLOOR)
            if takes_side_on_options(candidates[i].text, patterns)
        ]
    else:  # a general question: what answers it, good news or bad
        kind = answering
    if scope.intent != COMPARISON:
        return mmr_select(scores, similarity, eligible=kind, accept=lambda _: True, limit=limit)
    # A comparison is answered by which option wins and by how to choose: the best verdict,
    # then the best decision rule ("If you already run Postgres, start with pgvector."), then
    # more verdicts.
    decisions = [i for i in _above(scores, SUMMARY_FLOOR) if candidates[i].decision]
    lead = mmr_select(scores, similarity, eligible=kind, accept=lambda _: True, limit=1)
    lead += mmr_select(
        scores, similarity, eligible=decisions, accept=lambda _: True, limit=1, already=tuple(lead)
    )
    return lead + mmr_select(
        scores, similarity, eligible=kind, accept=lambda _: True,
        limit=max(limit - len(lead), 0), already=tuple(lead),
    )  # fmt: skip


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
    candidates: list[Candidate],
    scores: Floats,
    similarity: Floats,
    budget: int,
    lead: Sequence[int] = (),
    most: int = MAX_SUMMARY_SENTENCES["general"],
    *,
    eligible: list[int] | None = None,
) -> list[int]:
    """The lead (the direct answer) first, then the best remaining claims by MMR, within the
    character budget and ``MAX_SUMMARY_SENTENCES``."""
    used = 0

    def fits(index: int) -> bool:
        nonlocal used
        needed = len(candidates[index].cited()) + (1 if used else 0)
        if used + needed > budget:
            return False
        used += needed
        return True

    picked = [i for i in lead if fits(i)]
    if eligible is None:
        eligible = _above(scores, SUMMARY_FLOOR)
    picked += mmr_select(
        scores, similarity, eligible=eligible, accept=fits,
        limit=max(most - len(picked), 0), already=tuple(picked),
    )  # fmt: skip
    if not picked:  # even the best sentence is longer than the budget: it is cut below
        picked = [int(lead[0]) if lead else int(np.argmax(scores))]
    return picked


def _summary_pieces(candidates: list[Candidate], picked: list[int], budget: int) -> list[str]:
    pieces = [candidates[i].cited() for i in picked]
    if len(pieces) == 1 and len(pieces[0]) > budget:
        only = candidates[picked[0]]
        citation = only.cited()[len(only.text) :]
        pieces = [truncate_words(only.text, max(1, budget - len(citation))) + citation]
    return pieces


def _pick_cautions(
    candidates: list[Candidate],
    scores: Floats,
    similarity: Floats,
    limit: int,
    eligible: list[int],
) -> list[int]:
    """Relevant risks and caveats (never tips), most relevant first, no two alike."""

    def rank(index: int) -> tuple[float, int]:
        return (-float(scores[index]), index)

    picked: list[int] = []
    risks = [i for i in eligible if candidates[i].risk and len(candidates[i].text) <= CLAIM_CHARS]
    for index in sorted(risks, key=rank):
        if len(picked) >= limit:
            break
        if all(float(similarity[index, other]) < NEAR_DUPLICATE for other in picked):
            picked.append(index)
    return picked
