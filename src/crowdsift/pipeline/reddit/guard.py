"""What an engine's formulation may carry: the checks that keep a lying or hijacked model from
steering the searches (pure).

A formulation is a plan for the source, written by a model that has read text from strangers
(the question, the subreddit profiles). Whatever it says, a search term reaches the source only
if it is about the question — it shares a content word with it (``content_terms``; with a
translated question, with the question or its checked translation) — and carries no reference:
no link (``https://``, ``www.``, ``site:``, a Markdown or HTML link, ``host.tld/path``) and no
citation marker (``[post:ID]``, ``post:ID``, ``[3]``, ``t3_abc``). A subreddit is searched only
if the source has it. ``crowdsift.pipeline.reddit.formulate`` replaces what fails by the rules'
draft, part by part, and reports why (``Screened``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crowdsift.core.citations import LINK, MARKER_GROUP
from crowdsift.core.models import normalise_subreddit
from crowdsift.core.words import STOPWORDS, content_terms, tokenize

_REFERENCES = (
    LINK,
    MARKER_GROUP,
    re.compile(
        r"\b[a-z][a-z0-9+.-]*://\S*|\bwww\.\S*|\bsite\s*:\s*\S*|\]\s*\([^()\s]*\)?"
        r"|<\s*a\b[^>]*>?|\bhref\s*=\s*\S*|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+/\S*",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?<![\w/])(?:post|comment)\s*:\s*[a-z0-9_-]+|\[\s*\d{1,3}\s*\]|\bt[13]_[a-z0-9]+",
        re.IGNORECASE,
    ),
)
"""Links (``https://``, ``www.``, ``site:``, Markdown and HTML links, ``host.tld/path``) and
citation markers (``[post:ID]``, ``post:ID``, ``[3]``, ``t3_abc``), each matched whole."""
SHOWN_CHARS = 60
"""How much of a rejected value a reason quotes."""


def carries_reference(text: str, question: str = "") -> bool:
    """Does ``text`` hold a link or a citation marker that ``question`` does not (a search
    needs neither; one the user wrote is the user's)?"""
    own = question.lower()
    return any(
        match.group(0).lower() not in own
        for pattern in _REFERENCES
        for match in pattern.finditer(text)
    )


def shown(text: str) -> str:
    """``text`` quoted for a reason, cut at ``SHOWN_CHARS``."""
    flat = " ".join(text.split())
    cut = flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"
    return f'"{cut}"'


@dataclass(frozen=True)
class Anchor:
    """The question's words a search term must share one: its content words (``content_terms``)
    and its short names ("M3", "AI"), from the question and, for a question in another
    language, its checked translation. ``question`` is the question as asked."""

    question: str
    terms: frozenset[str]
    short: frozenset[str]

    @classmethod
    def of(cls, question: str, *more: str) -> Anchor:
        joined = "\n".join([question, *more])
        return cls(question, frozenset(content_terms(joined)), _short_words(joined))

    def holds(self, text: str) -> bool:
        """Is ``text`` part of the question ("2.10"), or does it share a content word or a
        short name with it?"""
        if " ".join(text.lower().split()) in " ".join(self.question.lower().split()):
            return True
        return bool(content_terms(text) & self.terms or _short_words(text) & self.short)


def _short_words(text: str) -> frozenset[str]:
    """Words of one or two characters that are names, not stop words or numbers ("m3")."""
    return frozenset(
        word
        for word in tokenize(text)
        if len(word) <= 2 and word not in STOPWORDS and not word.isdigit()
    )


@dataclass
class Screened:
    """What survived a screen; the reasons it dropped items for that always count as the
    engine's fault (``dropped``: a reference, a subreddit the source lacks); and the items
    that share no word with the question (``unanchored``): an engine may widen a search with a
    related term, so these count only when nothing of their part is left."""

    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    unanchored: list[str] = field(default_factory=list)


def screen_terms(items: Iterable[str], anchor: Anchor, what: str) -> Screened:
    """``items`` (keywords, queries, options) that carry no reference and share a content word
    with ``anchor``; ``what`` names them in the reasons ("keyword", "search query")."""
    result = Screened()
    for item in items:
        if carries_reference(item, anchor.question):
            result.dropped.append(f"{what} {shown(item)} carries a link or a citation")
        elif not anchor.holds(item):
            result.unanchored.append(item)
        else:
            result.kept.append(item)
    return result


def screen_subreddits(proposed: Iterable[str], known: Sequence[str]) -> Screened:
    """Valid subreddit names from ``proposed``, normalised, each once, that are among ``known``
    (the candidates: the archive's profiles or the directory's closest; all pass when empty)."""
    have = {name.lower() for name in known}
    result = Screened()
    for name in proposed:
        try:
            normal = normalise_subreddit(name)
        except ValueError:
            result.dropped.append(f"subreddit {shown(name)} is not a subreddit name")
            continue
        if have and normal not in have:
            result.dropped.append(f"r/{normal} is not a subreddit this source has")
        elif normal not in result.kept:
            result.kept.append(normal)
    return result
