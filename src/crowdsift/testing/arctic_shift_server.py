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
- ``fields`` accepts only the documented selectable fields.

Where the docs are silent we choose, and say so: an unknown parameter, a bad value or an
unselectable field is HTTP 400 with the error envelope; an unknown path is 404. ``md2html`` is
accepted and adds a minimal escaped ``selftext_html``/``body_html``. ``/api/posts/ids``
(``ids``: comma-separated, ``t3_`` optional) answers the archived posts among them;
``/api/comments/tree``, ``/api/comments/ids`` and the aggregate/user/subreddit endpoints are
not emulated (404).

Chaos (``chaos=ChaosConfig(...)`` or ``set_chaos``, see ``crowdsift.testing.chaos``) injects
faults at random but reproducible rates after the scripted ``add_fault`` ones.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from crowdsift.testing.chaos import ChaosConfig, ChaosHost, ChaosMonkey
from crowdsift.testing.local_http import Reply

_COMMON = {"author", "subreddit", "author_flair_text", "after", "before", "limit", "sort",
           "sort_type", "md2html", "fields"}  # fmt: skip
_POST_PARAMS = _COMMON | {"crosspost_parent_id", "over_18", "spoiler", "title", "selftext",
                          "link_flair_text", "query", "url", "url_exact"}  # fmt: skip
_COMMENT_PARAMS = _COMMON | {"body", "link_id", "parent_id"}
_BOTH_FIELDS = {"author", "author_fullname", "author_flair_text", "created_utc", "distinguished",
                "id", "retrieved_on", "subreddit", "subreddit_id", "score"}  # fmt: skip
_POST_FIELDS = _BOTH_FIELDS | {"crosspost_parent", "link_flair_text", "num_comments", "over_18",
                               "post_hint", "selftext", "spoiler", "title", "url"}  # fmt: skip
_COMMENT_FIELDS = _BOTH_FIELDS | {"body", "link_id", "parent_id"}
_TRUE = {"true", "1", "yes", "y"}
_FALSE = {"false", "0", "no", "n"}
_OFFSET_RE = re.compile(r"^(\d+)\s*([a-z]+)$")
_OFFSET_SECONDS = {
    **dict.fromkeys(("s", "sec", "second", "seconds"), 1),
    **dict.fromkeys(("min", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
    **dict.fromkeys(("m", "month", "months"), 30 * 86400),
    **dict.fromkeys(("y", "year", "years"), 365 * 86400),
}
_STOP_TEXT = (
    "a an and are as at be but by for from has have i if in into is it its me my no not of on "
    "or our so than that the their them then there these they this to was we were what when "
    "which who will with you your"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_TEXT_PARAMS = {
    "query": ("title", "selftext"),
    "title": ("title",),
    "selftext": ("selftext",),
    "body": ("body",),
    "link_flair_text": ("link_flair_text",),
    "author_flair_text": ("author_flair_text",),
}
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
Item = dict[str, Any]
FAULT_KINDS = ("status", "rate_limited", "truncated", "api_error", "disconnect")


class ApiError(Exception):
    """A request the real API would refuse: becomes the error envelope with ``status``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


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


def parse_date(value: str, now: datetime) -> float:
    """An Arctic Shift Date as epoch seconds; raises ApiError for what the API would refuse."""
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        number = float(text)
        return number / 1000 if number > 100_000_000_000 else number
    match = _OFFSET_RE.fullmatch(text.lower())
    if match and match.group(2) in _OFFSET_SECONDS:
        return now.timestamp() - int(match.group(1)) * _OFFSET_SECONDS[match.group(2)]
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ApiError(f"Invalid date: {value}") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _words(text: str) -> list[str]:
    """Lower-cased words, stop words dropped, a trailing plural 's' folded."""
    out = []
    for word in _WORD_RE.findall(text.lower()):
        word = word.removesuffix("'s")
        if word in _STOP_WORDS:
            continue
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return out


def full_text_match(query: str, text: str) -> bool:
    """Approximates ``to_tsvector(text) @@ websearch_to_tsquery(query)`` (see module docs)."""
    doc = _words(text)
    doc_set = set(doc)
    groups: list[list[tuple[bool, list[str]]]] = [[]]
    pending_or = False
    for raw in re.findall(r'-?"[^"]*"?|\S+', query):
        if raw == "OR":
            pending_or = bool(groups[-1])
            continue
        negated = raw.startswith("-")
        words = _words(raw.lstrip("-").strip('"'))
        if not words:
            continue
        if pending_or:
            groups[-1].append((negated, words))
        else:
            groups.append([(negated, words)])
        pending_or = False

    def holds(negated: bool, words: list[str]) -> bool:
        if len(words) == 1:
            present = words[0] in doc_set
        else:
            n = len(words)
            present = any(doc[i : i + n] == words for i in range(len(doc) - n + 1))
        return present != negated

    return all(any(holds(neg, words) for neg, words in group) for group in groups if group)


def _parse_bool(name: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ApiError(f"Invalid boolean for {name}: {value}")


def _strip_prefix(value: str, prefixes: tuple[str, ...]) -> str:
    lowered = value.strip().lower()
    for prefix in prefixes:
        lowered = lowered.removeprefix(prefix)
    return lowered


def _fullname(value: str, default_prefix: str) -> str:
    value = value.strip()
    return value if value[:3] in ("t1_", "t3_") else f"{default_prefix}{value}"


class ArcticShiftServer(ChaosHost):
    """Arctic Shift on 127.0.0.1 (port 0) in a background thread; use as a context manager."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] | None = None,
        chaos: ChaosConfig | None = None,
        chaos_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._posts: dict[str, Item] = {}
        self._comments: dict[str, Item] = {}
        self._faults: list[_Fault] = []
        self._requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.latency = 0.0
        self._chaos: ChaosMonkey | None = None
        self.set_chaos(chaos, clock=chaos_clock)

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> ArcticShiftServer:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
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
                self._posts[str(item["id"])] = item

    def add_comments(self, post_id: str, comments: Iterable[Mapping[str, Any]]) -> None:
        """Store t1 ``data`` dicts; a missing ``link_id``/``parent_id`` means top-level here."""
        with self._lock:
            for comment in comments:
                item = dict(comment)
                item.setdefault("link_id", f"t3_{post_id}")
                item.setdefault("parent_id", f"t3_{post_id}")
                self._comments[str(item["id"])] = item

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
        with self._lock:
            posts = list(self._posts.values())
            comments = list(self._comments.values())
        if path in ("/api/posts/search", "/api/comments/search"):
            is_post = path == "/api/posts/search"
            return {"data": self._search(posts if is_post else comments, params, is_post)}
        if path == "/api/posts/ids":
            return {"data": _by_ids(posts, params)}
        raise ApiError(f"Not found: {path}", status=404)

    def _search(self, items: list[Item], params: dict[str, str], is_post: bool) -> list[Item]:
        _reject_unknown(params, _POST_PARAMS if is_post else _COMMENT_PARAMS)
        limit = _parse_limit(params.get("limit", "25"))
        sort = params.get("sort", "desc")
        if sort not in ("asc", "desc"):
            raise ApiError(f"Invalid sort: {sort} (asc or desc)")
        if params.get("sort_type", "created_utc") not in ("default", "created_utc"):
            raise ApiError(f"Invalid sort_type: {params['sort_type']}")
        scoped = {"author", "subreddit"} | (set() if is_post else {"link_id", "parent_id"})
        text_params = [name for name in _TEXT_PARAMS if name in params]
        if text_params and not scoped & params.keys():
            raise ApiError(
                f"{text_params[0]} is only supported in combination with "
                + " or ".join(sorted(scoped))
            )
        now = self._clock()
        after = parse_date(params["after"], now) if "after" in params else None
        before = parse_date(params["before"], now) if "before" in params else None
        predicates = _predicates(params)
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
        return _shape(matched[:limit], params, is_post)


def _reject_unknown(params: Mapping[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ApiError(f"Unknown parameter: {unknown[0]}")


def _parse_limit(value: str) -> int:
    if value == "auto":
        return 1000
    if not value.isdigit() or not 1 <= int(value) <= 100:
        raise ApiError(f"Invalid limit: {value} (1 - 100 or auto)")
    return int(value)


def _predicates(params: Mapping[str, str]) -> list[Callable[[Item], bool]]:
    """One check per filtering parameter present in the request."""
    checks: list[Callable[[Item], bool]] = []
    for name, prefixes in (("subreddit", ("/", "r/")), ("author", ("/", "u/"))):
        if name in params:
            checks.append(partial(_equals, name, _strip_prefix(params[name], prefixes)))
    for name in ("over_18", "spoiler"):
        if name in params:
            checks.append(partial(_flag, name, _parse_bool(name, params[name])))
    if "url" in params:
        exact = _parse_bool("url_exact", params.get("url_exact", "false"))
        checks.append(partial(_url, params["url"], exact))
    for name, key, prefix in (
        ("crosspost_parent_id", "crosspost_parent", "t3_"),
        ("link_id", "link_id", "t3_"),
        ("parent_id", "parent_id", "t1_"),
    ):
        if params.get(name, "").strip():
            checks.append(partial(_equals, key, _fullname(params[name], prefix).lower()))
        elif name == "parent_id" and name in params:  # empty: top-level comments only
            checks.append(_top_level)
    for name, keys in _TEXT_PARAMS.items():
        if name in params:
            checks.append(partial(_text, params[name], keys))
    return checks


def _equals(key: str, want: str, item: Item) -> bool:
    return str(item.get(key) or "").lower() == want


def _flag(key: str, want: bool, item: Item) -> bool:
    return bool(item.get(key)) == want


def _url(url: str, exact: bool, item: Item) -> bool:
    value = str(item.get("url") or "")
    return value == url if exact else value.startswith(url)


def _top_level(item: Item) -> bool:
    return str(item.get("parent_id", "")).startswith("t3_")


def _text(query: str, keys: tuple[str, ...], item: Item) -> bool:
    return full_text_match(query, " ".join(str(item.get(k) or "") for k in keys))


def _by_ids(posts: list[Item], params: Mapping[str, str]) -> list[Item]:
    """``/api/posts/ids?ids=a,t3_b``: the archived posts among those ids, in the order asked;
    unknown ids are left out. At most 500 ids (our choice; the docs give no limit)."""
    _reject_unknown(params, {"ids", "fields", "md2html"})
    wanted = [_fullname(i, "t3_")[3:] for i in params.get("ids", "").split(",") if i.strip()]
    if not wanted or len(wanted) > 500:
        raise ApiError(f"Invalid ids: give 1 - 500 comma-separated ids, not {len(wanted)}")
    by_id = {str(item.get("id")): item for item in posts}
    return _shape([by_id[i] for i in dict.fromkeys(wanted) if i in by_id], params, True)


def _shape(items: list[Item], params: Mapping[str, str], is_post: bool) -> list[Item]:
    """Apply ``fields`` and ``md2html`` to the chosen items (copies; the store is untouched)."""
    out = [dict(item) for item in items]
    if _parse_bool("md2html", params.get("md2html", "false")):
        key = "selftext" if is_post else "body"
        for item in out:
            item[f"{key}_html"] = (
                f'<div class="md"><p>{html.escape(str(item.get(key) or ""))}</p></div>'
            )
    if "fields" in params:
        wanted = [f.strip() for f in params["fields"].split(",") if f.strip()]
        bad = [f for f in wanted if f not in (_POST_FIELDS if is_post else _COMMENT_FIELDS)]
        if bad:
            raise ApiError(f"Invalid field: {bad[0]}")
        out = [{k: item[k] for k in wanted if k in item} for item in out]
    return out


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
        headers = dict(reply.headers)
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
        headers: dict[str, str] = {}
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
