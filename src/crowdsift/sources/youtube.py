"""The YouTube source: YouTube Data API v3 videos and their top comments as evidence.

One search costs ``search.list`` (100 quota units of the default 10,000 a day), one batched
``videos.list`` for the view/like/comment counts and full descriptions (1 unit), and one
``commentThreads.list`` per video for its most relevant comments (1 unit each). Answers go
through the shared ``HttpTransport`` (retries, retry budget, response cache), so a repeated
question spends no quota. The protocol itself (errors, quota, shapes) is ``youtube_api.py``.

``published_after`` (``--since``) is sent as ``publishedAfter`` and checked again on each
video's ``publishedAt``: a video that is older, or undated, is dropped (``stats.extra``
``older_than_since``), so no older video reaches an answer whatever the server does.

Counts and comments are extras: if fetching them fails, the videos are still returned. The
API key travels as ``?key=``, so URLs in messages and logs never carry their query string,
and error messages are scrubbed of the key.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import httpx

from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    ConfigError,
    CrowdsiftError,
    HttpStatusError,
    RetryBudgetExceededError,
    SourceError,
)
from crowdsift.core.log import get_logger, redact_text, register_secrets
from crowdsift.core.since import rfc3339
from crowdsift.http.identity import crowdsift_user_agent
from crowdsift.http.transport import HttpTransport, OwnsClient
from crowdsift.sources.models import EvidenceComment, EvidenceItem
from crowdsift.sources.youtube_api import (
    MAX_COMMENT_RESULTS,
    MAX_SEARCH_RESULTS,
    NO_COMMENTS_REASONS,
    Details,
    SearchHit,
    YouTubeQuotaError,
    YouTubeTransport,
    api_error,
    error_reason,
    parse_comment,
    parse_hit,
    response_items,
    to_evidence,
    video_details,
)

__all__ = [
    "SKIP_NOTICE",
    "YouTubeQuotaError",
    "YouTubeSource",
    "build_youtube_source",
]

log = get_logger(__name__)

SKIP_NOTICE = "YouTube skipped: set YOUTUBE_API_KEY (a YouTube Data API v3 key) to search it."


def _utcnow() -> datetime:
    return datetime.now(UTC)


# --- the source --------------------------------------------------------------------------


class YouTubeSource(OwnsClient):
    """Videos for a query, with counts and top comments. Safe to share between threads."""

    def __init__(
        self,
        transport: HttpTransport,
        *,
        api_key: str,
        base_url: str = "",
        comments_per_video: int = 5,
        now: Callable[[], datetime] = _utcnow,
    ) -> None:
        """``base_url`` prefixes paths when the client has no base URL of its own."""
        self.transport = transport
        self.stats = transport.stats
        self.comments_per_video = comments_per_video
        self._key = api_key
        self._prefix = base_url.rstrip("/") + "/" if base_url else ""
        self._now = now
        self._lock = threading.Lock()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = _utcnow,
    ) -> YouTubeSource:
        """Build from settings; an injected client is used as is (and not closed)."""
        if settings.youtube_api_key is None or not settings.youtube_api_key.get_secret_value():
            raise ConfigError(f"YOUTUBE_API_KEY is not set. {SKIP_NOTICE}")
        base_url = settings.youtube_api_base_url
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"YOUTUBE_API_BASE_URL={base_url!r} is not an http(s) URL; unset it to use "
                "https://www.googleapis.com/youtube/v3."
            )
        register_secrets(settings.secret_values())
        client = http_client or httpx.Client(
            base_url=base_url,
            timeout=settings.http_timeout,
            headers={"User-Agent": crowdsift_user_agent(), "Accept": "application/json"},
            follow_redirects=False,
        )
        transport = YouTubeTransport.from_settings(client, settings, source="youtube", sleep=sleep)
        source = cls(
            transport,
            api_key=settings.youtube_api_key.get_secret_value(),
            base_url="" if str(client.base_url) else base_url,
            now=now,
        )
        source._own(client, built_here=http_client is None)
        return source

    def __enter__(self) -> YouTubeSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def skipped_items(self) -> int:
        """Search items skipped as malformed since this source was built."""
        with self._lock:
            return self.stats.extra.get("skipped_items", 0)

    # --- public -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 5,
        *,
        comments_per_video: int | None = None,
        published_after: datetime | None = None,
    ) -> list[EvidenceItem]:
        """Up to ``limit`` videos for ``query`` (relevance order), with counts and comments.

        Raises ``YouTubeQuotaError`` (daily quota spent), ``AuthError`` (bad key / API not
        enabled), ``TransportError`` (retries spent) or ``ResponseError`` (not the v3 shape).
        """
        params = {"part": "snippet", "type": "video", "q": query, "order": "relevance"}
        params["maxResults"] = str(min(max(limit, 1), MAX_SEARCH_RESULTS))
        if published_after is not None:
            params["publishedAfter"] = rfc3339(published_after)
        body = self._get("search", params)
        hits = self._recent(self._hits(response_items(body, "search")), published_after)
        self.transport.count_page()
        per_video = self.comments_per_video if comments_per_video is None else comments_per_video
        details = self._details([hit.video_id for hit in hits])
        comments = self._all_comments([hit.video_id for hit in hits], per_video)
        items = [
            to_evidence(hit, details.get(hit.video_id, ({}, None)), comments.get(hit.video_id, []))
            for hit in hits
        ]
        log.info("youtube_search", query=query, limit=limit, items=len(items))
        return items

    def top_comments(self, video_id: str, limit: int = 5) -> list[EvidenceComment]:
        """The most relevant top-level comments of a video; [] when it has comments disabled."""
        if limit < 1:
            return []
        params = {
            "part": "snippet",
            "videoId": video_id,
            "maxResults": str(min(limit, MAX_COMMENT_RESULTS)),
            "order": "relevance",
            "textFormat": "plainText",
        }
        try:
            body = self._get_raw("commentThreads", params)
        except HttpStatusError as exc:
            reason, _ = error_reason(exc.body)
            if reason in NO_COMMENTS_REASONS:  # also 403 forbidden: a video we may not read
                log.info("youtube_comments_unavailable", video_id=video_id, reason=reason)
                return []
            raise _scrubbed(api_error(exc, now=self._now()), self._key) from None
        comments = [
            c for c in map(parse_comment, response_items(body, "commentThreads")) if c is not None
        ]
        return comments[:limit]

    # --- internals ----------------------------------------------------------------------

    def _get(self, endpoint: str, params: dict[str, str]) -> Any:
        """One API GET; a 4xx answer becomes the YouTube-specific error saying what to do."""
        try:
            return self._get_raw(endpoint, params)
        except HttpStatusError as exc:
            raise _scrubbed(api_error(exc, now=self._now()), self._key) from None

    def _get_raw(self, endpoint: str, params: dict[str, str]) -> Any:
        """One API GET with the key added; errors as the transport raises them, key scrubbed."""
        try:
            return self.transport.get_json(self._prefix + endpoint, {**params, "key": self._key})
        except CrowdsiftError as exc:
            raise _scrubbed(exc, self._key) from None

    def _hits(self, items: list[Any]) -> list[SearchHit]:
        hits: list[SearchHit] = []
        seen: set[str] = set()
        for position, item in enumerate(items):
            hit = parse_hit(item)
            if isinstance(hit, str):
                with self._lock:
                    extra = self.stats.extra
                    extra["skipped_items"] = extra.get("skipped_items", 0) + 1
                log.warning("youtube_item_skipped", position=position, reason=hit)
            elif hit.video_id not in seen:
                seen.add(hit.video_id)
                hits.append(hit)
        return hits

    def _recent(self, hits: list[SearchHit], since: datetime | None) -> list[SearchHit]:
        """The hits published at or after ``since`` (all of them without it)."""
        if since is None:
            return hits
        kept = [h for h in hits if h.published_at is not None and h.published_at >= since]
        if len(kept) < len(hits):
            with self._lock:
                extra = self.stats.extra
                extra["older_than_since"] = extra.get("older_than_since", 0) + len(hits) - len(kept)
        return kept

    def _details(self, ids: list[str]) -> Details:
        """One videos.list call for all ids; on failure the videos go on without counts."""
        if not ids:
            return {}
        params = {"part": "statistics,snippet", "id": ",".join(ids)}
        try:
            return video_details(response_items(self._get("videos", params), "videos"))
        except SourceError as exc:
            log.warning("youtube_statistics_failed", videos=len(ids), error=str(exc))
            return {}

    def _all_comments(self, ids: list[str], limit: int) -> dict[str, list[EvidenceComment]]:
        """Top comments per video; a failure costs that video its comments, not the search.

        A spent quota or retry budget stops further comment calls: they would fail the same.
        """
        comments: dict[str, list[EvidenceComment]] = {}
        for video_id in ids if limit > 0 else []:
            try:
                comments[video_id] = self.top_comments(video_id, limit)
            except SourceError as exc:
                log.warning("youtube_comments_failed", video_id=video_id, error=str(exc))
                if isinstance(exc, YouTubeQuotaError | RetryBudgetExceededError):
                    break
        return comments


def _scrubbed(exc: CrowdsiftError, key: str) -> CrowdsiftError:
    """``exc`` with the API key (and any registered secret) masked out of its message."""
    message = redact_text(str(exc)).replace(key, "***")
    if message != str(exc):
        exc.args = (message,)
    return exc


def build_youtube_source(settings: Settings, **kwargs: Any) -> YouTubeSource | None:
    """The YouTube source, or None when ``YOUTUBE_API_KEY`` is unset (the source is skipped)."""
    key = settings.youtube_api_key
    if key is None or not key.get_secret_value():
        return None
    return YouTubeSource.from_settings(settings, **kwargs)
