"""Comment trees: the first ``limit`` comments of a thread, ``depth`` levels deep, in pre-order.

The Reddit branch's deep drill reads a thread the way a person does: a comment, then the replies
under it, best first. Sources hand comments over in two shapes, and each has a pure function:

- ``comment_tree`` takes *flat* comments linked by ``parent_id`` (Arctic Shift, the local
  archive, in-memory fakes). It builds the tree itself and orders siblings "top": score
  descending, then oldest first, then by id, so the result never depends on input order.
- ``flatten_listing`` takes Reddit's *nested* Listing (``/comments/{id}``: every comment's
  ``replies`` is ``""`` or a Listing). Reddit already sorted it (``sort=top``), so its order is
  kept; only the structure is checked.
- ``collapsed_tree`` takes Arctic Shift's ``/api/comments/tree`` answer (nested like Reddit's,
  with ``more`` stubs where its ``limit`` collapsed comments) and unnests it into flat comments
  for ``comment_tree`` plus the collapsed ids, shallowest stubs first, for expansion by id.

Both drop what must never reach the evidence: ``more`` stubs, comments of another thread,
duplicates, and orphans (a comment whose parent is not among the comments given). An orphan
is dropped rather than promoted to the top level, because its place in the conversation, and
so its meaning, is unknown. Every returned dict is a shallow copy carrying an int ``depth``
(0 = top-level) and a prefixed ``parent_id`` (``t3_<post>`` or ``t1_<comment>``); the inputs
are never changed. Nothing here performs I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from crowdsift.core.log import get_logger
from crowdsift.core.source import RawThing

log = get_logger(__name__)

_PREFIXES = ("t1_", "t3_")


def comment_tree(
    raw_comments: Iterable[Any], post_id: str, *, limit: int, depth: int
) -> list[RawThing]:
    """Flat raw t1 comments of ``post_id`` as a pre-order tree walk, top siblings first.

    ``depth=1`` keeps top-level comments only; ``limit < 1`` or ``depth < 1`` gives ``[]``.
    Items may be bare t1 ``data`` dicts or ``{"kind": "t1", "data": ...}`` wrappers.
    """
    if limit < 1 or depth < 1:
        return []
    post = _bare(post_id)
    root = f"t3_{post}"
    children: dict[str, list[tuple[str, RawThing]]] = {}
    seen: set[str] = set()
    other_thread = 0
    for item in raw_comments:
        data = _t1_data(item)
        comment_id = _comment_id(data)
        if data is None or comment_id is None or comment_id in seen:
            continue
        if not _same_thread(data, post):
            other_thread += 1
            continue
        parent = _parent_fullname(data.get("parent_id"), post)
        if parent is None:
            continue
        seen.add(comment_id)
        children.setdefault(parent, []).append((comment_id, data))
    for siblings in children.values():
        siblings.sort(key=_top_order)

    out: list[RawThing] = []
    stack = [(cid, data, 0, root) for cid, data in reversed(children.get(root, []))]
    while stack and len(out) < limit:
        comment_id, data, level, parent = stack.pop()
        out.append(_placed(data, level, parent))
        if level + 1 < depth:
            fullname = f"t1_{comment_id}"
            replies = children.get(fullname, [])
            stack.extend((cid, kid, level + 1, fullname) for cid, kid in reversed(replies))
    log.debug(
        "comment_tree", post_id=post, placeable=len(seen), kept=len(out), other_thread=other_thread
    )
    return out


def flatten_listing(
    children: Iterable[Any], post_id: str, *, limit: int, depth: int
) -> list[RawThing]:
    """Reddit's nested comment Listing children as a flat pre-order list, Reddit's order kept.

    A comment whose ``parent_id`` disagrees with where it is nested is dropped with its
    replies (the tree would lie otherwise); ``replies`` is removed from the returned copies.
    ``limit < 1`` or ``depth < 1`` gives ``[]``.
    """
    if limit < 1 or depth < 1:
        return []
    post = _bare(post_id)
    root = f"t3_{post}"
    out: list[RawThing] = []
    seen: set[str] = set()
    stack: list[tuple[Any, int, str]] = [(thing, 0, root) for thing in reversed(list(children))]
    while stack and len(out) < limit:
        thing, level, parent = stack.pop()
        data = _t1_data(thing)  # "more" stubs and anything else that is not a comment: None
        comment_id = _comment_id(data)
        if data is None or comment_id is None or comment_id in seen:
            continue
        if not _same_thread(data, post):
            log.debug("comment_other_thread", post_id=post, link_id=data.get("link_id"))
            continue
        given = data.get("parent_id")
        if given is not None and _parent_fullname(given, post) != parent:
            log.debug("comment_misplaced", comment_id=comment_id, parent_id=given, nested=parent)
            continue
        seen.add(comment_id)
        placed = _placed(data, level, parent)
        placed.pop("replies", None)
        out.append(placed)
        if level + 1 < depth:
            fullname = f"t1_{comment_id}"
            replies = _listing_children(data.get("replies"))
            stack.extend((reply, level + 1, fullname) for reply in reversed(replies))
    return out


def collapsed_tree(items: Iterable[Any]) -> tuple[list[RawThing], list[str]]:
    """A nested comment tree as (flat t1 dicts without ``replies``, collapsed comment ids).

    The ids come from ``more`` stubs (``data.children``), shallowest stub first and each id
    once, so a caller that can expand only some expands the ones nearest the top. Nothing is
    checked against the thread here: ``comment_tree`` does that with the flat list.
    """
    comments: list[RawThing] = []
    stubs: list[tuple[int, int, list[str]]] = []  # (level, order met, ids)
    stack: list[tuple[Any, int]] = [(item, 0) for item in reversed(list(items))]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict) and item.get("kind") == "more":
            data = item.get("data")
            kids = data.get("children") if isinstance(data, dict) else None
            if isinstance(kids, list):
                stubs.append((level, len(stubs), [str(k) for k in kids if isinstance(k, str)]))
            continue
        data = _t1_data(item)
        if data is None:
            continue
        replies = data.get("replies")
        nested = replies if isinstance(replies, list) else _listing_children(replies)
        flat = dict(data)
        flat.pop("replies", None)
        comments.append(flat)
        stack.extend((reply, level + 1) for reply in reversed(nested))
    ids = dict.fromkeys(_bare(i) for _, _, kids in sorted(stubs) for i in kids if i.strip())
    return comments, list(ids)


# --- helpers ------------------------------------------------------------------------------


def _bare(value: str) -> str:
    """``t3_abc`` → ``abc``; an id without a prefix as is."""
    text = value.strip()
    return text[3:] if text[:3] in _PREFIXES else text


def _t1_data(item: Any) -> RawThing | None:
    """The t1 ``data`` dict of a bare dict or a ``{"kind": "t1", "data": ...}`` wrapper."""
    if not isinstance(item, dict):
        return None
    if "kind" in item:
        data = item.get("data")
        return data if item["kind"] == "t1" and isinstance(data, dict) else None
    return item


def _comment_id(data: RawThing | None) -> str | None:
    """The bare id of a comment, or None when it has none to link replies to."""
    if data is None:
        return None
    value = data.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None
    return _bare(value)


def _same_thread(data: RawThing, post: str) -> bool:
    """Whether ``link_id`` (prefixed or bare) names this post; a missing one does not."""
    link = data.get("link_id")
    return isinstance(link, str) and _bare(link) == post


def _parent_fullname(parent: object, post: str) -> str | None:
    """``parent_id`` with its prefix; a bare id equal to the post's id is the post itself."""
    if not isinstance(parent, str) or not parent.strip():
        return None
    text = parent.strip()
    if text[:3] in _PREFIXES:
        return text
    return f"t3_{text}" if text == post else f"t1_{text}"


def _number(value: object, default: float) -> float:
    """A sortable number: junk and NaN (which would make the order depend on the input's)
    are ``default``; an integer too large for a float is an infinity of its sign."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        number = float(value)
    except ValueError:
        return default
    except OverflowError:  # an int past ~1e308
        return (math.inf if value > 0 else -math.inf) if isinstance(value, int) else default
    return default if math.isnan(number) else number


def best_first(comments: Iterable[RawThing]) -> list[RawThing]:
    """Comments in Reddit's "top" order (``_top_order``), for a source whose API lists them
    by date only: a caller keeping the first few keeps the best, not the oldest."""
    entries = [(_comment_id(comment) or "", comment) for comment in comments]
    return [comment for _, comment in sorted(entries, key=_top_order)]


def _top_order(entry: tuple[str, RawThing]) -> tuple[float, float, str]:
    """Reddit's "top": score descending; ties oldest first, then by id (stable across runs)."""
    comment_id, data = entry
    score = _number(data.get("score"), 0.0)
    created = _number(data.get("created_utc"), float("inf"))
    return (-score, created, comment_id)


def _placed(data: RawThing, level: int, parent: str) -> RawThing:
    copy = dict(data)
    copy["depth"] = level
    copy["parent_id"] = parent
    return copy


def _listing_children(replies: object) -> list[Any]:
    """The children of a ``replies`` Listing; ``""`` or anything malformed has none."""
    if not isinstance(replies, dict):
        return []
    data = replies.get("data")
    if not isinstance(data, dict):
        return []
    kids = data.get("children")
    return kids if isinstance(kids, list) else []
