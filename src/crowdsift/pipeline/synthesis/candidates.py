"""Evidence as candidates for the local answer: items (titles, bodies, comments) and the
claims in them, each once (pure).

An *item* is one citable text; a *candidate* is one claim (``claims.statements``) with the
items that say it word for word — repetition is agreement, shown once and cited to each (up to
``MAX_CITES``), never quoted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from crowdsift.core.citations import strip_quoted_citations
from crowdsift.core.sentences import ELLIPSIS
from crowdsift.core.words import tokenize
from crowdsift.pipeline.synthesis.claims import asks, statements
from crowdsift.pipeline.synthesis.models import SummarizeRequest

MIN_SENTENCE_CHARS = 25
"""Shorter than this, a claim or a whole reply ("This.", "lol", "+1") agrees or jokes; it does
not answer."""
MAX_CITES = 3
"""A claim said in many comments cites this many of them (the first, in evidence order)."""
TRUNCATED_PENALTY = 0.05


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
    asker: bool = False
    """The asker's own words (the body of a post that asks, or a comment its author wrote in
    their thread): background, not claims, unless they report what solved it."""


@dataclass(frozen=True)
class Candidate:
    """One claim, the items that say it (first: where it is quoted from), and its kind."""

    text: str
    item: Item
    penalty: float = 0.0
    also: tuple[Item, ...] = field(default=(), compare=False)
    """Other items saying exactly this (agreement): cited too, up to ``MAX_CITES``."""
    instruction: bool = False
    fix: bool = False
    risk: bool = False
    decision: bool = False

    @property
    def items(self) -> tuple[Item, ...]:
        return (self.item, *self.also)

    @property
    def votes(self) -> int:
        return max(item.score for item in self.items if item.is_comment) if self.comment else 0

    @property
    def comment(self) -> bool:
        return any(item.is_comment for item in self.items)

    def cited(self) -> str:
        markers = list(dict.fromkeys(item.marker for item in self.items))[:MAX_CITES]
        return f"{self.text} [{', '.join(markers)}]"


def items_of(request: SummarizeRequest) -> list[Item]:
    """Titles, bodies and comments of the evidence, in evidence order.

    Quotes keep no citation their author typed (``strip_quoted_citations``). Comments without
    an id of their own (a video's) are cited through their post. The body of a Reddit post
    that asks, and each comment its asker wrote in the thread ("I have a 3060", "I'll try
    that"), are marked ``asker``: background, not an answer (a video's description or a
    product's text is not a question's context).
    """
    items: list[Item] = []
    for number, post in enumerate(request.post_payloads):
        marker = f"post:{post.post_id}"
        title = strip_quoted_citations(post.title)
        body = strip_quoted_citations(post.body_excerpt)
        items.append(Item(marker, title, post.post_karma, -1, number, is_comment=False,
                          is_title=True))  # fmt: skip
        items.append(Item(marker, body, post.post_karma, -1, number, is_comment=False,
                          asker=post.kind == "reddit" and asks(title, body)))  # fmt: skip
        for comment in post.comments:
            cited = f"comment:{comment.comment_id}" if comment.comment_id else marker
            items.append(Item(cited, strip_quoted_citations(comment.excerpt), comment.score,
                              comment.depth, number, is_comment=True,
                              asker=comment.by_asker))  # fmt: skip
    return items


def candidates_of(items: Sequence[Item]) -> list[Candidate]:
    """Every claim in evidence order, each once (``claims.statements``).

    Dropped besides what is never a claim: claims shorter than ``MIN_SENTENCE_CHARS``. A claim
    repeated word for word in other items is one candidate citing them too.
    """
    order: list[str] = []
    found: dict[str, tuple[str, list[Item], bool, bool, bool, bool]] = {}
    for item in items:
        for claim in statements(item.text, asker=item.asker, title=item.is_title):
            key = " ".join(tokenize(claim.text))
            if len(claim.text) < MIN_SENTENCE_CHARS or not key:
                continue
            if key in found:
                if item not in found[key][1]:
                    found[key][1].append(item)
                continue
            order.append(key)
            kinds = (claim.instruction, claim.fix, claim.risk, claim.decision)
            found[key] = (claim.text, [item], *kinds)
    candidates: list[Candidate] = []
    for key in order:
        text, said_by, instruction, fix, risk, decision = found[key]
        candidates.append(
            Candidate(
                text,
                said_by[0],
                _penalty(text),
                tuple(said_by[1:]),
                instruction=instruction,
                fix=fix,
                risk=risk,
                decision=decision,
            )
        )
    return candidates


def _penalty(sentence: str) -> float:
    """Cut-off sentences say less."""
    return TRUNCATED_PENALTY if sentence.endswith(ELLIPSIS) else 0.0
