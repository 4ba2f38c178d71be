"""A real HTTP server on 127.0.0.1 that speaks the YouTube Data API v3 subset crowdsift uses.

Tests drive the real ``YouTubeSource`` (httpx, retries, cache) against it, so what is checked is
the protocol, not a mock. Paths live under ``/youtube/v3`` like Google's, and answers follow
the public documentation:

* ``GET /search?part=snippet&type=video&q=…&maxResults=N`` → ``youtube#searchListResponse``;
  titles and descriptions HTML-escaped (``&amp;``, ``&#39;``), descriptions cut to 160
  characters, ``nextPageToken`` while more results exist. Every video matches every query, in
  the order added: ranking is YouTube's business, the fake's is the protocol.
* ``GET /videos?part=statistics,snippet&id=A,B`` → full, unescaped snippets and statistics as
  *strings*; unknown ids are left out; hidden likes and disabled comments omit their counts.
* ``GET /commentThreads?part=snippet&videoId=…&maxResults=M&order=relevance`` → top-level
  comments (most liked first); ``textFormat=plainText`` gives plain text, the default ``html``
  escapes it. Disabled comments → 403 ``commentsDisabled``; an unknown video → 404
  ``videoNotFound``.
* Every request needs ``key``: a wrong one → 400 ``keyInvalid``, none → 403 ``forbidden``.
  Quota is counted in units (search 100, videos and commentThreads 1); a request that would
  pass ``daily_quota`` → 403 ``quotaExceeded``.
* Faults (``add_fault``) go first: a Google error envelope with any status and reason (e.g.
  403 ``rateLimitExceeded``, 500 ``backendError``), truncated JSON, or a closed connection.

The request log never holds the API key: only whether one was sent.
"""

from __future__ import annotations

import fnmatch
import html
import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.local_http import LocalHTTPServer, ProtocolServer, Reply

API_PREFIX = "/youtube/v3"
QUOTA_COSTS = {"search": 100, "videos": 1, "commentThreads": 1}
FAULT_KINDS = ("error", "truncated", "reset")
SEARCH_DESCRIPTION_CHARS = 160
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip
_MESSAGES = {
    "keyInvalid": "API key not valid. Please pass a valid API key.",
    "forbidden": "Method doesn't allow unregistered callers. Please use an API Key.",
    "quotaExceeded": "The request cannot be completed because you have exceeded your quota.",
    "rateLimitExceeded": "The request cannot be completed: too many requests in a short time.",
    "commentsDisabled": "The video identified by the videoId parameter has disabled comments.",
    "videoNotFound": "The video identified by the videoId parameter could not be found.",
    "backendError": "Backend Error",
}
_DOMAINS = {"quotaExceeded": "youtube.quota", "rateLimitExceeded": "usageLimits"}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, without the API key."""

    method: str
    path: str
    params: dict[str, str]
    key_sent: bool
    status: int | None = None  # None: the connection was closed without an answer


@dataclass
class FakeVideo:
    """A video as the fake stores it; text is raw (the server escapes where YouTube does)."""

    id: str
    title: str
    description: str = ""
    channel: str = "A Channel"
    published_at: str = "2024-05-01T12:00:00Z"
    views: int = 0
    likes: int | None = 0  # None: the owner hides the like count
    comments: list[dict[str, Any]] = field(default_factory=list)
    comments_disabled: bool = False
    statistics: dict[str, Any] | None = None  # sent as is instead of the computed statistics


@dataclass
class _Fault:
    pattern: str
    kind: str
    times: int
    options: dict[str, Any]


def youtube_escape(text: str) -> str:
    """HTML-escape as YouTube does in search snippets (``&#39;`` for the apostrophe)."""
    return html.escape(text, quote=True).replace("&#x27;", "&#39;")


def error_body(code: int, reason: str, message: str | None = None) -> dict[str, Any]:
    """Google's JSON error envelope (``error.errors[0].reason`` is what clients branch on)."""
    text = message or _MESSAGES.get(reason, reason)
    domain = _DOMAINS.get(reason, "youtube.api" if code < 500 else "global")
    return {
        "error": {
            "code": code,
            "message": text,
            "errors": [{"message": text, "domain": domain, "reason": reason}],
            "status": _STATUS_NAMES.get(code, "UNKNOWN"),
        }
    }


def _json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    merged = {"Content-Type": "application/json; charset=UTF-8", **(headers or {})}
    return Reply(status, json.dumps(payload).encode(), merged)


def _error(code: int, reason: str, message: str | None = None) -> Reply:
    return _json_reply(int(code), error_body(int(code), str(reason), message))


def _list_reply(
    kind: str, items: list[Any], total: int, per_page: int, extra: dict[str, str] | None = None
) -> Reply:
    """A 200 ``youtube#<kind>ListResponse`` with ``pageInfo``, like every v3 list method."""
    page_info = {"totalResults": total, "resultsPerPage": per_page}
    payload = {"kind": f"youtube#{kind}ListResponse", "pageInfo": page_info, "items": items}
    return _json_reply(200, payload | (extra or {}))


def _int(value: str | None, default: int, low: int, high: int) -> int:
    try:
        number = int(value) if value is not None else default
    except ValueError:
        number = default
    return min(max(number, low), high)


class YouTubeProtocolServer(ProtocolServer):
    """YouTube Data API v3 (search, videos, commentThreads) on a free local port."""

    def __init__(
        self,
        *,
        api_key: str = "test-youtube-key",
        daily_quota: int = 10_000,
    ) -> None:
        self._api_key = api_key
        self.daily_quota = daily_quota
        self._lock = threading.RLock()
        self._videos: dict[str, FakeVideo] = {}
        self._results: list[tuple[str, Any]] = []  # ("video", id) or ("raw", any JSON value)
        self._raw_threads: dict[str, list[Any]] = {}
        self._faults: list[_Fault] = []
        self._log: list[RecordedRequest] = []
        self._quota_used = 0
        self._http = LocalHTTPServer(self, name="youtube-protocol-server")

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """What ``YOUTUBE_API_BASE_URL`` should be: ``http://127.0.0.1:PORT/youtube/v3``."""
        return self._http.base_url + API_PREFIX

    # --- content and behaviour ----------------------------------------------------------

    def add_video(self, video_id: str, title: str, **details: Any) -> FakeVideo:
        """Add a video (``FakeVideo`` fields as keywords); it joins every search's results.

        ``comments`` are dicts with ``text`` and optionally ``likes``, ``author``, ``id``.
        """
        video = FakeVideo(video_id, title, **details)
        with self._lock:
            self._videos[video_id] = video
            self._results.append(("video", video_id))
        return video

    def add_raw_search_item(self, item: Any) -> None:
        """Put ``item`` (any JSON value) into the search results as is, for malformed items."""
        with self._lock:
            self._results.append(("raw", item))

    def add_raw_comment_thread(self, video_id: str, item: Any) -> None:
        """Put ``item`` first among ``video_id``'s comment threads as is."""
        with self._lock:
            self._raw_threads.setdefault(video_id, []).append(item)

    def add_fault(self, path_pattern: str, kind: str, *, times: int = 1, **options: Any) -> None:
        """Misbehave ``times`` times on paths matching the glob ``path_pattern``.

        kinds: ``error`` (code=500, reason="backendError", message=None, headers={}: Google's
        error envelope), ``truncated`` (the normal answer with its JSON cut in half),
        ``reset`` (the connection closes without an answer).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        with self._lock:
            self._faults.append(_Fault(path_pattern, kind, times, dict(options)))

    def exhaust_quota(self) -> None:
        """Spend the whole daily quota: every further request answers 403 quotaExceeded."""
        with self._lock:
            self._quota_used = self.daily_quota

    @property
    def quota_used(self) -> int:
        with self._lock:
            return self._quota_used

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The logged requests to one endpoint (``search``, ``videos``, ``commentThreads``)."""
        return [r for r in self.requests if r.path == f"{API_PREFIX}/{endpoint}"]

    # --- protocol (called from handler threads) ------------------------------------------

    def respond(
        self, method: str, target: str, _headers: dict[str, str], _body: bytes
    ) -> Reply | None:
        """The answer to one request; None means: close the connection without one."""
        parts = urlsplit(target)
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        key = params.pop("key", None)
        reply = self._dispatch(method, parts.path, params, key)
        status = reply.status if reply is not None else None
        with self._lock:
            self._log.append(RecordedRequest(method, parts.path, params, key is not None, status))
        return reply

    def _dispatch(
        self, method: str, path: str, params: dict[str, str], key: str | None
    ) -> Reply | None:
        fault = self._take_fault(path)
        if fault is not None and fault.kind == "reset":
            return None
        if fault is not None and fault.kind == "error":
            opts = fault.options
            reply = _error(
                opts.get("code", 500), opts.get("reason", "backendError"), opts.get("message")
            )
            reply.headers.update({str(k): str(v) for k, v in opts.get("headers", {}).items()})
            return reply
        reply = self._route(method, path, params, key)
        if fault is not None and fault.kind == "truncated":
            reply.body = reply.body[: max(len(reply.body) // 2, 1)]
        return reply

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fnmatch.fnmatchcase(path, fault.pattern):
                    fault.times -= 1
                    return fault
        return None

    def _route(self, method: str, path: str, params: dict[str, str], key: str | None) -> Reply:
        endpoint = path.removeprefix(API_PREFIX + "/") if path.startswith(API_PREFIX) else None
        if endpoint not in QUOTA_COSTS:
            return _error(404, "notFound", "Not Found")
        if method != "GET":
            return _error(405, "methodNotAllowed", "Method Not Allowed")
        if key is None:
            return _error(403, "forbidden")
        if key != self._api_key:
            return _error(400, "keyInvalid")
        if "part" not in params:
            return _error(400, "required", "Required parameter: part")
        with self._lock:
            if self._quota_used + QUOTA_COSTS[endpoint] > self.daily_quota:
                return _error(403, "quotaExceeded")
        if endpoint == "search":
            reply = self._search(params)
        elif endpoint == "videos":
            reply = self._videos_list(params)
        else:
            reply = self._comment_threads(params)
        if reply.status == 200:
            with self._lock:
                self._quota_used += QUOTA_COSTS[endpoint]
        return reply

    # --- endpoints ----------------------------------------------------------------------

    def _search(self, params: dict[str, str]) -> Reply:
        limit = _int(params.get("maxResults"), 5, 0, 50)
        start = _int(params.get("pageToken"), 0, 0, 1_000_000)
        with self._lock:
            results = list(self._results)
            videos = dict(self._videos)
        page = results[start : start + limit]
        items = [_search_item(videos[value]) if kind == "video" else value for kind, value in page]
        more = {"nextPageToken": str(start + limit)} if start + limit < len(results) else {}
        return _list_reply("search", items, len(results), limit, more)

    def _videos_list(self, params: dict[str, str]) -> Reply:
        if "id" not in params:
            return _error(400, "missingRequiredParameter", "No filter selected.")
        ids = [i for i in params["id"].split(",") if i]
        with self._lock:
            found = [self._videos[i] for i in ids if i in self._videos]
        return _list_reply("video", [_video_item(v) for v in found], len(found), len(found))

    def _comment_threads(self, params: dict[str, str]) -> Reply:
        video_id = params.get("videoId")
        if not video_id:
            return _error(400, "missingRequiredParameter", "No filter selected.")
        with self._lock:
            video = self._videos.get(video_id)
            raw = list(self._raw_threads.get(video_id, ()))
        if video is None:
            return _error(404, "videoNotFound")
        if video.comments_disabled:
            return _error(403, "commentsDisabled")
        limit = _int(params.get("maxResults"), 20, 1, 100)
        plain = params.get("textFormat") == "plainText"
        ordered = list(video.comments)
        if params.get("order", "time") == "relevance":
            ordered.sort(key=lambda c: -int(c.get("likes", 0)))
        threads = [_thread_item(video_id, n, c, plain=plain) for n, c in enumerate(ordered)]
        items = (raw + threads)[:limit]
        return _list_reply("commentThread", items, len(items), limit)


# --- resource shapes ---------------------------------------------------------------------


def _channel_id(video: FakeVideo) -> str:
    return "UC" + "".join(ch for ch in video.channel if ch.isalnum())[:20]


def _search_item(video: FakeVideo) -> dict[str, Any]:
    description = video.description[:SEARCH_DESCRIPTION_CHARS]
    return {
        "kind": "youtube#searchResult",
        "id": {"kind": "youtube#video", "videoId": video.id},
        "snippet": {
            "publishedAt": video.published_at,
            "channelId": _channel_id(video),
            "title": youtube_escape(video.title),
            "description": youtube_escape(description),
            "thumbnails": {"default": {"url": f"https://i.ytimg.com/vi/{video.id}/default.jpg"}},
            "channelTitle": youtube_escape(video.channel),
            "liveBroadcastContent": "none",
        },
    }


def _statistics(video: FakeVideo) -> dict[str, Any]:
    if video.statistics is not None:
        return video.statistics
    stats = {"viewCount": str(video.views), "favoriteCount": "0"}
    if video.likes is not None:
        stats["likeCount"] = str(video.likes)
    if not video.comments_disabled:
        stats["commentCount"] = str(len(video.comments))
    return stats


def _video_item(video: FakeVideo) -> dict[str, Any]:
    return {
        "kind": "youtube#video",
        "id": video.id,
        "snippet": {
            "publishedAt": video.published_at,
            "channelId": _channel_id(video),
            "title": video.title,
            "description": video.description,
            "channelTitle": video.channel,
        },
        "statistics": _statistics(video),
    }


def _thread_item(video_id: str, n: int, comment: dict[str, Any], *, plain: bool) -> dict[str, Any]:
    text = str(comment["text"])
    comment_id = str(comment.get("id", f"Ugz{video_id}{n:04d}"))
    return {
        "kind": "youtube#commentThread",
        "id": comment_id,
        "snippet": {
            "channelId": "UCowner",
            "videoId": video_id,
            "topLevelComment": {
                "kind": "youtube#comment",
                "id": comment_id,
                "snippet": {
                    "videoId": video_id,
                    "textDisplay": text if plain else youtube_escape(text),
                    "textOriginal": text,
                    "authorDisplayName": str(comment.get("author", "@someone")),
                    "likeCount": int(comment.get("likes", 0)),
                    "publishedAt": "2024-06-01T08:00:00Z",
                },
            },
            "canReply": True,
            "totalReplyCount": 0,
            "isPublic": True,
        },
    }
