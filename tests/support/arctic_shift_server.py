"""A real local HTTP server that speaks the Arctic Shift API, for tests and offline demos.

It answers ``/api/posts/search`` and ``/api/comments/search`` the way the public API at
https://arctic-shift.photon-reddit.com does, per its reference
(github.com/ArthurHeitmann/arctic_shift, ``api/README.md``):

- Envelope ``{"data": [...]}``; errors ``{"data": null, "error": "..."}``. Issue #66 of that
  repository shows a DB timeout as HTTP 422 ``{"data":null,"error":"Timeout. Maybe slow down a
  bit"}``; the ``api_error`` fault reproduces it (status configurable, 200 included).
- ``limit`` 1-100 (default 25) or ``auto``; ``sort`` ``asc``/``desc`` by ``created_utc``
  (descending when absent, as users of the API report); ``after``/``before`` are Dates: epoch
  seconds or milliseconds, partial ISO 8601, or an offset (``1year``, ``3m``, ``2d``, ``1hour``,
  ``5min``, ``10s``; weeks are not accepted). Both bounds are exclusive (the docs are silent;
  users report ``before=<last created_utc>`` pages without overlap).
- Full-text parameters (``query`` = title + selftext, ``title``, ``selftext``,
  ``link_flair_text``, ``author_flair_text``, ``body``) need ``author``/``subreddit`` (comments:
  also ``link_id``/``parent_id``). Matching approximates PostgreSQL's ``websearch_to_tsquery``:
  words are ANDed, ``"a b"`` is a phrase, ``OR`` alternates, ``-word`` excludes; words are
  lower-cased, English stop words dropped and a trailing plural ``s`` folded (Postgres stems more).
- ``parent_id=`` (empty) on comment search means top-level comments; IDs may carry t1_/t3_.
- ``fields`` accepts only the documented selectable fields (so ``permalink``/``is_self`` are a
  400, and comment search refuses post fields).
- ``/api/comments/tree`` (``link_id`` required, ``limit`` 1-25000, default 50) nests comments
  the way Reddit does and collapses what is past ``limit`` into ``more`` stubs (see
  ``arctic_shift_query.tree``); ``/api/comments/ids`` and ``/api/posts/ids`` answer up to 500 ids.

As projects using the API live in 2026 recorded it: the ``api_error`` fault with ``status=200``
sends the error envelope inside HTTP 200; ``rate_limit_headers=True`` adds
``x-ratelimit-reset`` (seconds left in a 60 s window of the server clock) and
``x-ratelimit-reset-at`` (epoch milliseconds) to every answer, with no
``x-ratelimit-remaining``.

``/api/subreddits/search`` answers Reddit's subreddit ``about`` dicts (``display_name``,
``title``, ``public_description``, ``subscribers``, ``over18``, ``created_utc``, ...) loaded with
``add_subreddits``. Its documentation is thin; as clients in the wild call it, ``subreddit=``
names one subreddit exactly and ``subreddit_prefix=`` lists those whose name starts with it. The
rest is our choice: ``limit`` 1-1000 (default 25, no ``auto``); both names case-insensitive, a
leading ``r/`` or ``/`` ignored; one of them, non-empty, is required (both given: both must
hold); results most ``subscribers`` first, ties by name; no ``fields``, and any other
parameter is a 400 (see ``arctic_shift_query.subreddit_search``).

Where the docs are silent we choose, and say so: an unknown parameter, a bad value or an
unselectable field is HTTP 400 with the error envelope; an unknown path is 404. ``md2html`` is
accepted and adds a minimal escaped ``selftext_html``/``body_html``. The aggregate and user
endpoints are not emulated (404).

Items are indexed by subreddit and by ``link_id``, so a search scoped to one scans only that
scope (the answers are the same as a scan of everything, only faster on a real dump:
``scripts/arctic_shift_local.py`` serves dump files through this server).

Chaos (``chaos=ChaosConfig(...)`` or ``set_chaos``, see ``tests.support.chaos``) injects
faults at random but reproducible rates after the scripted ``add_fault`` ones.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.arctic_shift_query import (
    COMMENT_PARAMS,
    POST_PARAMS,
    SCOPES,
    TEXT_PARAMS,
    ApiError,
    Item,
    by_ids,
    item_filters,
    item_key,
    parse_date,
    parse_limit,
    reject_unknown,
    scope_key,
    shape,
    subreddit_search,
    tree,
)
from tests.support.chaos import ChaosConfig, ChaosHost, ChaosMonkey
from tests.support.local_http import Reply

FAULT_KINDS = ("status", "rate_limited", "truncated", "api_error", "disconnect")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (last value wins for a repeated parameter)."""

    method: str
    path: str
    params: dict[str, str]


@dataclass
class _Fault:
    pattern: re.Pattern[str]
    kind: str
    times: int
    options: dict[str, Any] = field(default_factory=dict)


class _Store:
    """Items by id, and by each ``SCOPES`` value (lower-cased), so a scoped search scans only
    the items that can pass its filter. Not thread-safe: the server holds its lock."""

    def __init__(self) -> None:
        self.by_id: dict[str, Item] = {}
        self._by_scope: dict[str, dict[str, dict[str, Item]]] = {name: {} for name in SCOPES}

    def put(self, item: Item) -> None:
        item_id = str(item["id"])
        old = self.by_id.get(item_id)
        for name, index in self._by_scope.items():
            if old is not None:
                index.get(item_key(name, old), {}).pop(item_id, None)
            index.setdefault(item_key(name, item), {})[item_id] = item
        self.by_id[item_id] = item

    def scope(self, params: Mapping[str, str]) -> list[Item]:
        """The smallest indexed set holding every item that the ``SCOPES`` in ``params`` allow."""
        best: dict[str, Item] | None = None
        for name in SCOPES:
            key = scope_key(name, params[name]) if name in params else None
            if key is not None:
                bucket = self._by_scope[name].get(key, {})
                if best is None or len(bucket) < len(best):
                    best = bucket
        return list((self.by_id if best is None else best).values())


class ArcticShiftServer(ChaosHost):
    """Arctic Shift on 127.0.0.1 in a background thread; use as a context manager.

    ``port=0`` (the default, for tests) takes any free port; ``base_url`` tells which.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] | None = None,
        chaos: ChaosConfig | None = None,
        chaos_clock: Callable[[], float] = time.monotonic,
        rate_limit_headers: bool = False,
        port: int = 0,
    ) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._port = port
        self._lock = threading.Lock()
        self._posts = _Store()
        self._comments = _Store()
        self._subreddits: dict[str, Item] = {}
        self._faults: list[_Fault] = []
        self._requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.latency = 0.0
        self.rate_limit_headers = rate_limit_headers
        self._chaos: ChaosMonkey | None = None
        self.set_chaos(chaos, clock=chaos_clock)

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> ArcticShiftServer:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to one poll interval
            name="arctic-shift-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        chaos = self.chaos_monkey
        if chaos is not None:
            chaos.release()  # end chaos stalls, so their handler threads finish now
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ArcticShiftServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ArcticShiftServer is not running; call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- content and faults -----------------------------------------------------------------
    def add_posts(self, subreddit: str, posts: Iterable[Mapping[str, Any]]) -> None:
        """Store t3 ``data`` dicts as given; ``subreddit`` fills only a missing field."""
        with self._lock:
            for post in posts:
                item = dict(post)
                item.setdefault("subreddit", subreddit)
                self._posts.put(item)

    def add_comments(self, post_id: str, comments: Iterable[Mapping[str, Any]]) -> None:
        """Store t1 ``data`` dicts; a missing ``link_id``/``parent_id`` means top-level here."""
        with self._lock:
            for comment in comments:
                item = dict(comment)
                item.setdefault("link_id", f"t3_{post_id}")
                item.setdefault("parent_id", f"t3_{post_id}")
                self._comments.put(item)

    def add_subreddits(self, items: Iterable[Mapping[str, Any]]) -> None:
        """Store subreddit ``about`` dicts for ``/api/subreddits/search``, keyed by
        ``display_name`` (case-insensitive: a later dict of the same name replaces it)."""
        with self._lock:
            for about in items:
                name = str(about.get("display_name") or "").strip()
                if not name:
                    raise ValueError(f"a subreddit needs a display_name: {dict(about)!r}")
                self._subreddits[name.lower()] = dict(about)

    def add_fault(self, path_pattern: str, kind: str, *, times: int = 1, **options: Any) -> None:
        """Make the next ``times`` requests whose path matches (``re.search``) fail.

        Kinds: ``status`` (``status=503``, optional ``retry_after``), ``rate_limited`` (429,
        ``retry_after=1``), ``truncated`` (200, JSON cut in half), ``api_error`` (``status=422``,
        ``message="Timeout. Maybe slow down a bit"``), ``disconnect`` (no answer at all).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; use one of {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._faults.append(_Fault(re.compile(path_pattern), kind, times, dict(options)))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    # --- request handling (called from handler threads) ---------------------------------------
    def _record_and_take_fault(
        self, method: str, path: str, params: dict[str, str]
    ) -> _Fault | None:
        with self._lock:
            self._requests.append(RecordedRequest(method, path, dict(params)))
            for fault in self._faults:
                if fault.times > 0 and fault.pattern.search(path):
                    fault.times -= 1
                    return fault
        return None

    def answer(self, path: str, params: dict[str, str]) -> Any:
        """The JSON the API returns for ``path``; raises ApiError for its error answers."""
        if path in ("/api/posts/search", "/api/comments/search"):
            is_post = path == "/api/posts/search"
            with self._lock:
                items = (self._posts if is_post else self._comments).scope(params)
            return {"data": self._search(items, params, is_post)}
        if path in ("/api/posts/ids", "/api/comments/ids"):
            is_post = path == "/api/posts/ids"
            with self._lock:
                items = list((self._posts if is_post else self._comments).by_id.values())
            return {"data": by_ids(items, params, is_post=is_post)}
        if path == "/api/comments/tree":
            with self._lock:
                items = self._comments.scope({"link_id": params.get("link_id", "")})
            return {"data": tree(items, params)}
        if path == "/api/subreddits/search":
            with self._lock:
                subreddits = list(self._subreddits.values())
            return {"data": subreddit_search(subreddits, params)}
        raise ApiError(f"Not found: {path}", status=404)

    def window_headers(self) -> dict[str, str]:
        """Arctic Shift's reset-only rate-limit headers for now (empty unless enabled)."""
        if not self.rate_limit_headers:
            return {}
        now = self._clock().timestamp()
        left = 60.0 - now % 60.0
        return {
            "x-ratelimit-reset": f"{left:g}",
            "x-ratelimit-reset-at": str(int((now + left) * 1000)),
        }

    def _search(self, items: list[Item], params: dict[str, str], is_post: bool) -> list[Item]:
        reject_unknown(params, POST_PARAMS if is_post else COMMENT_PARAMS)
        limit = parse_limit(params.get("limit", "25"))
        sort = params.get("sort", "desc")
        if sort not in ("asc", "desc"):
            raise ApiError(f"Invalid sort: {sort} (asc or desc)")
        if params.get("sort_type", "created_utc") not in ("default", "created_utc"):
            raise ApiError(f"Invalid sort_type: {params['sort_type']}")
        scoped = {"author", "subreddit"} | (set() if is_post else {"link_id", "parent_id"})
        text_params = [name for name in TEXT_PARAMS if name in params]
        if text_params and not scoped & params.keys():
            raise ApiError(
                f"{text_params[0]} is only supported in combination with "
                + " or ".join(sorted(scoped))
            )
        now = self._clock()
        after = parse_date(params["after"], now) if "after" in params else None
        before = parse_date(params["before"], now) if "before" in params else None
        predicates = item_filters(params)
        matched = [
            item
            for item in items
            if (after is None or float(item.get("created_utc", 0)) > after)
            and (before is None or float(item.get("created_utc", 0)) < before)
            and all(check(item) for check in predicates)
        ]
        matched.sort(
            key=lambda i: (float(i.get("created_utc", 0)), str(i.get("id"))),
            reverse=sort == "desc",
        )
        return shape(matched[:limit], params, is_post)


class _Handler(BaseHTTPRequestHandler):
    """Turns one HTTP request into ``ArcticShiftServer.answer`` plus any scripted fault."""

    api: ArcticShiftServer
    server_version = "ArcticShiftEmulator/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``server.requests`` instead of stderr."""

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        fault = self.api._record_and_take_fault("GET", split.path, params)
        if self.api.latency > 0:
            time.sleep(self.api.latency)
        if fault is not None:
            self._fault(fault)
            return
        chaos = self.api.chaos_monkey
        if chaos is None:
            self._reply(self._answer(split.path, params))
            return
        reply = chaos.serve("GET", split.path, self.path, lambda: self._answer(split.path, params))
        if reply is None:
            self.close_connection = True  # no answer at all, like the ``disconnect`` fault
            return
        self._reply(reply)

    def _answer(self, path: str, params: dict[str, str]) -> Reply:
        try:
            payload = self.api.answer(path, params)
        except ApiError as exc:
            return Reply(exc.status, json.dumps({"data": None, "error": str(exc)}).encode())
        return Reply(200, json.dumps(payload).encode("utf-8"))

    def _reply(self, reply: Reply) -> None:
        """Send ``reply``; JSON unless its headers name another Content-Type."""
        headers = {**self.api.window_headers(), **dict(reply.headers)}
        content_type = headers.pop("Content-Type", "application/json; charset=utf-8")
        self.send_response(reply.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def _fault(self, fault: _Fault) -> None:
        opts = fault.options
        if fault.kind == "disconnect":
            self.close_connection = True
            return
        headers: dict[str, str] = self.api.window_headers()
        if "retry_after" in opts:
            headers["Retry-After"] = str(opts["retry_after"])
        if fault.kind == "status":
            status = int(opts.get("status", 503))
            self._json(status, opts.get("body", {"data": None, "error": "Server error"}), headers)
        elif fault.kind == "rate_limited":
            headers.setdefault("Retry-After", "1")
            headers["X-RateLimit-Remaining"] = "0"
            self._json(429, {"data": None, "error": "Too many requests"}, headers)
        elif fault.kind == "api_error":
            message = str(opts.get("message", "Timeout. Maybe slow down a bit"))
            self._json(int(opts.get("status", 422)), {"data": None, "error": message}, headers)
        else:  # truncated
            body = json.dumps({"data": [{"id": "cut", "title": "x" * 64}]}).encode()
            self._send(200, body[: len(body) // 2], headers)

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), headers)

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
