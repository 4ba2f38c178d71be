"""Sentences and truncation: where prose splits, and how to cut it without breaking a quote.

``split_sentences`` gives verbatim pieces of cleaned prose (a regex where every boundary is
plain, pysbd where a full stop is ambiguous: "e.g.", "vs.", "Airflow 3.0"); ``truncate_words``
and ``truncate_at_sentence`` shorten text at a word or sentence boundary, keeping a sentence's
citations with it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

ELLIPSIS = "…"
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*\s+")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "approx", "no", "fig", "inc"}
)
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]+")
"""A word before "." that surely ends a sentence (not "e.g", "3", "U.S", "Fig", "no")."""
SENTENCE_END = re.compile(
    r"(?:[.!?…]+[\"'”’)\]]*(?:\s*\[[^\[\]\n]{1,80}\])*|(?:\s*\[[^\[\]\n]{1,80}\])+)(?=\s|$)"
)
"""Where a sentence ends: its punctuation and the bracketed citations that follow it
(``[post:ID]``, ``[comment:ID]``, ``[n]``), or a run of citations alone."""


def split_sentences(text: str) -> list[str]:
    """Sentences of cleaned prose, each stripped, in order; every one is a piece of ``text``.

    A real sentence splitter (pysbd, English rules) decides wherever a full stop is
    ambiguous: after "e.g.", "i.e.", "vs.", "(e.g.", initials, "no.", or a number ("Airflow
    3.0", "v2.", "3. Anything"). Text whose every boundary is plain (a word of two or more
    letters and then ". ", or "!", "?", "…") is split by a regex: the same answer ~300 times
    faster, and most Reddit comments are like that. Reddit prose is often lower-case after a
    full stop, so the next word's case is not required; text without punctuation stays one
    sentence.
    """
    if not _BOUNDARY.search(text):
        stripped = text.strip()
        return [stripped] if stripped else []
    if not _plain_boundaries(text):
        return list(_segmented(text))
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        sentence = text[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _plain_boundaries(text: str) -> bool:
    """Whether every candidate boundary surely ends a sentence (no abbreviation, no number)."""
    for match in _BOUNDARY.finditer(text):
        if match.group().lstrip(".") != match.group():  # starts with "."
            if match.group().startswith(".."):
                continue  # "..." ends a thought
            before = text[: match.start()].rsplit(None, 1)
            word = before[-1] if before else ""
            if not _PLAIN_WORD.fullmatch(word) or word.lower() in _ABBREVIATIONS:
                return False
    return True


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    import pysbd  # loaded on first use: ~50 ms of rules, not at import

    return pysbd.Segmenter(language="en", clean=False)


@lru_cache(maxsize=8192)
def _segmented(text: str) -> tuple[str, ...]:
    """pysbd's sentences of ``text``, stripped (cached: the synthesis splits a text often)."""
    pieces = [str(piece).strip() for piece in _segmenter().segment(text)]
    sentences = tuple(piece for piece in pieces if piece)
    if all(sentence in text for sentence in sentences):
        return sentences
    return (text.strip(),)  # pysbd altered the text: never quote what was not written


def truncate_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ending with "…".

    A word is cut only when it alone is longer than half the limit (a pasted URL, say), so a
    short limit cannot leave an empty excerpt.
    """
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return text[:limit]
    room = limit - len(ELLIPSIS)
    cut = text[: room + 1]  # one extra character tells whether the cut falls between words
    if cut[-1].isspace():
        head = cut.rstrip()
    else:
        words = cut[:room].rsplit(None, 1)  # empty when the room holds only spaces
        head = words[0] if len(words) > 1 else cut[:room]
        if len(head) < room // 2:
            head = cut[:room]
    head = head.rstrip(" ,;:-–—")
    return f"{head}{ELLIPSIS}"


def truncate_at_sentence(text: str, limit: int) -> str:
    """``text`` cut after its last sentence (and that sentence's citations) within ``limit``;
    at a word boundary with "…" when even the first sentence is too long."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in SENTENCE_END.finditer(text) if m.end() <= limit]
    if ends:
        return text[: ends[-1]].rstrip()
    return truncate_words(text, limit)
