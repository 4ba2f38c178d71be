"""BM25 over a set of candidate threads (pure): the ranking a source that lists by date cannot
give.

Arctic Shift answers a search with its newest matches; which of them answers the question is
for the client to rank. This is Okapi BM25 as Lucene computes it (Robertson and Zaragoza, "The
Probabilistic Relevance Framework", 2009): ``idf = ln(1 + (N − n + 0.5) / (n + 0.5))`` over
the candidates themselves, term frequency saturating with ``K1`` and normalised by length with
``B``. A thread's document is its title, counted ``TITLE_REPEAT`` times (a title states the
topic; the body wanders), and its body. Words are ``tokenize``'s, compared by their first
``STEM_CHARS`` letters so "models" meets "model" (the same crude stem the lexical anchors use).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from crowdsift.core.models import Candidate
from crowdsift.core.words import STEM_CHARS, STOPWORDS, tokenize

K1 = 1.2
B = 0.75
TITLE_REPEAT = 2


def terms(text: str) -> list[str]:
    """The words BM25 counts: lower-cased, stop words out, stemmed by prefix."""
    return [
        token[:STEM_CHARS]
        for token in tokenize(text)
        if token not in STOPWORDS and (len(token) > 2 or any(ch.isdigit() for ch in token))
    ]


def thread_text(title: str, body: str) -> list[str]:
    """A thread as BM25 sees it: its title ``TITLE_REPEAT`` times, then its body."""
    return terms(f"{title} " * TITLE_REPEAT + body)


def bm25_scores(query: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """Each document's BM25 score for ``query`` (terms as ``terms`` makes them), IDF taken
    over ``documents``; 0.0 for a document sharing no query term."""
    if not documents:
        return []
    wanted = set(query)
    counts = [Counter(t for t in doc if t in wanted) for doc in documents]
    lengths = [len(doc) for doc in documents]
    average = sum(lengths) / len(lengths) or 1.0
    total = len(documents)
    holding = Counter(term for found in counts for term in found)
    idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in holding.items()}
    scores = []
    for found, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        scores.append(sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in found.items()))
    return scores


def rank_candidates(candidates: Sequence[Candidate], words: Sequence[str]) -> list[Candidate]:
    """``candidates`` with ``retrieval`` set to their BM25 score for ``words`` over title and
    body, scaled so the best is 1.0 (for a source whose own order is by date, not relevance);
    unchanged when none shares a word."""
    query = [t for word in words for t in terms(word)]
    scores = bm25_scores(query, [thread_text(c.post.title, c.post.selftext) for c in candidates])
    top = max(scores, default=0.0)
    if top <= 0.0:
        return list(candidates)
    return [
        c.model_copy(update={"retrieval": round(score / top, 6)})
        for c, score in zip(candidates, scores, strict=True)
    ]
