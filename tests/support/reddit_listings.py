"""Reddit's Listing JSON, built from plain t3/t1 data dicts: the pure half of the fake server.

Shapes follow what oauth.reddit.com returns:

* a Listing is ``{"kind": "Listing", "data": {"after", "before", "dist", "modhash",
  "geo_filter", "children": [{"kind": "t3"|"t1"|"more", "data": {...}}]}}``;
* ``/r/{sub}/search`` answers one Listing of t3 things, ``after`` being the fullname of the last
  item when more remain, else null;
* ``/comments/{id}`` answers ``[post listing, comment listing]``; every comment carries
  ``depth`` and ``replies`` (a nested Listing, or ``""`` when it has none); comments cut off by
  ``limit`` become a ``more`` stub listing their ids, replies cut off by ``depth`` a ``more``
  stub with ``id: "_"`` and no children ("continue this thread").
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from typing import Any

Thing = dict[str, Any]

_TIME_WINDOWS = {
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 31 * 86400,
    "year": 366 * 86400,
}
_SEARCH_SORT_KEYS = {"new": "created_utc", "top": "score", "comments": "num_comments"}
_COMMENT_SORT_KEYS = {"new": "created_utc", "top": "score"}


def listing(children: Iterable[Thing], *, after: str | None = None) -> Thing:
    """Wrap ``{"kind", "data"}`` things in a Listing exactly as Reddit does."""
    items = list(children)
    return {
        "kind": "Listing",
        "data": {
            "after": after,
            "dist": len(items),
            "modhash": "",
            "geo_filter": "",
            "children": items,
            "before": None,
        },
    }


def complete_post(post: Thing, subreddit: str) -> Thing:
    """A copy of a t3 data dict with the fields Reddit always sends filled in when missing."""
    if not post.get("id"):
        raise ValueError("every post needs an 'id' (base36, without the t3_ prefix)")
    data = dict(post)
    data.setdefault("name", f"t3_{data['id']}")
    data.setdefault("subreddit", subreddit)
    slug = "_".join(re.findall(r"[a-z0-9]+", str(data.get("title", "")).lower())[:8]) or "post"
    data.setdefault("permalink", f"/r/{data['subreddit']}/comments/{data['id']}/{slug}/")
    return data


def _sorted(items: Sequence[Thing], sort: str, keys: dict[str, str]) -> list[Thing]:
    key = keys.get(sort)
    if key is None:  # relevance / hot / confidence: the order the test gave
        return list(items)
    return sorted(items, key=lambda item: float(item.get(key) or 0), reverse=True)


def search_listing(
    posts: Sequence[Thing],
    query: str,
    *,
    sort: str = "relevance",
    time_filter: str = "all",
    limit: int = 25,
    after: str | None = None,
    now: float | None = None,
) -> Thing:
    """Posts matching ``query`` (case-insensitive), paged.

    Like Reddit's search: alternatives joined by an uppercase ``OR`` match when any of them
    does; an alternative matches when the text contains every one of its tokens (quotes of a
    ``"phrase"`` are ignored, the fake has no phrase semantics).
    """
    alternatives = [part.replace('"', " ").lower().split() for part in re.split(r"\s+OR\s+", query)]
    alternatives = [tokens for tokens in alternatives if tokens] or [[]]
    current = time.time() if now is None else now
    window = _TIME_WINDOWS.get(time_filter)
    matches = []
    for post in posts:
        text = f"{post.get('title', '')} {post.get('selftext', '')}".lower()
        if not any(all(token in text for token in tokens) for tokens in alternatives):
            continue
        created = post.get("created_utc")
        if window is not None and isinstance(created, int | float) and current - created > window:
            continue
        matches.append(post)
    ordered = _sorted(matches, sort, _SEARCH_SORT_KEYS)
    start = 0
    if after:
        names = [post["name"] for post in ordered]
        if after not in names:
            return listing([])  # Reddit answers an unknown cursor with an empty page
        start = names.index(after) + 1
    page = ordered[start : start + max(1, min(limit, 100))]
    more = start + len(page) < len(ordered)
    next_after = page[-1]["name"] if page and more else None
    return listing(({"kind": "t3", "data": post} for post in page), after=next_after)


class CommentTree:
    """Flat t1 dicts (linked by ``parent_id``) served as Reddit's nested comment Listing."""

    def __init__(self, post_id: str, comments: Sequence[Thing], sort: str = "confidence") -> None:
        self.post_id = post_id
        self.children: dict[str, list[Thing]] = {}
        for raw in comments:
            if not raw.get("id"):
                raise ValueError("every comment needs an 'id' (base36, without the t1_ prefix)")
            data = dict(raw)
            data.setdefault("name", f"t1_{data['id']}")
            data.setdefault("link_id", f"t3_{post_id}")
            data.setdefault("parent_id", f"t3_{post_id}")
            self.children.setdefault(data["parent_id"], []).append(data)
        for parent, kids in self.children.items():
            self.children[parent] = _sorted(kids, sort, _COMMENT_SORT_KEYS)

    def render(self, *, limit: int, depth: int) -> Thing:
        """The comment Listing: at most ``limit`` comments, ``depth`` levels, ``more`` stubs."""
        budget = [max(limit, 1)]
        kids = self._level(f"t3_{self.post_id}", 0, max(depth, 1), budget)
        return listing(kids)

    def _level(self, parent: str, level: int, depth: int, budget: list[int]) -> list[Thing]:
        things: list[Thing] = []
        kids = self.children.get(parent, [])
        for index, comment in enumerate(kids):
            if budget[0] <= 0:
                things.append(self._more(parent, level, kids[index:]))
                break
            budget[0] -= 1
            things.append({"kind": "t1", "data": self._comment(comment, level, depth, budget)})
        return things

    def _comment(self, comment: Thing, level: int, depth: int, budget: list[int]) -> Thing:
        data = dict(comment)
        data["depth"] = level
        fullname = data["name"]
        if not self.children.get(fullname):
            data["replies"] = ""
        elif level + 1 >= depth:  # "continue this thread"
            stub = {
                "kind": "more",
                "data": {
                    "count": self._descendants(fullname),
                    "name": "t1__",
                    "id": "_",
                    "parent_id": fullname,
                    "depth": level + 1,
                    "children": [],
                },
            }
            data["replies"] = listing([stub])
        else:
            data["replies"] = listing(self._level(fullname, level + 1, depth, budget))
        return data

    def _more(self, parent: str, level: int, left_out: list[Thing]) -> Thing:
        """A "load more comments" stub for the siblings ``limit`` cut off."""
        count = sum(1 + self._descendants(c["name"]) for c in left_out)
        return {
            "kind": "more",
            "data": {
                "count": count,
                "name": left_out[0]["name"],
                "id": left_out[0]["id"],
                "parent_id": parent,
                "depth": level,
                "children": [c["id"] for c in left_out],
            },
        }

    def _descendants(self, fullname: str) -> int:
        return sum(1 + self._descendants(c["name"]) for c in self.children.get(fullname, []))
