"""YouTube Data API v3 as data: Google's error envelope, quota rules, and the resource shapes.

Pure functions, apart from ``YouTubeTransport``: ``youtube.py`` does the calls. Google answers
quota trouble as HTTP 403 with a reason: ``rateLimitExceeded`` / ``userRateLimitExceeded``
pass with a little waiting and are retried like a 429 (``YouTubeTransport``), while
``quotaExceeded`` / ``dailyLimitExceeded`` last until midnight Pacific time and become a
``YouTubeQuotaError`` saying when the quota resets. Search and comment text comes
HTML-escaped (``&amp;``, ``&#39;``) and is unescaped here; ``videos.list`` sends its snippet
raw. A malformed search item is reported (a reason string), never raised.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx
from pydantic import HttpUrl

from crowdsift.core.errors import AuthError, HttpStatusError, ResponseError, SourceError
from crowdsift.http.retry import RetryableResponse, parse_retry_after
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.models import EvidenceComment, EvidenceItem

WATCH_URL = "https://www.youtube.com/watch?v="
MAX_SEARCH_RESULTS = 50  # search.list's maxResults ceiling
MAX_COMMENT_RESULTS = 100  # commentThreads.list's maxResults ceiling
QUOTA_REASONS = frozenset({"quotaExceeded", "dailyLimitExceeded"})
RATE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
KEY_REASONS = frozenset({"keyInvalid", "keyExpired", "API_KEY_INVALID", "API_KEY_EXPIRED"})
ACCESS_REASONS = frozenset(
    {"accessNotConfigured", "forbidden", "ipRefererBlocked", "SERVICE_DISABLED"}
    | {"API_KEY_SERVICE_BLOCKED", "API_KEY_IP_ADDRESS_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED"}
)
NO_COMMENTS_REASONS = frozenset({"commentsDisabled", "videoNotFound", "forbidden"})
_VIDEO_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PACIFIC = "America/Los_Angeles"

Detail = tuple[dict[str, float], str | None]
"""A video's metrics and, when ``videos.list`` sent it, its full description."""
Details = dict[str, Detail]


class YouTubeQuotaError(SourceError):
    """The key's project spent its daily quota; nothing helps before midnight Pacific time."""


# --- Google's error envelope -----------------------------------------------------------


def error_reason(body: Any) -> tuple[str, str]:
    """``(reason, message)`` of a Google error body, ``("", "")`` when it is not one.

    The reason is ``error.errors[0].reason`` (the v3 APIs), else an ``ErrorInfo`` detail's
    reason (newer front ends), else ``error.status``.
    """
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    message = str(error.get("message") or "")[:200]
    errors = error.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        reason = errors[0].get("reason")
        if isinstance(reason, str) and reason:
            return reason, message
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            return str(detail["reason"]), message
    return str(error.get("status") or ""), message


def quota_reset(now: datetime) -> datetime:
    """When YouTube quotas reset next: midnight Pacific time, as an aware UTC datetime.

    Without a time zone database (Windows without ``tzdata``) Pacific standard time is used:
    at worst an hour off, which a "try again then" message survives.
    """
    try:
        zone: tzinfo = ZoneInfo(_PACIFIC)
    except ZoneInfoNotFoundError:
        zone = timezone(timedelta(hours=-8))
    tomorrow = now.astimezone(zone).date() + timedelta(days=1)
    return datetime.combine(tomorrow, time(0, 0), tzinfo=zone).astimezone(UTC)


def api_error(exc: HttpStatusError, *, now: datetime) -> SourceError:
    """The ``SourceError`` for a YouTube 4xx: what happened and what to do about it."""
    reason, message = error_reason(exc.body)
    where = f"GET {exc.url} answered HTTP {exc.status} ({reason or 'no reason given'})"
    if reason in QUOTA_REASONS:
        reset = quota_reset(now)
        minutes = max(round((reset - now).total_seconds() / 60), 0)
        wait = f"{minutes} min" if minutes < 90 else f"{minutes / 60:.0f} h"
        return YouTubeQuotaError(
            f"{where}: the YouTube Data API daily quota of this key's project is spent. It "
            f"resets at midnight Pacific time ({reset:%Y-%m-%d %H:%M} UTC, in about "
            f"{wait}); try again then, or ask Google for more quota in the Cloud console."
        )
    if reason in KEY_REASONS:
        return AuthError(
            f"{where}: YouTube rejected the API key. Set YOUTUBE_API_KEY to a valid YouTube "
            "Data API v3 key (Google Cloud console → APIs & Services → Credentials)."
        )
    if exc.status == 403 and reason in ACCESS_REASONS:
        return AuthError(
            f"{where}: the key may not call the YouTube Data API. Enable 'YouTube Data API "
            "v3' for the key's project and check the key's API and IP restrictions "
            "(YOUTUBE_API_KEY)."
        )
    detail = f": {message}" if message else ""
    return HttpStatusError(
        f"{where}{detail}. Retrying will not help; check YOUTUBE_API_BASE_URL and the query.",
        url=exc.url,
        status=exc.status,
        body=exc.body,
    )


class YouTubeTransport(HttpTransport):
    """``HttpTransport`` that also retries YouTube's short-term 403 rate limits."""

    def _interpret(self, response: httpx.Response, display: str) -> tuple[bytes, Any]:
        if response.status_code == 403:
            try:
                reason, _ = error_reason(json.loads(response.content))
            except (ValueError, RecursionError):  # not JSON, too deep, a number too long
                reason = ""
            if reason in RATE_REASONS:
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                raise RetryableResponse(reason, status=403, retry_after=retry_after)
        return super()._interpret(response, display)


# --- parsing (pure) ----------------------------------------------------------------------


@dataclass(frozen=True)
class SearchHit:
    """One video of a search answer, its text already unescaped."""

    video_id: str
    title: str
    description: str
    channel: str
    published_at: datetime | None


def _text(value: Any) -> str:
    """A snippet string, HTML-unescaped (search and comment text come escaped)."""
    return html.unescape(value) if isinstance(value, str) else ""


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def response_items(body: Any, what: str) -> list[Any]:
    """The ``items`` of a list answer; anything else means we are not talking to YouTube v3."""
    items = body.get("items") if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise ResponseError(
            f"YouTube's {what} answer has no 'items' list; is YOUTUBE_API_BASE_URL the YouTube "
            "Data API v3 (https://www.googleapis.com/youtube/v3)?"
        )
    return items


def parse_hit(item: Any) -> SearchHit | str:
    """The search item as a ``SearchHit``, or why it is unusable."""
    ident = item.get("id") if isinstance(item, dict) else None
    snippet = item.get("snippet") if isinstance(item, dict) else None
    if not isinstance(ident, dict) or not isinstance(snippet, dict):
        return "no id or snippet object"
    video_id = ident.get("videoId")
    if not isinstance(video_id, str) or not _VIDEO_ID.match(video_id):
        return f"no valid videoId (kind {ident.get('kind')!r})"
    title = snippet.get("title")
    if not isinstance(title, str) or not title.strip():
        return f"video {video_id} has no title"
    return SearchHit(
        video_id=video_id,
        title=html.unescape(title),
        description=_text(snippet.get("description")),
        channel=_text(snippet.get("channelTitle")),
        published_at=_timestamp(snippet.get("publishedAt")),
    )


def parse_count(value: Any) -> float | None:
    """A statistics count (YouTube sends strings); None when missing or not a count.

    Counts past 64 bits are junk, not counts (and past ~1e308 not even a float).
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    return float(number) if 0 <= number < 2**63 else None


def video_details(items: list[Any]) -> Details:
    """``videoId → (metrics, full description)`` from a videos.list answer; bad fields dropped.

    Counts come as strings; a hidden like count or disabled comments simply omit theirs.
    """
    details: Details = {}
    names = {"viewCount": "views", "likeCount": "likes", "commentCount": "comments"}
    for item in items:
        video_id = item.get("id") if isinstance(item, dict) else None
        if not isinstance(video_id, str):
            continue
        stats = _object(item, "statistics")
        metrics = {
            name: value
            for field, name in names.items()
            if (value := parse_count(stats.get(field))) is not None
        }
        description = _object(item, "snippet").get("description")  # raw and whole here
        details[video_id] = (metrics, description if isinstance(description, str) else None)
    return details


def parse_comment(item: Any) -> EvidenceComment | None:
    """A thread's top-level comment as text and likes (never the author's name)."""
    top = _object(_object(item, "snippet"), "topLevelComment")
    snippet = _object(top, "snippet")
    text = _text(snippet.get("textDisplay") or snippet.get("textOriginal")).strip()
    comment_id = top.get("id") or (item.get("id") if isinstance(item, dict) else None)
    if not text or not isinstance(comment_id, str) or not comment_id:
        return None
    likes = parse_count(snippet.get("likeCount"))
    return EvidenceComment(id=comment_id, text=text, likes=int(likes or 0))


def to_evidence(hit: SearchHit, details: Detail, comments: list[EvidenceComment]) -> EvidenceItem:
    """The canonical evidence item: watch URL, the full description when videos.list had it."""
    metrics, description = details
    return EvidenceItem(
        kind="youtube",
        id=hit.video_id,
        title=hit.title,
        text=description if description is not None else hit.description,
        url=HttpUrl(WATCH_URL + hit.video_id),
        where=hit.channel,
        published_at=hit.published_at,
        metrics=metrics,
        comments=comments,
    )


def _object(value: Any, name: str) -> dict[str, Any]:
    """``value[name]`` when both are JSON objects, else an empty one (malformed input)."""
    inner = value.get(name) if isinstance(value, dict) else None
    return inner if isinstance(inner, dict) else {}
