"""Answer-quality metrics, as pure functions: key advice, nDCG@5, abstention, answer length.

- **Key advice.** A group of alternative phrases is found when any of its phrases appears in the
  answer text (summary, highlights and cautions, citation markers removed), compared after
  ``normalise``: case, quotes, dashes, zero-width characters and runs of spaces do not matter.
- **nDCG@k**, binary gains, tie-aware (McSherry & Najork, ECIR 2008): threads with equal scores
  share the average gain of their group, so the order a sort happened to leave among ties does
  not change the figure. Expected threads missing from the ranking add nothing; the ideal DCG
  puts ``min(|expected|, k)`` relevant threads first.
- **Abstention**: ``SummarizeResult.abstained`` (the synthesis declined: nothing fetched
  mentions the question's subject). A run that found no posts at all did not abstain.
- **Length**: rows of a terminal ``width`` columns wide (a longer line wraps onto more rows).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

from crowdsift.core.citations import remove_markers
from crowdsift.pipeline.synthesis.models import SummarizeResult

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_LOOKALIKES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
    | {"\u2212": "-", "\u00a0": " "}
)
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` for phrase matching: NFKC, no invisible characters, plain quotes and dashes,
    single spaces, case-folded."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)
    return _SPACES.sub(" ", text).strip().casefold()


def answer_text(summary: SummarizeResult | None) -> str:
    """What a reader reads of an answer: summary, highlights and cautions, without markers."""
    if summary is None:
        return ""
    parts = [summary.summary, *summary.highlights, *summary.cautions]
    return "\n".join(remove_markers(part) for part in parts)


def advice_found(text: str, groups: Sequence[Sequence[str]]) -> list[bool]:
    """For each group of alternative phrases: does any of them appear in ``text``?"""
    haystack = normalise(text)
    return [any(normalise(phrase) in haystack for phrase in group) for group in groups]


def ndcg_at_k(
    ranked: Sequence[tuple[str, float]], relevant: Sequence[str], k: int = 5
) -> float | None:
    """Tie-aware nDCG@k of ``ranked`` (``(id, score)``, best first) against ``relevant`` ids.

    None when nothing is relevant (the figure is undefined, not 0 or 1).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    wanted = {item.lower() for item in relevant}
    if not wanted:
        return None
    seen: set[str] = set()
    unique: list[tuple[str, float]] = []
    for item, score in ranked:
        if item.lower() not in seen:
            seen.add(item.lower())
            unique.append((item.lower(), score))
    dcg = 0.0
    position = 0
    for group in _ties(unique):
        if position >= k:
            break
        gain = sum(1 for item, _ in group if item in wanted) / len(group)
        shown = range(position + 1, min(position + len(group), k) + 1)
        dcg += gain * sum(_discount(rank) for rank in shown)
        position += len(group)
    ideal = sum(_discount(rank) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def _ties(ranked: Sequence[tuple[str, float]]) -> list[list[tuple[str, float]]]:
    """Consecutive runs of equal scores (within 1e-12)."""
    groups: list[list[tuple[str, float]]] = []
    for item in ranked:
        if groups and math.isclose(groups[-1][-1][1], item[1], rel_tol=0.0, abs_tol=1e-12):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


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
