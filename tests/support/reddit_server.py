"""A real HTTP server on 127.0.0.1 that speaks Reddit's OAuth API, for tests and benchmarks.

It implements what crowdsift's ``reddit-api`` source uses, as Reddit does it:

* ``POST /api/v1/access_token`` checks HTTP Basic client id/secret (401
  ``{"message": "Unauthorized", "error": 401}`` when wrong) and the grant: ``client_credentials``
  always, ``password`` only when the server was given a username/password (a "script" app;
  otherwise 200 ``{"error": "unauthorized_client"}``), wrong user credentials give 200
  ``{"error": "invalid_grant"}``. Tokens are random and expire after ``token_ttl`` seconds.
* API paths need a valid bearer token (401 otherwise) and answer with
  ``x-ratelimit-remaining/used/reset`` headers counting down; when the window is spent they
  answer 429 until it resets.
* ``GET /r/{sub}/search`` and ``GET /comments/{id}`` (also ``/r/{sub}/comments/{id}/{slug}``
  and a ``.json`` suffix) answer Listings built by ``reddit_listings``; ``GET /api/info?id=``
  (fullnames, comma-separated, at most 100) answers the posts and comments that exist.
  ``/r/a+b+c/search`` (a multireddit) searches the listed subreddits together. A subreddit never
  added answers 302 to ``/subreddits/search`` like Reddit; ``mark_unavailable`` gives
  403/404 with Reddit's ``reason`` body.
* Faults (``add_fault``) go first, as an edge proxy would: a fixed status, a 429 HTML page,
  truncated JSON, an expired token, or a connection closed without an answer.
* Chaos (``chaos=ChaosConfig(...)`` or ``set_chaos``) injects faults at random but reproducible
  rates in front of all that (see ``tests.support.chaos``); the token endpoint is spared
  unless ``ChaosConfig.paths`` names it.

The recorded request log never holds secrets: no client secret, password or token.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from tests.support.chaos import ChaosConfig, ChaosHost, ChaosMonkey
from tests.support.local_http import LocalHTTPServer, ProtocolServer, Reply
from tests.support.reddit_listings import CommentTree, complete_post, listing, search_listing

TOKEN_PATH = "/api/v1/access_token"
INFO_PATH = "/api/info"
INFO_MAX_IDS = 100
FAULT_KINDS = ("status", "rate_limited", "truncated", "expire_token", "reset")
_PHRASES = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests"}
_HIDDEN_FIELDS = ("password", "secret", "token")
_SEARCH_RE = re.compile(r"^/r/([^/]+)/search/?$")
_COMMENTS_RE = re.compile(r"^(?:/r/[^/]+)?/comments/([a-z0-9]+)(?:/[^/]*)?/?$")
_RATE_LIMIT_PAGE = (
    b"<!doctype html><html><head><title>Too Many Requests</title></head><body>"
    b"<h1>whoa there, pardner!</h1><p>we're sorry, but you appear to be a bot and we've seen "
    b"too many requests from you lately.</p></body></html>"
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, secrets removed."""

    method: str
    path: str
    params: dict[str, str]
    bearer: bool
    status: int | None = None  # None: the connection was closed without an answer


@dataclass
class _Fault:
    pattern: str
    kind: str
    times: int
    options: dict[str, Any]


def _json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    merged = {"Content-Type": "application/json; charset=UTF-8", **(headers or {})}
    return Reply(status, json.dumps(payload).encode(), merged)


def _error_reply(status: int, headers: dict[str, str] | None = None) -> Reply:
    phrase = _PHRASES.get(status, "Error")
    return _json_reply(status, {"message": phrase, "error": status}, headers)


class RedditProtocolServer(ChaosHost, ProtocolServer):
    """Reddit's token endpoint and read API on a free local port, in a background thread."""

    chaos_protected = (TOKEN_PATH,)

    def __init__(
        self,
        *,
        client_id: str = "test-client",
        client_secret: str = "test-secret",
        username: str | None = None,
        password: str | None = None,
        token_ttl: int = 3600,
        latency: float = 0.0,
        ratelimit_remaining: float = 600.0,
        ratelimit_reset: int = 600,
        chaos: ChaosConfig | None = None,
        chaos_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client_id = client_id
        self._client_secret = client_secret
        self.username = username
        self._password = password
        self.token_ttl = token_ttl
        self.latency = latency
        self._lock = threading.RLock()
        self._posts: dict[str, list[dict[str, Any]]] = {}
        self._comments: dict[str, list[dict[str, Any]]] = {}
        self._unavailable: dict[str, tuple[int, str]] = {}
        self._faults: list[_Fault] = []
        self._tokens: dict[str, float] = {}
        self._log: list[RecordedRequest] = []
        self._chaos: ChaosMonkey | None = None
        self._http = LocalHTTPServer(self, name="reddit-protocol-server")
        self.set_ratelimit(ratelimit_remaining, ratelimit_reset)
        self.set_chaos(chaos, clock=chaos_clock)

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def auth_url(self) -> str:
        return self.base_url + TOKEN_PATH

    def stop(self) -> None:
        """End chaos stalls first, so their handler threads can be joined at once."""
        chaos = self._chaos
        if chaos is not None:
            chaos.release()
        super().stop()

    # --- content and behaviour ----------------------------------------------------------

    def add_posts(self, subreddit: str, posts: list[dict[str, Any]]) -> None:
        """Raw t3 data dicts, in relevance order; also makes the subreddit exist."""
        with self._lock:
            stored = self._posts.setdefault(subreddit.lower(), [])
            stored.extend(complete_post(post, subreddit) for post in posts)

    def add_comments(self, post_id: str, comments: list[dict[str, Any]]) -> None:
        """Raw t1 data dicts, flat, linked by ``parent_id`` (``t3_<post>`` for top level)."""
        with self._lock:
            self._comments.setdefault(post_id.removeprefix("t3_"), []).extend(comments)

    def mark_unavailable(self, subreddit: str, status: int = 403, reason: str = "private") -> None:
        """403/404 with ``{"reason": ...}``, or 302 to /subreddits/search (missing subreddit)."""
        with self._lock:
            self._unavailable[subreddit.lower()] = (status, reason)

    def add_fault(self, path_pattern: str, kind: str, *, times: int = 1, **options: Any) -> None:
        """Misbehave ``times`` times on paths matching the glob ``path_pattern``.

        kinds: ``status`` (code=500, body=None → Reddit-style JSON, headers={}),
        ``rate_limited`` (retry_after=None; 429 with an HTML page), ``truncated`` (the normal
        answer with its JSON cut in half), ``expire_token`` (the presented token dies → 401),
        ``reset`` (the connection closes without an answer).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        with self._lock:
            self._faults.append(_Fault(path_pattern, kind, times, dict(options)))

    def set_ratelimit(self, remaining: float, reset: int) -> None:
        """Start a fresh rate-limit window: ``remaining`` requests for ``reset`` seconds."""
        with self._lock:
            self._rl_allowance = float(remaining)
            self._rl_window = reset
            self._rl_started = time.monotonic()
            self._rl_used = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def reset_log(self) -> None:
        with self._lock:
            self._log.clear()

    # --- protocol (called from handler threads) ------------------------------------------

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> Reply | None:
        """The answer to one request; None means: close the connection without one."""
        time.sleep(self.latency)
        parts = urlsplit(target)
        path = parts.path.removesuffix(".json") or "/"
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if method == "POST":
            params.update(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        token = self._bearer(headers)
        basic = _basic_credentials(headers.get("authorization", ""))
        chaos = self.chaos_monkey
        if chaos is None:
            reply = self._dispatch(method, path, params, token, basic)
        else:
            reply = chaos.serve(
                method, path, target, lambda: self._dispatch(method, path, params, token, basic)
            )
        safe = {k: v for k, v in params.items() if not any(w in k for w in _HIDDEN_FIELDS)}
        status = reply.status if reply is not None else None
        with self._lock:
            self._log.append(RecordedRequest(method, path, safe, token is not None, status))
        return reply

    def _dispatch(
        self, method: str, path: str, params: dict[str, str], token: str | None, basic: str | None
    ) -> Reply | None:
        fault = self._take_fault(path)
        if fault is not None:
            if fault.kind == "reset":
                return None
            if fault.kind == "status":
                return self._status_fault(fault.options)
            if fault.kind == "rate_limited":
                retry_after = fault.options.get("retry_after")
                extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
                return Reply(429, _RATE_LIMIT_PAGE, {"Content-Type": "text/html", **extra})
            if fault.kind == "expire_token" and token is not None:
                with self._lock:
                    self._tokens[token] = 0.0
        reply = self._route(method, path, params, token, basic)
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

    @staticmethod
    def _status_fault(options: dict[str, Any]) -> Reply:
        code = int(options.get("code", 500))
        headers = {str(k): str(v) for k, v in (options.get("headers") or {}).items()}
        body = options.get("body")
        if body is None:
            return _json_reply(
                code, {"message": _PHRASES.get(code, "Error"), "error": code}, headers
            )
        if isinstance(body, bytes | str):
            raw = body.encode() if isinstance(body, str) else body
            return Reply(code, raw, {"Content-Type": "text/html", **headers})
        return _json_reply(code, body, headers)

    def _route(
        self, method: str, path: str, params: dict[str, str], token: str | None, basic: str | None
    ) -> Reply:
        if path == TOKEN_PATH:
            return self._issue_token(basic, params) if method == "POST" else _error_reply(405)
        if not self._token_valid(token):
            auth = 'Bearer realm="reddit", error="invalid_token"'
            return _error_reply(401, {"www-authenticate": auth})
        ratelimit, spent = self._ratelimit_tick()
        if spent:
            return Reply(429, _RATE_LIMIT_PAGE, {"Content-Type": "text/html", **ratelimit})
        if method != "GET":
            return _error_reply(405, ratelimit)
        if match := _SEARCH_RE.match(path):
            return self._search(match.group(1), params, ratelimit)
        if match := _COMMENTS_RE.match(path):
            return self._comments_for(match.group(1), params, ratelimit)
        if path.rstrip("/") == INFO_PATH:
            return self._info(params, ratelimit)
        return _error_reply(404, ratelimit)

    # --- auth ---------------------------------------------------------------------------

    @staticmethod
    def _bearer(headers: dict[str, str]) -> str | None:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return value.strip() or None if scheme.lower() == "bearer" else None

    def _token_valid(self, token: str | None) -> bool:
        with self._lock:
            return token is not None and self._tokens.get(token, 0.0) > time.monotonic()

    def _issue_token(self, basic: str | None, params: dict[str, str]) -> Reply:
        if basic != f"{self.client_id}:{self._client_secret}":
            return _error_reply(401)
        grant = params.get("grant_type")
        if grant == "password":
            if self.username is None or self._password is None:
                return _json_reply(200, {"error": "unauthorized_client"})
            if (params.get("username"), params.get("password")) != (self.username, self._password):
                return _json_reply(200, {"error": "invalid_grant"})
        elif grant != "client_credentials":
            return _json_reply(200, {"error": "unsupported_grant_type"})
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = time.monotonic() + self.token_ttl
        payload = {"access_token": token, "token_type": "bearer", "expires_in": self.token_ttl}
        return _json_reply(200, {**payload, "scope": "*"})

    def _ratelimit_tick(self) -> tuple[dict[str, str], bool]:
        """Count one API request; the headers to send and whether the window was already spent."""
        with self._lock:
            now = time.monotonic()
            if now - self._rl_started >= self._rl_window:
                self._rl_started, self._rl_used = now, 0
            spent = self._rl_allowance - self._rl_used <= 0
            if not spent:
                self._rl_used += 1
            remaining = max(self._rl_allowance - self._rl_used, 0.0)
            reset = max(int(self._rl_window - (now - self._rl_started)), 0)
            headers = {
                "x-ratelimit-remaining": f"{remaining:.1f}",
                "x-ratelimit-used": str(self._rl_used),
                "x-ratelimit-reset": str(reset),
            }
        return headers, spent

    # --- API endpoints ------------------------------------------------------------------

    def _search(self, subreddit: str, params: dict[str, str], headers: dict[str, str]) -> Reply:
        """Search one subreddit or a multireddit ``a+b+c`` (see ``_multireddit_posts``)."""
        posts, unavailable = self._multireddit_posts(subreddit)
        if unavailable is not None:
            status, reason = unavailable
            if 300 <= status < 400:
                location = f"/subreddits/search?q={quote(subreddit)}"
                return Reply(status, b"", {"Location": location, **headers})
            payload = {"reason": reason, "message": _PHRASES.get(status, "Error"), "error": status}
            return _json_reply(status, payload, headers)
        body = search_listing(
            posts,
            params.get("q", ""),
            sort=params.get("sort", "relevance"),
            time_filter=params.get("t", "all"),
            limit=_int(params.get("limit"), 25),
            after=params.get("after") or None,
        )
        return _json_reply(200, body, headers)

    def _multireddit_posts(
        self, subreddit: str
    ) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
        """The posts of every listed subreddit merged, or why none of them can be searched.

        Subreddits are searched together in the order listed (``a+a`` is ``a``); the search
        then sorts the merged posts as it sorts one subreddit's. A private, banned or missing
        subreddit among available ones is skipped (our choice: Reddit does not document this
        case, and one bad name should not sink a combined search); only when none is
        available does the first one's status answer.
        """
        names = dict.fromkeys(n for n in unquote(subreddit).lower().split("+") if n)
        first_blocked: tuple[int, str] | None = None
        available = False
        posts: list[dict[str, Any]] = []
        seen: set[str] = set()
        with self._lock:
            for name in names:
                blocked = self._unavailable.get(name)
                if blocked is None and name not in self._posts:
                    blocked = (302, "missing")
                if blocked is not None:
                    first_blocked = first_blocked or blocked
                    continue
                available = True
                fresh = [p for p in self._posts[name] if p["id"] not in seen]
                seen.update(p["id"] for p in fresh)
                posts.extend(fresh)
        if available:
            return posts, None
        return [], first_blocked or (302, "missing")  # "/r/+/search" names nothing: missing

    def _info(self, params: dict[str, str], headers: dict[str, str]) -> Reply:
        """``/api/info?id=t3_a,t1_b``: a Listing of the things that exist, in the order asked.

        Deleted and removed things are answered as stored (their markers are the test's to
        set); unknown ids are left out. More than ``INFO_MAX_IDS`` ids is a 400 (our choice:
        Reddit documents 100 as the most one request takes).
        """
        wanted = [fullname for fullname in params.get("id", "").split(",") if fullname.strip()]
        if len(wanted) > INFO_MAX_IDS:
            return _error_reply(400, headers)
        with self._lock:
            posts = {p["id"]: p for ps in self._posts.values() for p in ps}
            comments = {c["id"]: c for cs in self._comments.values() for c in cs}
        children = []
        for fullname in wanted:
            kind, _, thing_id = fullname.strip().partition("_")
            thing = (posts if kind == "t3" else comments if kind == "t1" else {}).get(thing_id)
            if thing is not None:
                children.append({"kind": kind, "data": thing})
        return _json_reply(200, listing(children), headers)

    def _comments_for(self, post_id: str, params: dict[str, str], headers: dict[str, str]) -> Reply:
        with self._lock:
            post = next((p for ps in self._posts.values() for p in ps if p["id"] == post_id), None)
            comments = list(self._comments.get(post_id, ()))
        if post is None and not comments:
            return _error_reply(404, headers)
        if post is None:
            post = complete_post({"id": post_id}, "unknown")
        tree = CommentTree(post_id, comments, sort=params.get("sort", "confidence"))
        body = [
            listing([{"kind": "t3", "data": post}]),
            tree.render(limit=_int(params.get("limit"), 200), depth=_int(params.get("depth"), 10)),
        ]
        return _json_reply(200, body, headers)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _basic_credentials(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
