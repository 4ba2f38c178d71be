"""The archive's full-text query language: a user's search term as a safe FTS5 expression.

Words are ANDed, a literal ``OR`` separates alternatives, plain words match loosely (plural or
singular: the index has no stemmer) and punctuated ones (versions, model numbers, domains)
exactly. Pure: ``search`` runs what this builds.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r'"([^"]*)"|(\S+)')


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_ALPHA_WORD = re.compile(r"[^\W\d_]{4,}")


def _loose(word: str) -> str:
    """A plain word of 4+ letters as a prefix of its stem, so "tapcon" finds "Tapcons" and
    "anchors" finds "anchor" (the index has no stemmer); anything else exactly."""
    if not _ALPHA_WORD.fullmatch(word):
        return _quote(word)
    lowered = word.lower()
    if len(lowered) >= 5 and lowered.endswith("s") and not lowered.endswith("ss"):
        word = word[:-1]
    return _quote(word) + "*"


def _phrase(text: str) -> str:
    """A quoted phrase of plain words as those words within one token of each other, each
    loose; a phrase with other tokens ("plaud.ai app", "WH-1000XM5") exactly as written."""
    words = text.split()
    if len(words) < 2 or not all(_ALPHA_WORD.fullmatch(w) or w.isalpha() for w in words):
        return _loose(text) if len(words) == 1 else _quote(text)
    return "NEAR(" + " ".join(_loose(w) for w in words) + ", 1)"


_INDEX_TOKEN = re.compile(r"[^\W_]+")


def _anywhere(text: str) -> str:
    """A word or phrase for an index without positions: each of its tokens (as the
    tokenizer splits them: "WH-1000XM5" is two), loose, ANDed; no phrase can be asked."""
    return "(" + " AND ".join(_loose(token) for token in _INDEX_TOKEN.findall(text)) + ")"


def subreddit_tokens(sub: str) -> str:
    """A subreddit as the index holds it: its tokens, exact, ANDed. A historic name such as
    ``reddit.com`` (or one with ``_``) is several tokens, and the comments' index takes no
    phrase; the ``p.subreddit = :sub`` check after the match keeps the answer exact."""
    return "(" + " AND ".join(_quote(t) for t in _INDEX_TOKEN.findall(sub) or [sub]) + ")"


def build_terms(term: str, *, positions: bool = True) -> str | None:
    """The user's search term as a safe FTS5 expression (no column filter); None if empty.

    Words are ANDed, a literal upper-case ``OR`` separates alternatives, and plain words match
    loosely (``_loose``: plural or singular); punctuated words (versions, model numbers,
    domains) match exactly. Without ``positions`` (the comments' index), every word and
    phrase is its tokens, ANDed (``_anywhere``)."""
    groups: list[list[str]] = [[]]
    # FTS5's parser ends a string at NUL ("unterminated string"): NUL separates words instead.
    for match in _TOKEN.finditer(term.replace("\x00", " ")):
        phrase, word = match.group(1), match.group(2)
        if word == "OR":
            groups.append([])
            continue
        if word == "AND":
            continue
        text = phrase if phrase is not None else word
        if not any(ch.isalnum() for ch in text):
            continue
        if not positions:
            groups[-1].append(_anywhere(text))
        else:
            groups[-1].append(_phrase(text) if phrase is not None else _loose(text))
    clauses = [" AND ".join(group) for group in groups if group]
    if not clauses:
        return None
    return "(" + " OR ".join(f"({clause})" for clause in clauses) + ")"


def build_match(term: str) -> str | None:
    """``build_terms`` over the posts' title and body; None if empty."""
    terms = build_terms(term)
    return None if terms is None else "{title selftext} : " + terms
