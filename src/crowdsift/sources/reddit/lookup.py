"""Looking posts up by id at a source: is this post still there, and in what state?

``crowdsift archive purge-deleted`` asks this of every stored post. Two sources can answer:

- ``reddit-api``: ``GET /api/info?id=t3_a,t3_b`` (at most 100 fullnames per request). Reddit
  answers every post that still exists, deleted ones with ``[deleted]`` author/text and removed
  ones with ``removed_by_category`` or ``[removed]``; a post it leaves out no longer exists for
  anyone (``missing_means_gone``).
- ``arctic-shift``: ``GET /api/posts/ids?ids=a,b``. The archive re-fetches posts about a day
  after they appear, so it knows removals made by then, not later ones; and a post it does not
  hold may simply never have been archived, so a missing post is *not* taken as gone.

Both run uncached: a cached answer could be older than the deletion we are looking for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import httpx

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.errors import AuthError, HttpStatusError, ResponseError
from crowdsift.core.source import RawThing
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.reddit.permalink import strip_fullname

INFO_PATH = "/api/info"
ARCTIC_IDS_PATH = "/api/posts/ids"
BATCH = 100


class PostLookup(Protocol):
    """Current state of posts by id: the raw t3 dicts the source still holds."""

    name: SourceName
    missing_means_gone: bool
    """True when a post the source leaves out no longer exists (not merely unknown to it)."""

    def posts(self, post_ids: Sequence[str]) -> dict[str, RawThing]:
        """Bare id → raw t3 dict for the posts the source answered (at most ``BATCH`` ids)."""
        ...

    def close(self) -> None: ...


class _TransportLookup:
    """A lookup over one source's transport; closes the source ``from_settings`` built."""

    def __init__(self, transport: HttpTransport, close: Callable[[], None] | None = None) -> None:
        self.transport = transport
        self._close = close

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None


class RedditInfoLookup(_TransportLookup):
    """``/api/info`` on Reddit's OAuth API."""

    name: SourceName = "reddit-api"
    missing_means_gone = True

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> RedditInfoLookup:
        from crowdsift.sources.reddit.reddit_api import RedditApiSource

        uncached = settings.model_copy(update={"cache_ttl": 0.0})
        source = RedditApiSource.from_settings(
            uncached, http_client=http_client, sleep=sleep, clock=clock
        )
        return cls(source.transport, close=source.close)

    def posts(self, post_ids: Sequence[str]) -> dict[str, RawThing]:
        ids = _bare_ids(post_ids)
        if not ids:
            return {}
        params: dict[str, str | int | float] = {
            "id": ",".join(f"t3_{post_id}" for post_id in ids),
            "raw_json": 1,
        }
        try:
            body = self.transport.get_json(INFO_PATH, params)
        except HttpStatusError as exc:
            if exc.status == 401:
                raise AuthError(
                    f"{exc} Reddit rejects our token: check REDDIT_CLIENT_ID and "
                    "REDDIT_CLIENT_SECRET, or use --source arctic-shift."
                ) from exc
            raise
        children = _listing_children(body, self.transport.display_url(INFO_PATH))
        found = {}
        for child in children:
            if isinstance(child, dict) and child.get("kind") == "t3":
                data = child.get("data")
                if isinstance(data, dict) and data.get("id"):
                    found[str(data["id"])] = data
        return found


class ArcticShiftLookup(_TransportLookup):
    """``/api/posts/ids`` on the Arctic Shift archive API."""

    name: SourceName = "arctic-shift"
    missing_means_gone = False

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> ArcticShiftLookup:
        from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource

        uncached = settings.model_copy(update={"cache_ttl": 0.0})
        source = ArcticShiftSource.from_settings(uncached, http_client=http_client, sleep=sleep)
        return cls(source.transport, close=source.close)

    def posts(self, post_ids: Sequence[str]) -> dict[str, RawThing]:
        ids = _bare_ids(post_ids)
        if not ids:
            return {}
        body = self.transport.get_json(ARCTIC_IDS_PATH, {"ids": ",".join(ids)})
        url = self.transport.display_url(ARCTIC_IDS_PATH)
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            error = body.get("error") if isinstance(body, dict) else None
            raise ResponseError(
                f"GET {url} did not answer with {{'data': [...]}}"
                + (f" (error: {error})" if error else "")
                + "; is ARCTIC_SHIFT_BASE_URL the Arctic Shift API? Try again later."
            )
        return {str(item["id"]): item for item in body["data"] if _has_id(item)}


def build_lookup(settings: Settings, name: SourceName) -> PostLookup:
    """The lookup for ``name`` (``reddit-api`` needs REDDIT_CLIENT_ID/SECRET)."""
    if name == "reddit-api":
        return RedditInfoLookup.from_settings(settings)
    if name == "arctic-shift":
        return ArcticShiftLookup.from_settings(settings)
    raise ValueError(f"posts cannot be looked up at {name!r}: use reddit-api or arctic-shift")


def _bare_ids(post_ids: Sequence[str]) -> list[str]:
    ids = list(dict.fromkeys(strip_fullname(i).strip() for i in post_ids if i.strip()))
    if len(ids) > BATCH:
        raise ValueError(f"look up at most {BATCH} posts per call, not {len(ids)}")
    return ids


def _has_id(item: Any) -> bool:
    return isinstance(item, dict) and bool(item.get("id"))


def _listing_children(body: object, url: str) -> list[Any]:
    if isinstance(body, dict) and body.get("kind") == "Listing":
        data = body.get("data")
        if isinstance(data, dict) and isinstance(data.get("children"), list):
            children: list[Any] = data["children"]
            return children
    raise ResponseError(
        f"GET {url} did not answer with a Reddit Listing; is REDDIT_API_BASE_URL Reddit's API?"
    )
