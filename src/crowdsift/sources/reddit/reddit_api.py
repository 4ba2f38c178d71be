"""The ``reddit-api`` source: Reddit's OAuth REST API (``/r/{sub}/search``, ``/comments/{id}``).

It translates between the ``RedditSource`` protocol and Reddit's Listing JSON, and maps
Reddit's ways of saying "this subreddit is not available" (403/404 with a ``reason``, or a 302
to ``/subreddits/search`` for a subreddit that does not exist) to
``SubredditUnavailableError``. All HTTP concerns live in the transport.

Reddit asks every API client for a unique user agent that names the account responsible for
it, ``<platform>:<app id>:<version> (by /u/<username>)``, and throttles or blocks generic
ones. ``REDDIT_USER_AGENT`` is used as given; without it the agent is built from the
operator's ``REDDIT_USERNAME`` (``reddit_user_agent``); without either the source refuses to
start rather than speak for an account that is not the operator's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx

from crowdsift import __version__
from crowdsift.core.config import SearchSort, Settings, SourceName, TimeFilter
from crowdsift.core.errors import (
    AuthError,
    HttpStatusError,
    ResponseError,
    SubredditUnavailableError,
    UsageError,
)
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.core.source import RawThing, SearchPage, SourceStats
from crowdsift.http.auth import RedditOAuth
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.transport import HttpTransport, OwnsClient
from crowdsift.sources.reddit.threads import flatten_listing

log = get_logger(__name__)

MAX_SEARCH_LIMIT = 100
MAX_COMMENT_LIMIT = 500

_STATUS_REASONS = {403: "forbidden", 404: "not found"}


class RedditApiSource(OwnsClient):
    """Reddit content through the official OAuth API. Safe to share between threads."""

    def __init__(self, transport: HttpTransport, *, name: SourceName = "reddit-api") -> None:
        self.transport = transport
        self.name: SourceName = name
        self.stats: SourceStats = transport.stats  # the same object the transport counts in

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> RedditApiSource:
        """Build the source from settings; an injected client is used as is (and not closed)."""
        register_secrets(settings.secret_values())
        client = http_client
        if client is None:
            client = httpx.Client(
                base_url=settings.reddit_api_base_url,
                auth=_oauth_from_settings(settings, clock),
                timeout=settings.http_timeout,
                headers={"User-Agent": reddit_user_agent(settings)},
                follow_redirects=False,
            )
        transport = HttpTransport.from_settings(
            client,
            settings,
            source="reddit-api",
            rate_limiter=RateLimiter(clock=clock, sleep=sleep),
            sleep=sleep,
        )
        source = cls(transport)
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
        since: datetime | None = None,  # noqa: ARG002  # RedditSource's; see below
    ) -> SearchPage:
        """One page of ``/r/{subreddit}/search`` restricted to that subreddit, NSFW excluded.

        Reddit takes no date bound: ``since`` is served by ``time_filter`` (the fetcher picks
        the smallest window covering it) and the fetcher's exact ``created_utc`` filter."""
        path = f"/r/{subreddit}/search"
        params: dict[str, str | int | float] = {
            "q": term,
            "restrict_sr": 1,
            "include_over_18": "false",
            "sort": sort,
            "t": time_filter,
            "limit": min(max(limit, 1), MAX_SEARCH_LIMIT),
            "raw_json": 1,
        }
        if after:
            params["after"] = after
        try:
            body = self._get(path, params)
        except HttpStatusError as exc:
            raise _unavailable(subreddit, exc) from exc
        data = _listing_data(body, self.transport.display_url(path))
        posts = [child["data"] for child in data["children"] if _is_kind(child, "t3")]
        self.transport.count_page()
        next_after = data.get("after")
        return SearchPage(posts=posts, after=next_after if isinstance(next_after, str) else None)

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        """Top-level comments of this thread only (``link_id == t3_<id>``), ``more`` skipped."""
        if limit < 1:
            return []
        bare_id = post_id.removeprefix("t3_")
        children = self._comment_children(bare_id, {"limit": limit, "depth": 1})
        fullname = f"t3_{bare_id}"
        comments: list[RawThing] = []
        for child in children:
            if not _is_kind(child, "t1"):
                continue  # "more" stubs and anything else that is not a comment
            comment = child["data"]
            if comment.get("link_id") != fullname:
                log.debug("comment_other_thread", post_id=bare_id, link_id=comment.get("link_id"))
                continue
            comments.append(comment)
        return comments[:limit]

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        """The thread ``depth`` levels deep in Reddit's own ``sort=top`` order, pre-order.

        One request: Reddit nests replies itself and cuts the rest into ``more`` stubs, which
        are skipped (following them costs one request each, and the drill's budget is time).
        """
        if limit < 1 or depth < 1:
            return []
        bare_id = post_id.removeprefix("t3_")
        children = self._comment_children(bare_id, {"depth": depth, "limit": limit})
        return flatten_listing(children, bare_id, limit=limit, depth=depth)

    # --- helpers ------------------------------------------------------------------------

    def _comment_children(self, bare_id: str, params: dict[str, int]) -> list[Any]:
        """The children of ``/comments/{id}``'s comment Listing (``sort=top``, limit capped)."""
        path = f"/comments/{bare_id}"
        query: dict[str, str | int | float] = {
            **params,
            "limit": min(max(params["limit"], 1), MAX_COMMENT_LIMIT),
            "sort": "top",
            "raw_json": 1,
        }
        body = self._get(path, query)
        url = self.transport.display_url(path)
        if not isinstance(body, list) or len(body) != 2:
            raise ResponseError(
                f"GET {url} did not answer with [post listing, comment listing] "
                f"(got {type(body).__name__}); is REDDIT_API_BASE_URL a Reddit API?"
            )
        children: list[Any] = _listing_data(body[1], url)["children"]
        return children

    def _get(self, path: str, params: dict[str, str | int | float]) -> Any:
        """GET through the transport; a 401 the token refresh could not fix names settings."""
        try:
            return self.transport.get_json(path, params)
        except HttpStatusError as exc:
            if exc.status == 401:
                raise AuthError(
                    f"{exc} Reddit rejects our token: check REDDIT_CLIENT_ID and "
                    "REDDIT_CLIENT_SECRET (and REDDIT_USERNAME / REDDIT_PASSWORD for a script "
                    "app), or use --source archive / --source arctic-shift."
                ) from exc
            raise


def _oauth_from_settings(settings: Settings, clock: Callable[[], float]) -> RedditOAuth:
    if not settings.reddit_client_id or settings.reddit_client_secret is None:
        raise UsageError(
            "The reddit-api source needs Reddit API credentials: set REDDIT_CLIENT_ID and "
            "REDDIT_CLIENT_SECRET (from https://www.reddit.com/prefs/apps), or use "
            "--source archive / --source arctic-shift, which need no key."
        )
    password = settings.reddit_password
    return RedditOAuth(
        auth_url=settings.reddit_auth_url,
        client_id=settings.reddit_client_id,
        client_secret=settings.reddit_client_secret.get_secret_value(),
        user_agent=reddit_user_agent(settings),
        username=settings.reddit_username,
        password=password.get_secret_value() if password is not None else None,
        clock=clock,
    )


def reddit_user_agent(settings: Settings) -> str:
    """``REDDIT_USER_AGENT``, else one built from ``REDDIT_USERNAME``; UsageError without both."""
    given = (settings.reddit_user_agent or "").strip()
    if given:
        return given
    username = (settings.reddit_username or "").strip().removeprefix("/u/").removeprefix("u/")
    if username:
        return f"python:crowdsift:{__version__} (by /u/{username})"
    raise UsageError(
        "The reddit-api source needs a user agent naming you: Reddit expects "
        "'<platform>:<app id>:<version> (by /u/<username>)' and throttles or blocks generic "
        f"ones. Set REDDIT_USERNAME to your Reddit username (crowdsift then sends "
        f"'python:crowdsift:{__version__} (by /u/<username>)'), or set REDDIT_USER_AGENT."
    )


def _unavailable(subreddit: str, exc: HttpStatusError) -> Exception:
    """403/404/3xx on a subreddit search → SubredditUnavailableError; anything else as is."""
    status = exc.status or 0
    if 300 <= status < 400:
        reason = "does not exist (Reddit redirected the search to /subreddits/search)"
        return SubredditUnavailableError(subreddit, reason, status=status)
    if status in _STATUS_REASONS:
        body = exc.body if isinstance(exc.body, dict) else {}
        given = body.get("reason")
        text = given if isinstance(given, str) and given else _STATUS_REASONS[status]
        return SubredditUnavailableError(subreddit, text, status=status)
    return exc


def _is_kind(child: object, kind: str) -> bool:
    return (
        isinstance(child, dict)
        and child.get("kind") == kind
        and isinstance(child.get("data"), dict)
    )


def _listing_data(body: object, url: str) -> dict[str, Any]:
    """The ``data`` of a Listing, or ResponseError naming the URL."""
    if isinstance(body, dict) and body.get("kind") == "Listing":
        data = body.get("data")
        if isinstance(data, dict) and isinstance(data.get("children"), list):
            return data
    kind = body.get("kind") if isinstance(body, dict) else None
    if isinstance(kind, str):
        shape = f"kind {kind[:40]!r}"
    else:  # never the value itself: it may be huge, or nested too deeply to print
        shape = "an object without kind" if isinstance(body, dict) else type(body).__name__
    raise ResponseError(
        f"GET {url} did not answer with a Reddit Listing (got {shape}); "
        "is REDDIT_API_BASE_URL pointing at Reddit's API?"
    )
