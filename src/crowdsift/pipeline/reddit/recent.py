"""What a live community's recent threads say about it: how far its posts reach, which words
it uses all the time (pure).

A live source lists a subreddit's newest posts in one request (``ListsRecent``). From them:

- ``newest``: when its newest post was made, which a topic's window counts back from, as an
  archive's window does from the newest post it holds (a source whose data stops in the past
  has a "last month" of its own, not an empty one);
- ``doc_freq``: in how many of those posts each word occurs. A word the community uses in
  every other thread ("model" in r/LocalLLaMA) narrows nothing; one it rarely uses
  ("spelling") is what a search that must match few threads should AND (``word_shares``): the
  document frequency in the community's own text, not a list of words written by hand.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from crowdsift.core.source import RawThing

MIN_POSTS = 20
"""Recent posts needed before a word's share of them is taken as how common it is."""
_TOKEN = re.compile(r"[^\W_]+(?:[.+#-][^\W_]+)*")


class RecentProfile(BaseModel):
    """One community as its newest posts show it."""

    name: str
    posts: int = Field(0, ge=0, description="posts read")
    newest: datetime | None = Field(None, description="when the newest of them was made")
    doc_freq: dict[str, int] = Field(
        default_factory=dict, description="lower-cased word → posts (title + body) using it"
    )


def recent_profile(name: str, posts: Sequence[RawThing]) -> RecentProfile:
    """The profile of ``name`` from its newest ``posts`` (raw t3 dicts, any order)."""
    stamps = [float(p["created_utc"]) for p in posts if _is_number(p.get("created_utc"))]
    counts: Counter[str] = Counter()
    for post in posts:
        text = f"{post.get('title') or ''} {post.get('selftext') or ''}".lower()
        counts.update(set(_TOKEN.findall(text)))
    newest = datetime.fromtimestamp(max(stamps), UTC) if stamps else None
    return RecentProfile(name=name, posts=len(posts), newest=newest, doc_freq=dict(counts))


def newest_of(profiles: Sequence[RecentProfile]) -> datetime | None:
    """The newest post of any of ``profiles``; None when none has a dated post."""
    return max((p.newest for p in profiles if p.newest is not None), default=None)


def word_shares(words: Sequence[str], profiles: Sequence[RecentProfile]) -> dict[str, float]:
    """Each of ``words`` with the share (0–1) of the communities' recent posts using it;
    empty with fewer than ``MIN_POSTS`` posts read (a share of two posts says nothing)."""
    total = sum(p.posts for p in profiles)
    if total < MIN_POSTS:
        return {}
    return {word: sum(p.doc_freq.get(word.lower(), 0) for p in profiles) / total for word in words}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
