"""Arctic Shift as projects using it live in 2026 saw it behave, against the local server.

Each test is one quirk of ``crowdsift.sources.reddit.arctic_shift``'s module notes: an error
inside HTTP 200, reset-only rate-limit headers, requests the API refuses with 400, exclusive
date bounds, and placeholder engagement before the second retrieval. Sleeps are recorded and
move the one clock the server and the source share; nothing waits for real.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from crowdsift.core.errors import ResponseError, SourceError
from crowdsift.core.source import ENGAGEMENT_PENDING
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.sources.reddit.arctic_shift_items import PENDING_HORIZON, engagement_pending
from crowdsift.sources.reddit.arctic_shift_params import check, empty_window
from crowdsift.sources.reddit.pagination import paginate_search
from tests.sources.reddit.test_arctic_shift import (
    NOW,
    NOW_TS,
    SUB,
    Harness,
    make_post,
    skillet_posts,
)

SLOW_DOWN = "Timeout. Maybe slow down a bit"


@pytest.fixture
def late() -> Iterator[Harness]:
    """45 s into a 60 s rate-limit window, with Arctic Shift's reset-only headers on."""
    harness = Harness(now=NOW + timedelta(seconds=45))
    harness.server.rate_limit_headers = True
    with harness.server:
        try:
            yield harness
        finally:
            harness.close()


@pytest.fixture
def arctic() -> Iterator[Harness]:
    harness = Harness()
    with harness.server:
        try:
            yield harness
        finally:
            harness.close()


# --- an error inside HTTP 200 ---------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 422])
def test_a_timeout_envelope_backs_off_and_shrinks_the_same_in_200_and_422(
    arctic: Harness, status: int
) -> None:
    arctic.server.add_posts(SUB, skillet_posts(30))
    arctic.server.add_fault("/api/posts/search", "api_error", status=status, message=SLOW_DOWN)
    source = arctic.source(budget=5)

    page = source.search_subreddit(SUB, "skillet", limit=25)

    assert [r["limit"] for r in arctic.search_requests()] == ["25", "12"]
    assert len(page.posts) == 12
    assert arctic.sleeps == [0.5]  # backed off (no reset header to wait for), then asked again
    assert source.stats.extra["timeout_retries"] == 1
    assert source.transport.budget is not None and source.transport.budget.spent == 1


# --- reset-only rate-limit headers ----------------------------------------------------------


def test_server_sends_reset_headers_without_remaining(late: Harness) -> None:
    with httpx.Client(base_url=late.server.base_url) as client:
        response = client.get("/api/posts/search", params={"subreddit": SUB})
    assert response.headers["x-ratelimit-reset"] == "15"
    assert response.headers["x-ratelimit-reset-at"] == str((NOW_TS + 60) * 1000)
    assert "x-ratelimit-remaining" not in response.headers


@pytest.mark.parametrize("status", [200, 422])
def test_slow_down_waits_until_the_window_resets(late: Harness, status: int) -> None:
    late.server.add_posts(SUB, skillet_posts(3))
    late.server.add_fault("/api/posts/search", "api_error", status=status, message=SLOW_DOWN)

    page = late.source().search_subreddit(SUB, "skillet")

    assert len(page.posts) == 3
    assert late.sleeps == [15.0]  # to the reset the headers announced, not a blind backoff


def test_a_429_without_retry_after_waits_until_the_reset(late: Harness) -> None:
    late.server.add_posts(SUB, skillet_posts(2))
    late.server.add_fault("/api/posts/search", "status", status=429)

    page = late.source().search_subreddit(SUB, "skillet")

    assert len(page.posts) == 2
    assert late.sleeps == [15.0]


def test_reset_headers_alone_never_slow_a_healthy_fetch(late: Harness) -> None:
    late.server.add_posts(SUB, skillet_posts(7))
    source = late.source()

    posts = list(paginate_search(source, SUB, "skillet", page_size=3, cap=100))

    assert len(posts) == 7
    assert len(late.search_requests()) >= 3  # several answers, each with reset headers
    assert late.sleeps == []


def test_limiter_reads_reset_at_as_epoch_milliseconds_and_caps_it() -> None:
    wall = 1_700_000_000
    limiter = RateLimiter(window_size=60, clock=lambda: 0.0, wall_clock=lambda: float(wall))
    at = lambda seconds: {"x-ratelimit-reset-at": str(seconds)}  # noqa: E731
    assert limiter.seconds_to_reset(at((wall + 20) * 1000)) == 20.0  # epoch milliseconds
    assert limiter.seconds_to_reset(at(wall + 20)) == 20.0  # seconds, should a server send them
    assert limiter.seconds_to_reset(at((wall + 86400 * 365) * 1000)) == 60.0  # one window at most
    assert limiter.seconds_to_reset(at((wall - 5) * 1000)) == 0.0  # already past
    assert limiter.seconds_to_reset({"x-ratelimit-reset": "7", "x-ratelimit-reset-at": "0"}) == 7
    assert limiter.seconds_to_reset({"x-ratelimit-reset": "soon"}) is None


def test_limiter_backs_off_to_the_reset_or_the_fallback() -> None:
    now = [100.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(window_size=60, clock=lambda: now[0], sleep=sleep)
    limiter.update({"x-ratelimit-reset": "12"})
    assert limiter.delay() == 0.0  # a reset alone is no reason to wait
    assert limiter.back_off(0.5) == 12.0
    assert limiter.delay() == 12.0
    assert limiter.back_off(0.5) == 0.5  # that window is over: the fallback
    assert waits == [12.0]


# --- requests the API refuses with 400 ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("/api/posts/search", {"subreddit": SUB, "fields": "id,permalink"}, "permalink"),
        ("/api/posts/search", {"subreddit": SUB, "fields": "is_self"}, "is_self"),
        ("/api/comments/search", {"link_id": "t3_x", "fields": "title,body"}, "title"),
        ("/api/posts/search", {"query": "skillet"}, "subreddit or author"),
        ("/api/posts/search", {"subreddit": "", "query": "skillet"}, "subreddit or author"),
        ("/api/posts/search", {"subreddit": SUB, "limit": 0}, "limit must be 1-100"),
        ("/api/comments/search", {"link_id": "t3_x", "limit": 101}, "limit must be 1-100"),
        ("/api/comments/tree", {"link_id": "t3_x", "limit": 25001}, "1-25000"),
        ("/api/comments/tree", {"limit": 10}, "link_id is required"),
        ("/api/comments/ids", {"ids": ",".join(["a"] * 501)}, "1-500 ids"),
    ],
)
def test_requests_the_api_refuses_are_refused_before_sending(
    path: str, params: dict[str, Any], named: str
) -> None:
    with pytest.raises(SourceError, match="HTTP 400") as info:
        check(path, params)
    assert named in str(info.value)
    assert "--source archive" in str(info.value)


def test_what_the_api_accepts_passes_the_check() -> None:
    check("/api/posts/search", {"subreddit": SUB, "query": "x", "limit": 100, "fields": "id,title"})
    check("/api/comments/search", {"link_id": "t3_x", "parent_id": "", "limit": 1})
    check("/api/comments/tree", {"link_id": "t3_x", "limit": 25000})


def test_the_source_never_sends_a_keyword_search_without_a_subreddit(arctic: Harness) -> None:
    with pytest.raises(SourceError, match="needs subreddit or author"):
        arctic.source().search_subreddit("  ", "skillet")
    assert arctic.server.requests == []


@pytest.mark.parametrize(
    ("path", "params", "error"),
    [
        ("/api/comments/search", {"link_id": "t3_x", "fields": "title"}, "Invalid field: title"),
        ("/api/comments/tree", {"link_id": "t3_x", "limit": "25001"}, "Invalid limit"),
        ("/api/comments/tree", {"limit": "5"}, "link_id is required"),
        ("/api/comments/ids", {"ids": ",".join(["a"] * 501)}, "Invalid ids"),
    ],
)
def test_server_refuses_the_same_requests_with_400(
    arctic: Harness, path: str, params: dict[str, str], error: str
) -> None:
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get(path, params=params)
    assert response.status_code == 400
    assert error in response.json()["error"]


def test_a_400_that_still_comes_back_is_an_error_that_says_what_to_do(arctic: Harness) -> None:
    arctic.server.add_fault("/api/posts/search", "api_error", status=400, message="Bad x")
    with pytest.raises(ResponseError) as info:
        arctic.source().search_subreddit(SUB, "skillet")
    message = str(info.value)
    assert "bad request (HTTP 400: 'Bad x'" in message
    assert "over_18, query, sort, subreddit" in message  # the names sent, never their values
    assert "skillet" not in message
    assert "report it" in message and "--source archive" in message


# --- exclusive after/before -----------------------------------------------------------------


def test_a_window_exclusive_bounds_leave_empty_is_never_sent(arctic: Harness) -> None:
    source = arctic.source()
    page = source.search_subreddit(SUB, "skillet", time_filter="hour", after="100")
    assert page.posts == [] and page.after is None
    assert arctic.server.requests == []
    assert source.stats.extra["empty_window_not_sent"] == 1


def test_empty_window_knows_the_bounds_are_exclusive() -> None:
    assert empty_window({"after": 10, "before": 11})  # nothing strictly between
    assert not empty_window({"after": 10, "before": 12})
    assert not empty_window({"after": 10})
    assert not empty_window({"after": "1d", "before": 5})  # a date form: the API decides


# --- placeholder engagement -----------------------------------------------------------------


def test_posts_before_the_second_retrieval_are_marked_engagement_pending(
    arctic: Harness,
) -> None:
    old = NOW_TS - PENDING_HORIZON - 60
    arctic.server.add_posts(
        SUB,
        [
            make_post("settled", NOW_TS - 10, "skillet a", _meta={"retrieved_2nd_on": NOW_TS}),
            make_post("pending", NOW_TS - 20, "skillet b", _meta={"is_edited": False}),
            make_post("fresh", NOW_TS - 30, "skillet c"),
            make_post("never", old, "skillet d", _meta={"note": "no_2nd_retrieval"}),
            make_post("ancient", old - 1, "skillet e"),
        ],
    )
    source = arctic.source()

    posts = source.search_subreddit(SUB, "skillet").posts

    marked = {p["id"] for p in posts if p.get(ENGAGEMENT_PENDING)}
    assert marked == {"pending", "fresh", "never"}
    assert source.stats.extra["engagement_pending"] == 3


def test_engagement_pending_reads_the_stamp_not_the_clock() -> None:
    late_refetch = {"created_utc": NOW_TS - 10 * 86400, "_meta": {"retrieved_2nd_on": NOW_TS}}
    assert not engagement_pending(late_refetch, NOW_TS)
    assert engagement_pending({"created_utc": NOW_TS - 3 * 86400, "_meta": {}}, NOW_TS)
    assert engagement_pending({"created_utc": "garbage"}, NOW_TS)  # unknown age: not final


def test_a_back_off_never_outlasts_the_retry_wait_cap() -> None:
    limiter = RateLimiter(window_size=60, clock=lambda: 0.0)
    limiter.update({"x-ratelimit-reset": "50"})
    assert limiter.back_off(0.5, cap=10.0) == 10.0
