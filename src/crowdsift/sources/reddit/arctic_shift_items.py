"""What an Arctic Shift answer holds, read without I/O: items in or out of their ``kind``
wrappers, their dates, the cursor past a date-ordered page, placeholder engagement, and the
error envelope (see ``arctic_shift``'s module notes for how the API behaves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crowdsift.core.source import RawThing

PENDING_HORIZON = 14 * 86400
"""A post younger than this without ``_meta.retrieved_2nd_on`` has placeholder engagement."""


@dataclass(frozen=True)
class TimeCursor:
    """Where the next date-ordered page starts: at second ``edge``, minus the IDs in ``seen``.

    An empty ``seen`` means "strictly past ``edge``" (used when a full page of one second made
    no progress, so the rest of that second is skipped rather than looping).
    """

    edge: int
    seen: frozenset[str] = frozenset()

    def encode(self) -> str:
        return f"{self.edge}:{','.join(sorted(self.seen))}" if self.seen else str(self.edge)

    @classmethod
    def decode(cls, text: str) -> TimeCursor:
        edge, _, ids = text.partition(":")
        try:
            return cls(int(edge), frozenset(i for i in ids.split(",") if i))
        except ValueError:
            raise ValueError(
                f"{text!r} is not an arctic-shift cursor; pass the 'after' of a page this "
                "source returned (or None for the first page)"
            ) from None

    def bound(self, *, descending: bool) -> int:
        """The exclusive ``before`` (descending) or ``after`` (ascending) for the next request."""
        if descending:
            return self.edge + 1 if self.seen else self.edge
        return self.edge - 1 if self.seen else self.edge

    @classmethod
    def after_page(cls, items: list[RawThing], previous: TimeCursor | None) -> TimeCursor | None:
        """The cursor past ``items`` (the raw page, in API order); None if it has no dates."""
        things = [thing for item in items if (thing := unwrap(item, None)) is not None]
        dated = [(ts, str(t.get("id"))) for t in things if (ts := created_seconds(t)) is not None]
        if not dated:
            return None
        edge = dated[-1][0]
        seen = {item_id for ts, item_id in dated if ts == edge}
        if previous is not None and previous.edge == edge:
            if seen <= previous.seen:  # a full page inside one second, nothing new: skip it
                return cls(edge)
            seen |= previous.seen
        return cls(edge, frozenset(seen))


def engagement_pending(post: RawThing, now: float) -> bool:
    """Whether ``score``/``num_comments`` are still Arctic Shift's first-pass placeholders.

    The stamp decides, not the age (the re-fetch queue runs days late): with ``_meta`` and no
    ``retrieved_2nd_on`` they are placeholders whatever the age (a few posts are never fetched
    again). Without ``_meta`` at all, only a post older than ``PENDING_HORIZON`` is taken as
    final: records from before Arctic Shift stamped its second pass carry no ``_meta``.
    """
    meta = post.get("_meta")
    if isinstance(meta, dict):
        return meta.get("retrieved_2nd_on") is None
    created = created_seconds(post)
    return created is None or now - created < PENDING_HORIZON


def bare_subreddit(text: str) -> str:
    """``text`` without whitespace or a leading ``/r/``, ``r/`` or ``/``."""
    bare = text.strip().removeprefix("/")
    return bare[2:] if bare[:2].lower() == "r/" else bare


def unwrap(item: Any, kind: str | None) -> RawThing | None:
    """A bare ``data`` dict as the search endpoints send it, or the ``data`` of a kind wrapper.

    ``kind=None`` accepts any kind (for dates); otherwise a wrapper of another kind is None.
    """
    if not isinstance(item, dict):
        return None
    if "kind" in item and isinstance(item.get("data"), dict):
        return item["data"] if kind is None or item["kind"] == kind else None
    return item


def created_seconds(item: RawThing) -> int | None:
    """``created_utc`` as whole seconds (the archive has ints, some dumps floats)."""
    value = item.get("created_utc")
    if not isinstance(value, int | float | str) or isinstance(value, bool):
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):  # also "inf", 1e999, an int past ~1e308
        return None


def envelope_error(body: Any) -> str | None:
    """The ``error`` of an Arctic Shift error envelope, if ``body`` is one."""
    if isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"]:
        return str(body["error"])
    return None
