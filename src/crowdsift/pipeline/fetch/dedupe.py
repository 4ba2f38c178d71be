"""Deduplication, the fetcher's last screen: the same content found twice becomes one candidate.

Four strategies over several subreddits find the same thread more than once, and Reddit
itself multiplies content: cross-posts, reposts of one link, "[x-post from r/...]" copies.
Candidates are one when any of these holds (transitively: A~B and B~C make one group):

1. the same post id (found by two strategies);
2. the same normalised URL (``normalise_url``) among their permalinks and link URLs — two link
   posts to one article, or a cross-post whose link is the original's permalink;
3. titles alike: rapidfuzz ``token_sort_ratio`` of normalised titles (lower-case, emoji and
   punctuation stripped, x-post/crosspost markers removed) at or above ``title_similarity``.
   Titles shorter than ``MIN_FUZZY_TITLE_CHARS`` after normalisation only match by id or URL:
   "Help!" and "Question" from two people are not one post.

A group keeps the member with the most engagement (ties: the earliest found). It gets the union
of the group's strategies (in ``STRATEGIES`` order) and the folded ids in ``duplicates``.
Groups keep the order in which their first member was found. Titles are compared all at once
with ``rapidfuzz.process.cdist``: 300 candidates take a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
from rapidfuzz import fuzz, process

from crowdsift.core.models import STRATEGIES, Candidate, Strategy
from crowdsift.core.text import strip_emoji

MIN_FUZZY_TITLE_CHARS = 12
_HOST_PREFIXES = ("www.", "old.", "new.", "np.", "m.")
_TRACKING_TEXT = """
    ref ref_src ref_source ref_url share_id context fbclid gclid dclid msclkid yclid igshid
    mc_cid mc_eid si feature rdt correlation_id sh _ga spm cmpid
"""
_TRACKING_PARAMS = frozenset(_TRACKING_TEXT.split())
_REDDIT_POST = re.compile(r"^(?:/(?:r|u|user)/[^/]+)?/(?:comments|gallery)/([a-z0-9]+)(?:/|$)")
_REDD_IT = re.compile(r"^/([a-z0-9]+)$")
_DEFAULT_PORTS = {":80", ":443"}


def normalise_url(url: str) -> str:
    """A URL reduced to what identifies its content, so reposts of one link compare equal.

    Lower-case host without scheme, port 80/443, ``www.``/``old.``/``new.``/``np.``/``m.``;
    path without trailing slash (its case kept: YouTube ids are case-sensitive); tracking
    parameters (``utm_*``, ``ref``, ``share_id``, ``context``, ``fbclid`` ...) dropped and the
    rest sorted; fragment dropped. Reddit permalinks, gallery links and ``redd.it/<id>`` all
    become ``reddit.com/comments/<id>``.
    """
    text = url.strip()
    if not text:
        return ""
    parts = urlsplit(text if "://" in text else f"//{text}")
    host = parts.netloc.lower().rsplit("@", 1)[-1]
    for port in _DEFAULT_PORTS:
        host = host.removesuffix(port)
    while host.startswith(_HOST_PREFIXES):
        host = host.split(".", 1)[1]
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    if host == "reddit.com":
        match = _REDDIT_POST.match(path.lower())
        if match:
            return f"reddit.com/comments/{match.group(1)}"
    if host == "redd.it":
        match = _REDD_IT.match(path.lower())
        if match:
            return f"reddit.com/comments/{match.group(1)}"
    params = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key.lower() not in _TRACKING_PARAMS and not key.lower().startswith("utm_")
    ]
    query = urlencode(sorted(params))
    return f"{host}{path}" + (f"?{query}" if query else "")


_XPOST = re.compile(
    r"[\[(]\s*(?:x|cross)[\s-]?post(?:ed)?\b[^\])]*[\])]"
    r"|\b(?:x|cross)[\s-]?post(?:ed)?\s+(?:from|in|to)\s+/?r/\w+"
    r"|\b(?:x|cross)[\s-]?post(?:ed)?\b",
    re.IGNORECASE,
)
_NON_WORD = re.compile(r"[\W_]+")
_NUMBER = re.compile(r"\d+")


def normalise_title(title: str) -> str:
    """Lower-case words of a title, without emoji, punctuation or x-post/crosspost markers."""
    text = _XPOST.sub(" ", title)
    text = _NON_WORD.sub(" ", strip_emoji(text).lower())
    return " ".join(text.split())


@dataclass
class DedupeOutcome:
    """The surviving candidates (first-seen order) and how many were folded into them."""

    kept: list[Candidate]
    removed: int


def dedupe(candidates: Sequence[Candidate], *, title_similarity: float) -> DedupeOutcome:
    """Fold duplicates (same id, same normalised URL, alike titles); see the module docstring."""
    groups = _DisjointSets(len(candidates))
    _union_by_key(groups, candidates)
    _union_by_title(groups, candidates, title_similarity)
    members: dict[int, list[int]] = {}
    for index in range(len(candidates)):
        members.setdefault(groups.find(index), []).append(index)
    ordered = sorted(members.values(), key=lambda group: group[0])
    kept = [_merge([candidates[i] for i in group]) for group in ordered]
    return DedupeOutcome(kept=kept, removed=len(candidates) - len(kept))


def _union_by_key(groups: _DisjointSets, candidates: Sequence[Candidate]) -> None:
    first_with: dict[str, int] = {}
    for index, candidate in enumerate(candidates):
        keys = {f"id:{candidate.post.id}", f"url:{normalise_url(candidate.post.url)}"}
        if candidate.link_url and normalise_url(candidate.link_url):
            keys.add(f"url:{normalise_url(candidate.link_url)}")
        for key in keys:
            if key in first_with:
                groups.union(first_with[key], index)
            else:
                first_with[key] = index


def _union_by_title(
    groups: _DisjointSets, candidates: Sequence[Candidate], threshold: float
) -> None:
    titles = [normalise_title(c.post.title) for c in candidates]
    usable = [i for i, title in enumerate(titles) if len(title) >= MIN_FUZZY_TITLE_CHARS]
    if len(usable) < 2:
        return
    texts = [titles[i] for i in usable]
    scores = process.cdist(
        texts, texts, scorer=fuzz.token_sort_ratio, score_cutoff=threshold, workers=1
    )
    numbers = [frozenset(_NUMBER.findall(text)) for text in texts]
    for a, b in np.argwhere(np.triu(scores >= threshold, k=1)):
        # "Airflow vs Dagster in 2023" and "... in 2024" are different threads, not a repost
        # (a number against none — "10 things" / "Ten things" — is still the same title)
        first, second = numbers[int(a)], numbers[int(b)]
        if not (first and second and first != second):
            groups.union(usable[int(a)], usable[int(b)])


def _merge(group: list[Candidate]) -> Candidate:
    """The group's most engaged member (ties: earliest) with every strategy and folded id."""
    survivor = max(group, key=lambda c: c.engagement)  # max keeps the first of equals
    found: set[Strategy] = {s for c in group for s in c.strategies}
    folded = [
        post_id
        for c in group
        for post_id in (c.post.id, *c.duplicates)
        if post_id != survivor.post.id
    ]
    return survivor.model_copy(
        update={
            "strategies": [s for s in STRATEGIES if s in found],
            "duplicates": list(dict.fromkeys([*survivor.duplicates, *folded])),
        }
    )


class _DisjointSets:
    """Union-find over indexes; the root of a set is its smallest index."""

    def __init__(self, size: int) -> None:
        self._parent = list(range(size))

    def find(self, index: int) -> int:
        while self._parent[index] != index:
            self._parent[index] = self._parent[self._parent[index]]
            index = self._parent[index]
        return index

    def union(self, a: int, b: int) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            low, high = sorted((root_a, root_b))
            self._parent[high] = low
