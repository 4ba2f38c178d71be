"""Answer-quality metrics, as pure functions over what the reader is given.

- **Key advice.** A group of alternative phrases is found when any of its phrases appears in the
  text measured, compared after ``normalise``: case, quotes, dashes, zero-width characters,
  runs of spaces and the terminal's line wrapping do not matter. The text measured is the
  *shown* answer (the default terminal rendering, not ``--full``) or its *lead*
  (``lead_of``: the paragraph it opens with, before the highlights): advice the reader only
  finds behind ``--full`` was not given to them.
- **Thread rank.** Where the thread that answers the question sits in a ranking of distinct
  threads (``threads_of``: a comment source counts as its post's thread), 1-based, the best of
  the expected threads; None when absent. ``reciprocal_rank`` is 1/rank, 0 when absent (its
  mean is MRR); hit@k is rank ≤ k.
- **Abstention**: ``SummarizeResult.abstained`` (the synthesis declined: nothing fetched
  mentions the question's subject). A run that found no posts at all did not abstain.
- **Length**: rows of a terminal ``width`` columns wide (a longer line wraps onto more rows).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

from crowdsift.pipeline.synthesis.models import SummarizeResult

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_LOOKALIKES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
    | {"\u2212": "-", "\u00a0": " "}
)
_SPACES = re.compile(r"\s+")
_WRAPPED_HYPHEN = re.compile(r"(?<=\w-)\n[ \t]*")
"""A line the terminal broke after a word's hyphen ("force-" / "close"): one word again."""
_THREAD = re.compile(r"/comments/([A-Za-z0-9]+)(?:[/?#]|$)")


def normalise(text: str) -> str:
    """``text`` for phrase matching: NFKC, no invisible characters, plain quotes and dashes,
    hyphenated words the terminal wrapped joined again, single spaces, case-folded."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)
    text = _WRAPPED_HYPHEN.sub("", text)
    return _SPACES.sub(" ", text).strip().casefold()


def advice_found(text: str, groups: Sequence[Sequence[str]]) -> list[bool]:
    """For each group of alternative phrases: does any of them appear in ``text``?"""
    haystack = normalise(text)
    return [any(normalise(phrase) in haystack for phrase in group) for group in groups]


def lead_of(shown: str, *, banner: bool = False) -> str:
    """The direct answer of a rendered answer: its first paragraph (the lines before the first
    blank one), after the one-line sample-data banner when the answer carries one."""
    blocks = [block for block in re.split(r"\n[ \t]*\n", shown.strip("\n")) if block.strip()]
    if banner and blocks:
        blocks = blocks[1:]
    return blocks[0] if blocks else ""


def thread_of(url: str) -> str | None:
    """The post id of the thread a Reddit permalink (post or comment) belongs to."""
    match = _THREAD.search(url)
    return match.group(1).lower() if match else None


def threads_of(urls: Iterable[str]) -> list[str]:
    """The distinct threads of a list of sources in order (a comment counts as its thread;
    a source that is not a Reddit thread, a video or product, is left out)."""
    found = (thread_of(url) for url in urls)
    return list(dict.fromkeys(thread for thread in found if thread is not None))


def best_rank(ranking: Sequence[str], expected: Iterable[str]) -> int | None:
    """The 1-based rank of the first of ``expected`` in ``ranking`` (distinct ids, best
    first), or None when none of them is there."""
    wanted = {item.lower() for item in expected}
    unique = list(dict.fromkeys(item.lower() for item in ranking))
    return next((i + 1 for i, item in enumerate(unique) if item in wanted), None)


def reciprocal_rank(rank: int | None) -> float:
    """1/rank, and 0 for a thread that is not ranked at all."""
    return 0.0 if rank is None else 1.0 / rank


def abstained(summary: SummarizeResult | None) -> bool:
    """Did the answer decline because the evidence does not discuss the question's subject?"""
    return summary is not None and summary.abstained


def terminal_rows(text: str, width: int = 100) -> int:
    """How many rows ``text`` takes in a terminal ``width`` columns wide."""
    if width < 1:
        raise ValueError("width must be at least 1")
    if not text:
        return 0
    return sum(max(1, math.ceil(len(line) / width)) for line in text.removesuffix("\n").split("\n"))


def share(hits: int, total: int) -> float | None:
    """``hits / total``, or None when there is nothing to count."""
    return hits / total if total else None
