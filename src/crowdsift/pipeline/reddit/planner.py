"""Planning helpers the formulation builds on: subreddit profiles, key phrases, closest subs.

``key_phrases`` extracts key phrases and spelling variants of product names ("plaud.ai",
"plaud ai", "plaud") from a question; ``closest_subreddits`` picks subreddits by embedding
similarity of the question to each subreddit's profile (its top titles in the archive).
``DEFAULT_SUBREDDITS`` are the communities to choose from when the source has no archive to
profile. The plan itself is made by ``crowdsift.pipeline.reddit.formulate`` + ``strategies``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from crowdsift.core.log import get_logger
from crowdsift.core.text import STOPWORDS
from crowdsift.engines.base import LocalKit

log = get_logger(__name__)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+#'-]*[A-Za-z0-9+#]|[A-Za-z0-9]")


class SubredditProfile(BaseModel):
    """A subreddit the planner may choose, described by what is posted there."""

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
    words = _WORD.findall(question)
    products: list[str] = []
    name: list[str] = []
    for index, word in enumerate([*words, "."]):
        starts_name = index == 0 and len(words) > 1 and _is_product_word(words[1], 1)
        if _is_product_word(word, index) or (starts_name and word[:1].isupper()):
            name.append(word)
            continue
        if name:
            products += _name_variants(name)
            name = []
    taken = {part for product in products for part in product.split()}
    phrases: list[str] = []
    singles: list[str] = []
    run: list[str] = []
    for word in [*words, "."]:
        lowered = word.lower()
        if lowered in STOPWORDS or lowered in taken or lowered.isdigit() or lowered == ".":
            phrases += [f"{a} {b}" for a, b in itertools.pairwise(run)]
            singles += [w for w in run if len(w) > 3]
            run = []
        else:
            run.append(lowered)
    ordered = list(dict.fromkeys([*products, *phrases, *singles]))
    return ordered[:limit] or [question.strip()[:60]]


def _is_product_word(word: str, index: int) -> bool:
    lowered = word.lower()
    if lowered in STOPWORDS or lowered.isdigit() or not any(ch.isalpha() for ch in word):
        return False
    distinctive = any(ch.isdigit() or ch in ".-+" for ch in word)
    camel = word[1:] != word[1:].lower()
    return distinctive or camel or (index > 0 and word[:1].isupper())


def _name_variants(name: list[str]) -> list[str]:
    """A product name and its variants: the whole name, then each word's spelling variants."""
    whole = " ".join(w.lower() for w in name)
    variants = [whole] if len(name) > 1 else []
    for word in name[:1] if len(name) > 1 else name:
        variants += product_variants(word)
    return list(dict.fromkeys(variants))


def closest_subreddits(
    kit: LocalKit, question: str, candidates: Sequence[SubredditProfile], k: int
) -> list[str]:
    if not candidates:
        return []
    texts = [question] + [f"r/{c.name}: {c.description}" for c in candidates]
    vectors = kit.embedder.embed(texts)
    scores = vectors[1:] @ vectors[0]
    order = np.argsort(-scores, kind="stable")[:k]
    return [candidates[int(i)].name for i in order]


# Communities the formulation may choose from when the source has no archive to profile.
DEFAULT_SUBREDDITS: tuple[SubredditProfile, ...] = tuple(
    SubredditProfile(name=name, description=description)
    for name, description in (
        ("homeimprovement", "home repair, renovation, contractors, materials, house projects"),
        ("diy", "do it yourself projects, building, fixing and making things at home"),
        ("tools", "power tools, hand tools, drills, impact drivers, battery platforms"),
        ("woodworking", "woodworking, saws, joinery, finishing, shop setup"),
        ("gadgets", "consumer electronics, gadgets, recorders, wearables, reviews"),
        ("productivity", "note taking, meetings, apps and devices for getting things done"),
        ("chatgptcoding", "AI coding assistants, Cursor, Copilot, LLM tools for programmers"),
        ("localllama", "running local LLMs, models, quantisation, inference hardware"),
        ("rag", "retrieval augmented generation, embeddings, vector databases, chunking"),
        ("dataengineering", "data pipelines, orchestration, Airflow, Dagster, warehouses"),
        ("programming", "software development, languages, tools and practices"),
        ("buyitforlife", "durable products that last, recommendations, warranties"),
    )
)
