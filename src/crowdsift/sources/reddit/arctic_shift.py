"""The keyless ``arctic-shift`` source: the public Arctic Shift archive API.

What the API is, per its reference (github.com/ArthurHeitmann/arctic_shift, ``api/README.md``)
and the issues of that repository:

- Base URL ``https://arctic-shift.photon-reddit.com``; no key. Answers ``{"data": [...]}`` of
  Reddit's own t3/t1 ``data`` dicts (with ``permalink``); errors ``{"data": null, "error":
  "..."}``. A query that runs too long answers HTTP 422 ``"Timeout. Maybe slow down a bit"``
  (issue #66; README "Query timeout": reduce ``limit``, narrow the filter, or just try again).
- ``/api/posts/search``: ``subreddit``, ``query`` (full text over title + selftext, only with
  ``subreddit``/``author``, "not supported with very active users or subreddits"),
  ``after``/``before`` (epoch seconds and other Date forms), ``over_18``, ``limit`` 1-100,
  ``sort`` ``asc``/``desc`` — by ``created_utc`` only. There is no score or relevance order.
- ``/api/comments/search``: ``link_id`` (a post ID, ``t3_`` allowed) and ``parent_id`` — empty
  means top-level comments — with the same ``limit``/``sort``/``after``/``before``.
- ``/api/comments/tree``: ``link_id`` (required), ``limit`` 1-25000 (default 50); past the
  limit, comments collapse into Reddit-style ``{"kind": "more", "data": {"children": [ids]}}``
  stubs, which ``/api/comments/ids`` (at most 500 ids) expands.
- A subreddit that does not exist is not signalled (the search is just empty), so this source
  never raises ``SubredditUnavailableError``.
- ``/api/subreddits/search`` (thinly documented; as clients in the wild call it):
  ``subreddit=<name>`` answers that subreddit's metadata, ``subreddit_prefix=<p>`` the
  subreddits whose name starts with ``p``; items are Reddit's ``about`` dicts (``display_name``,
  ``title``, ``public_description``, ``subscribers``, ``over18``, ...). ``search_subreddits``
  sends one of the two and ``limit`` (1-1000, our bound) and returns the dicts as they come.

How it really behaves, as recorded by projects that use it live in 2026 (last30days-skill PRs
#960/#961/#992; kk1030-bit/etfs-data-form-reddit's Arctic Shift client; a uranium-sentiment
collector that pages whole subreddits; Arctic Shift issue #33 on huge trees), and what this
source does about each:

- An error can arrive inside HTTP 200: ``{"data": null, "error": "Timeout. Maybe slow down a
  bit"}``, the same body the API sends with 422. Both are one case here: the same message is
  as often throttling as a slow query, so the source backs off (``RateLimiter.back_off``: to
  the window's reset when the headers gave it, else exponentially) *and* halves ``limit``,
  at most ``MAX_TIMEOUT_SHRINKS`` times, each retry spending the fetch's retry budget. An
  error envelope is never cached (``http.cache``).
- Responses may carry ``x-ratelimit-reset`` (seconds left in a 60 s window) and
  ``x-ratelimit-reset-at`` (epoch *milliseconds*) with no ``x-ratelimit-remaining``. The
  source paces on them through a ``RateLimiter`` with a 60 s window: the reset is remembered
  (never believed beyond one window), a "slow down" or a 429 without ``Retry-After`` waits
  until it, and when ``x-ratelimit-remaining`` does come the usual pacing applies.
- ``fields`` rejects ``permalink``, ``is_self`` and others with HTTP 400 (the filtering layer
  needs both, so this source never sends ``fields``), ``/api/comments/search`` rejects post
  fields, a keyword search without ``subreddit``/``author`` is a 400, ``limit`` is 1-100, and
  ``after``/``before`` are exclusive. ``arctic_shift_params.check`` refuses such a request
  before it is sent, a window that exclusive bounds leave empty is not sent at all, and a 400
  the API still returns is an error naming the request, never an empty answer.
- ``score`` and ``num_comments`` are placeholders (1 and 0) until Arctic Shift fetches a post a
  second time, about 36 h later (``_meta.retrieved_2nd_on``; the re-fetch queue has run ten days
  late). A post without that stamp, unless older than ``arctic_shift_items.PENDING_HORIZON`` and
  without ``_meta`` (records from before the stamp existed), is marked ``ENGAGEMENT_PENDING``
  and the rerank treats its engagement as unknown (neutral), not as final.

How Reddit's search maps onto it:

- ``sort``: ``new`` is exact (``sort=desc``). ``relevance``, ``top``, ``hot`` and ``comments``
  cannot be honoured; they fall back to newest first (counted in ``stats.extra``) and the
  fetcher's relevance scoring decides what matters.
- ``time_filter``: a lower bound ``after = now - {hour, day, week (7 d), month (30 d), year
  (365 d)}`` from the injected clock, sent as epoch seconds. ``since`` (``--since``) sends
  ``after = since - 1 s`` instead when it is later: ``after`` is exclusive.
- ``include_over_18=false`` becomes ``over_18=false``.
- Paging: the cursor is the last ``created_utc`` plus the IDs already returned at that second
  (``"1700000000:abc,def"``). The next request asks ``before=<ts + 1>`` and drops those IDs, so
  posts sharing a second across a page boundary are neither lost nor repeated.
- Comments: top-level only (``parent_id=``). The API orders them by date alone, so the oldest
  ``limit`` are read and handed over best first (score, then age), as Reddit's ``sort=top``
  hands them: a caller keeping the first 20 keeps the best 20 of them, not the 20 oldest.
- Comment trees: one ``/api/comments/tree`` request for the whole thread (``tree_limit``
  comments, 2000 by default), then one ``/api/comments/ids`` request for up to 500 ids the
  answer collapsed into ``more`` stubs, shallowest first;
  ``crowdsift.sources.reddit.threads.comment_tree`` then builds the tree and orders siblings by
  score. A thread of more than 100 comments thus yields its best comments, not its oldest 100.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import httpx

from crowdsift.core.config import SearchSort, Settings, SourceName, TimeFilter
from crowdsift.core.errors import HttpStatusError, ResponseError, TransportError
from crowdsift.core.log import get_logger
from crowdsift.core.since import since_epoch
from crowdsift.core.source import ENGAGEMENT_PENDING, RawThing, SearchPage, SourceStats
from crowdsift.core.text import utc_now
from crowdsift.http.identity import crowdsift_user_agent
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.transport import HttpTransport, OwnsClient
from crowdsift.sources.reddit.arctic_shift_items import (
    TimeCursor,
    bare_subreddit,
    engagement_pending,
    envelope_error,
    unwrap,
)
from crowdsift.sources.reddit.arctic_shift_params import (
    COMMENT_IDS_PATH,
    COMMENTS_PATH,
    IDS_MAX,
    POSTS_PATH,
    SUBREDDIT_LIMIT_MAX,
    SUBREDDITS_PATH,
    TREE_LIMIT_MAX,
    TREE_PATH,
    check,
    empty_window,
)
from crowdsift.sources.reddit.pagination import cursor_pages
from crowdsift.sources.reddit.threads import best_first, collapsed_tree, comment_tree

log = get_logger(__name__)

MAX_LIMIT = 100
MAX_TIMEOUT_SHRINKS = 2
"""On an API query timeout, ask again with half the ``limit`` at most this many times."""
TREE_LIMIT = 2000
"""Comments one tree request asks for: nearly every thread whole, and far below the 25000
that slows the API for everyone (Arctic Shift issue #33)."""
RATE_WINDOW = 60.0
"""Arctic Shift's rate-limit window in seconds (``x-ratelimit-reset`` counts down from 60)."""

TIME_FILTER_SECONDS: dict[str, int] = {
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
_TIMEOUT_WORDS = ("timeout", "timed out", "slow down")
_WHAT_TO_DO = (
    "Arctic Shift is a free archive with a hard query time limit and no support for full-text "
    "search in very active subreddits: narrow CROWDSIFT_SEARCH_TIME, lower CROWDSIFT_PAGE_SIZE, "
    "try again later, or use --source archive / --source reddit-api."
)


class ArcticShiftSource(OwnsClient):
    """Reddit content from the Arctic Shift archive API. Safe to share between threads."""

    def __init__(
        self,
        transport: HttpTransport,
        *,
        clock: Callable[[], datetime] = utc_now,
        tree_limit: int = TREE_LIMIT,
    ) -> None:
        """A transport without a rate limiter gets one (60 s window, the injected clock and the
        transport's sleep): pacing on Arctic Shift's headers is part of this source."""
        self.transport = transport
        self.name: SourceName = "arctic-shift"
        self.stats: SourceStats = transport.stats  # the same object the transport counts in
        self._clock = clock
        self._lock = threading.Lock()
        self.tree_limit = min(max(tree_limit, 1), TREE_LIMIT_MAX)
        if transport.rate_limiter is None:
            epoch = self._epoch
            transport.rate_limiter = RateLimiter(
                window_size=RATE_WINDOW, clock=epoch, wall_clock=epoch, sleep=transport.sleep
            )
        self.pacer: RateLimiter = transport.rate_limiter

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = utc_now,
    ) -> ArcticShiftSource:
        """Build the source from settings; an injected client is used as is (and not closed)."""
        client = http_client
        if client is None:
            client = httpx.Client(
                base_url=settings.arctic_shift_base_url,
                timeout=settings.http_timeout,
                headers={"User-Agent": crowdsift_user_agent()},
            )
        transport = HttpTransport.from_settings(
            client, settings, source="arctic-shift", sleep=sleep
        )
        source = cls(transport, clock=clock)
        source._own(client, built_here=http_client is None)
        return source

    # --- RedditSource -------------------------------------------------------------------

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",
        time_filter: TimeFilter = "all",
        limit: int = 25,
        after: str | None = None,
        since: datetime | None = None,
    ) -> SearchPage:
        """One page, newest first, of posts in ``subreddit`` whose title/body match ``term``."""
        cursor = TimeCursor.decode(after) if after else None
        if sort != "new":
            self._count("sort_fallback_to_new")
            log.debug("arctic_shift_sort_fallback", requested=sort, used="new")
        params: dict[str, str | int | float] = {
            "subreddit": subreddit,
            "query": term,
            "over_18": "false",
            "sort": "desc",
            "limit": min(max(limit, 1), MAX_LIMIT),
        }
        if time_filter in TIME_FILTER_SECONDS:
            # Rounded to the minute so a repeated search is the same request (cacheable).
            now = int(self._clock().timestamp()) // 60 * 60
            params["after"] = now - TIME_FILTER_SECONDS[time_filter]
        if since is not None:  # --since; ``after`` is exclusive, so one second before it
            params["after"] = max(int(params.get("after", 0)), since_epoch(since) - 1)
        for _ in range(2):  # a second round only to step past a second that made no progress
            if cursor is not None:
                params["before"] = cursor.bound(descending=True)
            items, asked = self._search(POSTS_PATH, params)
            posts = self._posts_of(items, subreddit, cursor)
            full = len(items) >= asked
            cursor = TimeCursor.after_page(items, cursor) if full else None
            if posts or cursor is None:
                break
        self.transport.count_page()
        return SearchPage(posts=posts, after=cursor.encode() if cursor else None)

    def recent_posts(self, subreddit: str, *, limit: int = 100) -> list[RawThing]:
        """The newest ``limit`` posts of ``subreddit`` (one request; SFW only), newest first:
        what its recent threads say about a community (``pipeline.reddit.recent``)."""
        params: dict[str, str | int | float] = {
            "subreddit": subreddit,
            "over_18": "false",
            "sort": "desc",
            "limit": min(max(limit, 1), MAX_LIMIT),
        }
        items, _ = self._search(POSTS_PATH, params)
        return self._posts_of(items, subreddit, None)

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        """Top-level comments of this thread only: the oldest ``limit`` (paging past 100 by
        date, the API's only order), best first (``threads.best_first``)."""
        if limit < 1:
            return []
        fullname = f"t3_{post_id.removeprefix('t3_')}"
        comments: dict[str, RawThing] = {}

        def fetch(cursor: TimeCursor | None) -> tuple[list[Any], TimeCursor | None]:
            params: dict[str, str | int | float] = {
                "link_id": fullname,
                "parent_id": "",
                "sort": "asc",
                "limit": min(limit - len(comments), MAX_LIMIT),
            }
            if cursor is not None:
                params["after"] = cursor.bound(descending=False)
            items, asked = self._search(COMMENTS_PATH, params)
            return items, TimeCursor.after_page(items, cursor) if len(items) >= asked else None

        # a short page is the last; a cursor already followed is a server not advancing
        for page in cursor_pages(fetch):
            for comment in self._comments_of(page.items, fullname):
                comments.setdefault(str(comment.get("id")), comment)
            if len(comments) >= limit:
                break
        return best_first(list(comments.values())[:limit])

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        """The thread's best comments as a tree, ``limit`` kept, ``depth`` levels deep.

        Asks for ``tree_limit`` comments, not ``limit``: the tree is ordered by score and cut
        afterwards, so the more of the thread it sees the better the comments it keeps. What
        the answer collapsed into ``more`` stubs is fetched by id (one request, shallowest
        stubs first); anything still collapsed after that is counted in
        ``stats.extra["tree_collapsed_left"]``.
        """
        if limit < 1 or depth < 1:
            return []
        fullname = f"t3_{post_id.removeprefix('t3_')}"
        items, _ = self._search(TREE_PATH, {"link_id": fullname, "limit": self.tree_limit})
        comments, collapsed = collapsed_tree(items)
        known = {str(c.get("id")) for c in comments}
        wanted = [i for i in collapsed if i not in known]
        if wanted:
            ids = ",".join(f"t1_{i}" for i in wanted[:IDS_MAX])
            more, _ = self._search(COMMENT_IDS_PATH, {"ids": ids})
            comments += [c for item in more if (c := unwrap(item, "t1")) is not None]
            self._count("tree_expanded", len(wanted[:IDS_MAX]))
            if len(wanted) > IDS_MAX:
                self._count("tree_collapsed_left", len(wanted) - IDS_MAX)
        return comment_tree(comments, fullname, limit=limit, depth=depth)

    # --- subreddit discovery -------------------------------------------------------------

    def search_subreddits(
        self, *, prefix: str | None = None, name: str | None = None, limit: int = 1000
    ) -> list[RawThing]:
        """Raw subreddit ``about`` dicts in the API's order: those whose name starts with
        ``prefix``, or the one called ``name`` (none if it is not archived). Exactly one of the
        two, non-empty (a leading ``r/`` is dropped); ``limit`` is clamped to 1-1000. Paced,
        retried and shrunk on a query timeout like every request here (``_search``)."""
        key, raw = ("subreddit_prefix", prefix) if name is None else ("subreddit", name)
        value = bare_subreddit(raw or "")
        if (prefix is None) == (name is None) or not value:
            raise ValueError(
                "search_subreddits takes exactly one non-empty prefix= or name=, "
                f"not prefix={prefix!r}, name={name!r}"
            )
        limit = min(max(limit, 1), SUBREDDIT_LIMIT_MAX)
        items, _ = self._search(SUBREDDITS_PATH, {key: value, "limit": limit})
        subreddits = [about for item in items if (about := unwrap(item, "t5")) is not None]
        log.debug("arctic_shift_subreddits", param=key, value=value, found=len(subreddits))
        return subreddits

    # --- helpers ------------------------------------------------------------------------

    def _search(self, path: str, params: dict[str, str | int | float]) -> tuple[list[Any], int]:
        """The ``data`` list and the ``limit`` it answered; a query timeout (in a 200 or a 422)
        backs off and halves the limit. A request the API would refuse is never sent, nor one
        whose exclusive ``after``/``before`` leave no second to match (that answers ``[]``)."""
        url = self.transport.display_url(path)
        check(path, params)
        shrinkable = "limit" in params
        asked = int(params["limit"]) if shrinkable else 0
        if empty_window(params):
            self._count("empty_window_not_sent")
            return [], asked
        shrinks = 0
        while True:
            status = 200
            try:
                body = self.transport.get_json(
                    path, {**params, "limit": asked} if shrinkable else params
                )
            except HttpStatusError as exc:
                body, status = exc.body, exc.status or 0
                if envelope_error(body) is None:
                    raise
            error = envelope_error(body)
            if error is None:
                if isinstance(body, dict) and isinstance(body.get("data"), list):
                    return body["data"], asked
                raise ResponseError(
                    f'GET {url} did not answer with Arctic Shift\'s {{"data": [...]}} envelope '
                    f"(got {type(body).__name__}); is ARCTIC_SHIFT_BASE_URL an Arctic Shift API?"
                )
            if not any(word in error.lower() for word in _TIMEOUT_WORDS):
                raise ResponseError(_refusal(url, status, error, params))
            if shrinks == MAX_TIMEOUT_SHRINKS or (shrinkable and asked == 1):
                raise TransportError(
                    f"Arctic Shift's query timed out on GET {url} (HTTP {status}: {error!r}), "
                    f"{f'even with limit={asked}' if shrinkable else 'even after backing off'}. "
                    f"{_WHAT_TO_DO}",
                    url=url,
                    status=status,
                )
            if self.transport.budget is not None:
                self.transport.budget.spend(url=url, status=status, reason=error)
            self._count("timeout_retries")
            policy = self.transport.policy
            hold = self.pacer.back_off(
                policy.initial_backoff * 2**shrinks, cap=policy.max_retry_wait
            )
            log.warning(
                "arctic_shift_query_timeout", url=url, status=status, limit=asked, error=error,
                wait_s=round(hold, 3),
            )  # fmt: skip
            shrinks += 1
            asked = max(asked // 2, 1)

    def _posts_of(
        self, items: Iterable[Any], subreddit: str, cursor: TimeCursor | None
    ) -> list[RawThing]:
        """t3 dicts of this subreddit, minus those the previous page already returned; each
        whose engagement is a placeholder marked ``ENGAGEMENT_PENDING`` (module notes)."""
        now = self._epoch()
        posts = []
        for item in items:
            post = unwrap(item, "t3")
            if post is None or (cursor is not None and str(post.get("id")) in cursor.seen):
                continue
            if str(post.get("subreddit", "")).lower() != subreddit.lower():
                self._count("dropped_other_subreddit")
                continue
            if engagement_pending(post, now):
                post[ENGAGEMENT_PENDING] = True
                self._count("engagement_pending")
            posts.append(post)
        return posts

    def _comments_of(self, items: Iterable[Any], fullname: str) -> list[RawThing]:
        """t1 dicts whose thread is ``fullname`` and whose parent is the post itself."""
        comments = []
        for item in items:
            comment = unwrap(item, "t1")
            if comment is None:
                continue  # "more" stubs and anything that is not a comment
            if comment.get("link_id") != fullname or comment.get("parent_id") != fullname:
                self._count("dropped_not_top_level")
                log.debug("comment_not_top_level", link_id=comment.get("link_id"), want=fullname)
                continue
            comments.append(comment)
        return comments

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats.extra[key] = self.stats.extra.get(key, 0) + n

    def _epoch(self) -> float:
        """The injected clock as epoch seconds (the rate limiter's clock too)."""
        return self._clock().timestamp()


def _refusal(url: str, status: int, error: str, params: dict[str, str | int | float]) -> str:
    """What to tell the user when Arctic Shift refuses a request (a 400 is our bug or theirs)."""
    names = ", ".join(sorted(params)) or "none"
    if status == 400:
        return (
            f"Arctic Shift refused GET {url} as a bad request (HTTP 400: {error!r}; parameters "
            f"sent: {names}). crowdsift checks its requests before sending them, so the API "
            "has changed or this is a bug: please report it, and use --source archive or "
            "--source reddit-api meanwhile."
        )
    return (
        f"Arctic Shift refused GET {url} (HTTP {status}): {error!r}. The API may have "
        "changed; check ARCTIC_SHIFT_BASE_URL, or use --source archive."
    )
