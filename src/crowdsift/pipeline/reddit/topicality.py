"""Which subreddits a question is about, and its key phrases: what the formulation builds on.

``key_phrases`` extracts key phrases and spelling variants of product names ("plaud.ai",
"plaud ai", "plaud") from a question. ``topical_subreddits`` keeps the subreddits whose profile
(its top titles in the archive, or the directory's description) is about the question's words;
``closest_subreddits`` orders those by embedding similarity. A subreddit whose profile shares
nothing with the question is never chosen while another one does: "Airflow vs Dagster?" gets
r/dataengineering, not r/chatgptcoding. The plan itself is made by
``crowdsift.pipeline.reddit.formulate`` + ``strategies``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from crowdsift.core.log import get_logger
from crowdsift.core.words import (
    STEM_CHARS,
    content_terms,
    content_words,
    is_acronym,
    is_stopword,
    looks_like_name,
)
from crowdsift.engines.base import LocalKit

log = get_logger(__name__)

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+#'-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
"""A word of a question as searches use it: "llama.cpp", "c++", "wh-1000xm6" stay whole."""
_NAME_BREAK = re.compile(r"[,;:!?()/&]|\.\s")
"""Punctuation between two words that ends a product name: a list or a new clause."""


class SubredditProfile(BaseModel):
    """A subreddit the formulation may choose, described by what is posted there."""

    name: str
    description: str = ""


def product_variants(token: str) -> list[str]:
    """'plaud.ai' → ['plaud.ai', 'plaud ai', 'plaud']; 'NotePin' stays as written."""
    lowered = token.lower()
    parts = [p for p in re.split(r"[.\-_]", lowered) if p]
    variants = [lowered]
    if len(parts) > 1:
        variants += [" ".join(parts), parts[0]]
    return list(dict.fromkeys(v for v in variants if len(v) > 1))


def key_phrases(question: str, *, limit: int = 5) -> list[str]:
    """Search terms from a question: product-like names with variants, then content phrases.

    A product-like word is capitalised mid-sentence, camel-cased, or mixes letters with a digit,
    dot or hyphen ("Plaud", "NotePin", "plaud.ai", "H1n"); adjacent ones form one name
    ("Plaud Note" → "plaud note", "plaud"). Content phrases are runs of other non-stopwords
    ("voice recorder"). Bare numbers (years, prices) are never terms.
    """
    found = list(WORD.finditer(question))
    words = [_without_possessive(m.group()) for m in found]
    breaks = {
        index
        for index in range(1, len(found))
        if _NAME_BREAK.search(question[found[index - 1].end() : found[index].start()])
    }
    names: list[list[str]] = []
    name: list[str] = []
    for index, word in enumerate([*words, "."]):
        if index in breaks and name:  # "Ollama, llama.cpp or vLLM" names three things
            names.append(name)
            name = []
        starts_name = index == 0 and len(words) > 1 and is_product_word(words[1], 1)
        if starts_name and (not word[:1].isupper() or is_stopword(word.lower())):
            starts_name = False  # "Is Prefect …", "My Plaud …": the name starts after it
        if is_product_word(word, index) or starts_name:
            name.append(word)
            continue
        if name:
            names.append(name)
            name = []
    # A bare acronym ("LLM", "AI", "GPU") names the field; what the question names in it
    # ("Ollama", "vLLM") is the more specific search, so it comes first (stable otherwise).
    names.sort(key=lambda words: len(words) == 1 and is_acronym(words[0]))
    products = [variant for words in names for variant in _name_variants(words)]
    taken = {part for product in products for part in product.split()}
    phrases: list[str] = []
    singles: list[str] = []
    run: list[str] = []
    for word in [*words, "."]:
        lowered = word.lower()
        if is_stopword(lowered) or lowered in taken or lowered.isdigit() or lowered == ".":
            phrases += [f"{a} {b}" for a, b in itertools.pairwise(run)]
            singles += [w for w in run if len(w) > 3]
            run = []
        else:
            run.append(lowered)
    ordered = list(dict.fromkeys([*products, *phrases, *singles]))
    return ordered[:limit] or [question.strip()[:60]]


def _without_possessive(word: str) -> str:
    """ "Dagster's" → "Dagster" (a name's possessive is the name); "what's" stays a stop word."""
    lowered = word.lower().replace("’", "'")
    if lowered.endswith("'s") and not is_stopword(lowered):
        return word[:-2]
    return word


def is_product_word(word: str, index: int) -> bool:
    """Whether ``word`` (the ``index``-th of its question) looks like a name
    (``core.words.looks_like_name``; the first word of a question is capitalised anyway)."""
    return looks_like_name(word, mid_sentence=index > 0)


def _name_variants(name: list[str]) -> list[str]:
    """A product name and its variants: the whole name, then each word's spelling variants."""
    whole = " ".join(w.lower() for w in name)
    variants = [whole] if len(name) > 1 else []
    for word in name[:1] if len(name) > 1 else name:
        variants += product_variants(word)
    return list(dict.fromkeys(variants))


# Words a question uses whatever its topic: they never make a post "about" the question, and
# a search for them finds everything. Compared after a plural strip ("tips" is "tip").
_GENERIC_TEXT = """
advice anything bad big cheap cheapest day decent deal difference everyone everything fix
fixed fixing go going great happen happened help idea issue keep keeping know long make making
need needed new old ok okay option pick problem right start started stop stopped thank tip try
trying want way week well work worked working worse worst wrong year
"""
GENERIC_WORDS = frozenset(_GENERIC_TEXT.split())


TOPIC_SHARE = 0.45
"""A candidate is on the question's topic when its ``topic_scores`` score is at least this share
of the best candidate's: a word the question shares with one title of a profile ("small team",
"data") does not make a community about the question when another one is about it."""
_SATURATION = 2.0
"""Titles mentioning a word count with diminishing weight: n / (n + 2)."""
_NAME_WEIGHT = 3
"""A question word in the subreddit's name counts as this many titles ("airflow" in
r/apacheairflow, "rag" in r/rag)."""


def topic_scores(question: str, candidates: Sequence[SubredditProfile]) -> list[float]:
    """How much each candidate is about ``question``: 0 when its profile shares no content word
    with it, else the question's words it mentions, each weighted by how rare it is among the
    candidates (BM25's idf) and by how many of its titles mention it (saturating).

    A profile is a subreddit's top titles joined with "; " (``profiles.subreddit_profiles``) or
    a built-in description; words compare as ``content_terms`` do (stemmed by prefix).
    """
    words = set(content_words(question))
    terms = {word[:STEM_CHARS] for word in words}
    mentions = [_mentions(candidate, words, terms) for candidate in candidates]
    spread = Counter(term for found in mentions for term in found)
    n = len(candidates)
    return [
        sum(_rarity(n, spread[term]) * k / (k + _SATURATION) for term, k in found.items())
        for found in mentions
    ]


def _mentions(candidate: SubredditProfile, words: set[str], terms: set[str]) -> Counter[str]:
    """Per question term, how many of the candidate's titles mention it (+ its name)."""
    found: Counter[str] = Counter()
    for title in candidate.description.split(";"):
        found.update(content_terms(title) & terms)
    name = candidate.name.lower()
    for word in words:
        if word == name or (len(word) >= STEM_CHARS and word in name):
            found[word[:STEM_CHARS]] += _NAME_WEIGHT
    return found


def _rarity(candidates: int, having: int) -> float:
    return math.log(1 + (candidates - having + 0.5) / (having + 0.5))


def topical_subreddits(
    question: str, candidates: Sequence[SubredditProfile], limit: int
) -> list[str]:
    """The candidates on the question's topic, most about it first (ties keep the candidates'
    order): those scoring at least ``TOPIC_SHARE`` of the best ``topic_scores``, and those whose
    titles name the question's subject (its first key phrase). None when no candidate shares a
    content word with the question."""
    scores = topic_scores(question, candidates)
    best = max(scores, default=0.0)
    if best <= 0:
        return []
    subject = _subject(question)
    ranked = sorted(
        (
            n
            for n, score in enumerate(scores)
            if score >= TOPIC_SHARE * best
            or (subject is not None and subject.search(candidates[n].description))
        ),
        key=lambda n: (-scores[n], n),
    )
    return [candidates[n].name for n in ranked][:limit]


def _subject(question: str) -> re.Pattern[str] | None:
    """The question's first key phrase as a whole phrase ("plaud note"), when it has a content
    word: a community whose titles name it is about the question, however rare its mentions."""
    core = key_phrases(question, limit=1)[0]
    if not content_terms(core):
        return None
    words = r"[\s-]+".join(re.escape(word) for word in core.split())
    return re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE)


def closest_subreddits(
    kit: LocalKit, question: str, candidates: Sequence[SubredditProfile], k: int
) -> list[str]:
    """The ``topical_subreddits`` of ``question`` (at most ``k``), closest by embedding
    similarity first; when no candidate shares a word with the question (another language, a
    product nobody names), the single closest one: never a community with nothing on the topic
    while another has something, and always at least one."""
    if not candidates or k < 1:
        return []
    texts = [question] + [f"r/{c.name}: {c.description}" for c in candidates]
    vectors = kit.embedder.embed(texts)
    scores = vectors[1:] @ vectors[0]
    order = [candidates[int(i)].name for i in np.argsort(-scores, kind="stable")]
    topical = set(topical_subreddits(question, candidates, len(candidates)))
    if not topical:
        return order[:1]
    return [name for name in order if name in topical][:k]
