"""The arctic-shift source against a real local Arctic Shift server (sleeps injected)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from crowdsift import __version__
from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    ResponseError,
    RetryBudgetExceededError,
    TransportError,
)
from crowdsift.core.models import PERMALINK_RE
from crowdsift.core.source import RedditSource
from crowdsift.http.identity import crowdsift_user_agent
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.retry import RetryBudget
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.arctic_shift_items import TimeCursor
from crowdsift.sources.reddit.pagination import paginate_search
from tests.support.arctic_shift_server import ArcticShiftServer

NOW = datetime(2024, 6, 1, tzinfo=UTC)
NOW_TS = int(NOW.timestamp())
SUB = "BuyItForLife"


def make_post(
    post_id: str, created: int, title: str, selftext: str = "", **extra: Any
) -> dict[str, Any]:
    slug = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:40]
    post = {
        "id": post_id,
        "name": f"t3_{post_id}",
        "title": title,
        "selftext": selftext,
        "author": f"user_{post_id}",
        "score": 10,
        "num_comments": 3,
        "created_utc": created,
        "subreddit": SUB,
        "permalink": f"/r/{SUB}/comments/{post_id}/{slug}/",
        "url": f"https://www.reddit.com/r/{SUB}/comments/{post_id}/{slug}/",
        "over_18": False,
        "is_self": True,
    }
    post.update(extra)
    return post


def make_comment(
    comment_id: str, post_id: str, created: int, parent: str | None = None
) -> dict[str, Any]:
    return {
        "id": comment_id,
        "name": f"t1_{comment_id}",
        "body": f"comment {comment_id} on {post_id}",
        "author": f"commenter_{comment_id}",
        "score": 2,
        "created_utc": created,
        "link_id": f"t3_{post_id}",
        "parent_id": parent or f"t3_{post_id}",
        "subreddit": SUB,
        "permalink": f"/r/{SUB}/comments/{post_id}/x/{comment_id}/",
    }


class Harness:
    """A server, a source over an injected client, and the sleeps the transport asked for.

    One clock for the server and the source, moved on by every sleep, so waits are exact.
    """

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now
        self.server = ArcticShiftServer(clock=self.clock)
        self.sleeps: list[float] = []
        self._clients: list[httpx.Client] = []

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=seconds)

    def source(self, *, max_retries: int = 4, budget: int = 40) -> ArcticShiftSource:
        client = httpx.Client(base_url=self.server.base_url, timeout=5.0)
        self._clients.append(client)
        transport = HttpTransport(
            client,
            source="arctic-shift",
            max_retries=max_retries,
            budget=RetryBudget(budget),
            sleep=self.sleep,
        )
        return ArcticShiftSource(transport, clock=self.clock)

    def close(self) -> None:
        for client in self._clients:
            client.close()

    def search_requests(self) -> list[dict[str, str]]:
        return [r.params for r in self.server.requests if r.path == "/api/posts/search"]


@pytest.fixture
def arctic() -> Iterator[Harness]:
    harness = Harness()
    with harness.server:
        try:
            yield harness
        finally:
            harness.close()


def skillet_posts(count: int, *, start: int = NOW_TS - 1000) -> list[dict[str, Any]]:
    """``count`` matching posts one minute apart, newest first by id order s0, s1, ..."""
    return [
        make_post(f"s{i}", start - i * 60, f"Cast iron skillet number {i}", "Still going strong")
        for i in range(count)
    ]


# --- search and pagination ----------------------------------------------------------------


def test_pagination_yields_every_match_once_and_stops_on_a_short_page(arctic: Harness) -> None:
    posts = skillet_posts(23)
    posts[10]["created_utc"] = posts[9]["created_utc"]  # two posts share a second on the boundary
    arctic.server.add_posts(SUB, posts)
    arctic.server.add_posts(SUB, [make_post("n1", NOW_TS - 50, "Wool socks", "last ten years")])
    other = make_post("o1", NOW_TS - 70, "Cast iron skillet", subreddit="cooking")
    arctic.server.add_posts("cooking", [other])
    source = arctic.source()

    got = list(paginate_search(source, SUB, "cast iron skillet", page_size=10, cap=50))

    assert [p["id"] for p in got] == [p["id"] for p in posts]  # all, once, newest first
    limits = [r["limit"] for r in arctic.search_requests()]
    assert limits == ["10", "10", "10"]
    assert source.stats.pages == 3


def test_pagination_stops_at_cap_and_on_an_empty_page(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, skillet_posts(20))
    source = arctic.source()

    assert len(list(paginate_search(source, SUB, "skillet", page_size=10, cap=15))) == 15
    before = len(arctic.search_requests())
    assert len(list(paginate_search(source, SUB, "skillet", page_size=10, cap=50))) == 20
    assert len(arctic.search_requests()) - before == 3  # 10, 10, then a short page


def test_cursor_is_none_when_the_page_is_not_full(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, skillet_posts(4))
    page = arctic.source().search_subreddit(SUB, "skillet", limit=5)
    assert len(page.posts) == 4
    assert page.after is None


def test_a_full_page_inside_one_second_does_not_loop(arctic: Harness) -> None:
    same_second = [make_post(f"t{i}", NOW_TS - 100, f"skillet {i}") for i in range(4)]
    older = [make_post("old", NOW_TS - 500, "old skillet")]
    arctic.server.add_posts(SUB, same_second + older)
    source = arctic.source()

    got = list(paginate_search(source, SUB, "skillet", page_size=2, cap=50))

    ids = [p["id"] for p in got]
    assert len(ids) == len(set(ids))
    assert ids[-1] == "old"  # the walk got past the crowded second


def test_search_sends_restrict_sr_semantics_and_clamps_limit(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, [make_post("a", NOW_TS - 10, "Skillet", over_18=True)])
    page = arctic.source().search_subreddit(SUB, "skillet", sort="new", limit=500)
    params = arctic.search_requests()[0]
    assert params == {
        "subreddit": SUB,
        "query": "skillet",
        "over_18": "false",
        "sort": "desc",
        "limit": "100",
    }
    assert page.posts == []  # the NSFW post is filtered by the API itself


def test_unsupported_sorts_fall_back_to_newest_first_and_are_counted(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, skillet_posts(3))
    source = arctic.source()
    page = source.search_subreddit(SUB, "skillet", sort="top")
    assert [p["id"] for p in page.posts] == ["s0", "s1", "s2"]
    assert arctic.search_requests()[0]["sort"] == "desc"
    assert source.stats.extra["sort_fallback_to_new"] == 1
    source.search_subreddit(SUB, "skillet", sort="new")
    assert source.stats.extra["sort_fallback_to_new"] == 1


@pytest.mark.parametrize(
    ("time_filter", "seconds"),
    [("hour", 3600), ("day", 86400), ("week", 604800), ("month", 2592000), ("year", 31536000)],
)
def test_time_filter_becomes_a_lower_date_bound(
    arctic: Harness, time_filter: Any, seconds: int
) -> None:
    arctic.server.add_posts(
        SUB,
        [
            make_post("inside", NOW_TS - seconds + 5, "skillet inside"),
            make_post("outside", NOW_TS - seconds - 5, "skillet outside"),
        ],
    )
    page = arctic.source().search_subreddit(SUB, "skillet", time_filter=time_filter)
    assert arctic.search_requests()[0]["after"] == str(NOW_TS - seconds)
    assert [p["id"] for p in page.posts] == ["inside"]


def test_time_filter_all_sends_no_bound(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, [make_post("ancient", 1_200_000_000, "skillet")])
    page = arctic.source().search_subreddit(SUB, "skillet", time_filter="all")
    assert "after" not in arctic.search_requests()[0]
    assert [p["id"] for p in page.posts] == ["ancient"]


def test_posts_are_raw_reddit_dicts_with_a_citable_permalink(arctic: Harness) -> None:
    original = make_post(
        "abc12", NOW_TS - 10, "Best cast iron skillet?", "Lodge or Field?",
        _meta={"retrieved_2nd_on": NOW_TS - 5},
    )  # fmt: skip
    arctic.server.add_posts(SUB, [original])
    (post,) = arctic.source().search_subreddit(SUB, "skillet").posts
    assert post == original  # nothing dropped, nothing invented
    url = "https://www.reddit.com" + post["permalink"]
    assert PERMALINK_RE.match(url)
    assert url.startswith(f"https://www.reddit.com/r/{SUB}/comments/abc12/")


# --- comments -----------------------------------------------------------------------------


def test_comments_are_top_level_of_that_post_only(arctic: Harness) -> None:
    arctic.server.add_comments(
        "p1",
        [
            make_comment("c2", "p1", NOW_TS - 50),
            make_comment("c1", "p1", NOW_TS - 90),
            make_comment("r1", "p1", NOW_TS - 40, parent="t1_c1"),
            make_comment("r2", "p1", NOW_TS - 30, parent="t1_r1"),
            make_comment("c3", "p1", NOW_TS - 20),
        ],
    )
    arctic.server.add_comments("p2", [make_comment("x1", "p2", NOW_TS - 60)])
    source = arctic.source()

    comments = source.fetch_post_comments("p1")

    assert [c["id"] for c in comments] == ["c1", "c2", "c3"]  # equal scores: oldest first
    assert all(c["link_id"] == "t3_p1" and c["parent_id"] == "t3_p1" for c in comments)
    params = arctic.server.requests[-1].params
    assert params == {"link_id": "t3_p1", "parent_id": "", "sort": "asc", "limit": "100"}
    assert [c["id"] for c in source.fetch_post_comments("t3_p1", limit=2)] == ["c1", "c2"]


def test_comments_come_best_first_like_reddits_top_sort(arctic: Harness) -> None:
    """The API orders comments by date only; a caller that keeps the first few (the fetcher
    keeps 20) must get the best, not the oldest. Ties stay oldest first; junk scores count 0."""
    scored = {"old": 1, "best": 57, "mid": 9, "tie": 9, "junk": "n/a", "worst": -4}
    comments = []
    for age, (comment_id, score) in enumerate(scored.items()):
        comment = make_comment(comment_id, "p1", NOW_TS - 100 + age)
        comment["score"] = score
        comments.append(comment)
    arctic.server.add_comments("p1", comments)

    got = [c["id"] for c in arctic.source().fetch_post_comments("p1")]

    assert got == ["best", "mid", "tie", "old", "junk", "worst"]
    assert arctic.server.requests[-1].params["sort"] == "asc"  # the API's date order, sorted here


def test_comments_page_past_one_hundred_without_loss_or_repeats(arctic: Harness) -> None:
    comments = [make_comment(f"k{i}", "big", NOW_TS - 10_000 + i * 10) for i in range(130)]
    comments[100]["created_utc"] = comments[99]["created_utc"]  # shared second at the boundary
    arctic.server.add_comments("big", comments)

    got = arctic.source().fetch_post_comments("big", limit=500)

    assert sorted(c["id"] for c in got) == sorted(c["id"] for c in comments)
    assert len(got) == 130


def test_misbehaving_answers_never_leak_other_threads_or_more_stubs() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        data = [
            make_comment("ok", "p1", 100),
            make_comment("alien", "p9", 101),
            make_comment("reply", "p1", 102, parent="t1_ok"),
            {"kind": "more", "data": {"id": "m1", "children": ["z1", "z2"]}},
            {"kind": "t1", "data": make_comment("wrapped", "p1", 103)},
        ]
        return httpx.Response(200, json={"data": data})

    with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://as") as client:
        source = ArcticShiftSource(HttpTransport(client, source="arctic-shift"))
        got = source.fetch_post_comments("p1")
    assert [c["id"] for c in got] == ["ok", "wrapped"]
    assert source.stats.extra["dropped_not_top_level"] == 2


# --- errors and retries -------------------------------------------------------------------


@pytest.mark.parametrize("status", [422, 200])
def test_query_timeout_envelope_is_retried_with_a_smaller_limit(
    arctic: Harness, status: int
) -> None:
    arctic.server.add_posts(SUB, skillet_posts(30))
    arctic.server.add_fault("/api/posts/search", "api_error", status=status)
    source = arctic.source(budget=5)

    page = source.search_subreddit(SUB, "skillet", limit=25)

    assert [r["limit"] for r in arctic.search_requests()] == ["25", "12"]
    assert len(page.posts) == 12
    assert page.after is not None  # full relative to what was asked
    assert source.stats.extra["timeout_retries"] == 1
    assert source.transport.budget is not None and source.transport.budget.spent == 1


def test_persistent_query_timeout_raises_transport_error_with_advice(arctic: Harness) -> None:
    arctic.server.add_fault("/api/posts/search", "api_error", times=5)
    with pytest.raises(TransportError) as info:
        arctic.source().search_subreddit(SUB, "skillet", limit=25)
    assert info.value.status == 422
    assert info.value.url == f"{arctic.server.base_url}/api/posts/search"
    assert "Timeout. Maybe slow down a bit" in str(info.value)
    assert "--source archive" in str(info.value)
    assert len(arctic.search_requests()) == 3  # 25, 12, 6


def test_other_api_errors_become_response_errors_naming_the_url(arctic: Harness) -> None:
    arctic.server.add_fault("/api/posts/search", "api_error", status=400, message="Bad param x")
    with pytest.raises(ResponseError, match=r"/api/posts/search.*Bad param x"):
        arctic.source().search_subreddit(SUB, "skillet")
    assert len(arctic.search_requests()) == 1


def test_a_non_envelope_answer_is_a_response_error() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=[1, 2, 3])

    with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://as") as client:
        source = ArcticShiftSource(HttpTransport(client, source="arctic-shift"))
        with pytest.raises(ResponseError, match="ARCTIC_SHIFT_BASE_URL"):
            source.search_subreddit(SUB, "skillet")


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("status", {"status": 503}),
        ("status", {"status": 502}),
        ("truncated", {}),
        ("disconnect", {}),
    ],
)
def test_http_faults_are_retried(arctic: Harness, kind: str, options: dict[str, Any]) -> None:
    arctic.server.add_posts(SUB, skillet_posts(3))
    arctic.server.add_fault("/api/posts/search", kind, times=2, **options)
    source = arctic.source()

    page = source.search_subreddit(SUB, "skillet")

    assert len(page.posts) == 3
    assert len(arctic.search_requests()) == 3
    assert source.stats.retries == 2
    assert len(arctic.sleeps) == 2


def test_rate_limited_answer_waits_for_retry_after(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, skillet_posts(1))
    arctic.server.add_fault("/api/posts/search", "rate_limited", retry_after=7)
    page = arctic.source().search_subreddit(SUB, "skillet")
    assert len(page.posts) == 1
    assert arctic.sleeps and arctic.sleeps[0] >= 7


def test_retries_spent_raise_transport_error(arctic: Harness) -> None:
    arctic.server.add_fault("/api/comments/search", "status", times=10, status=503)
    with pytest.raises(TransportError) as info:
        arctic.source(max_retries=2).fetch_post_comments("p1")
    assert info.value.status == 503
    assert len(arctic.server.requests) == 3


def test_shared_budget_runs_out(arctic: Harness) -> None:
    arctic.server.add_fault("/api/posts/search", "status", times=10, status=500)
    with pytest.raises(RetryBudgetExceededError):
        arctic.source(budget=1).search_subreddit(SUB, "skillet")


# --- construction, protocol, threads ------------------------------------------------------


def test_from_settings_builds_and_owns_its_client(arctic: Harness) -> None:
    settings = Settings(
        arctic_shift_base_url=arctic.server.base_url + "/", reddit_user_agent="ua/1", retry_budget=7
    )
    arctic.server.add_posts(SUB, skillet_posts(2))
    source = ArcticShiftSource.from_settings(settings, sleep=arctic.sleep)
    try:
        assert isinstance(source, RedditSource)
        assert source.name == "arctic-shift"
        assert source.transport.client.headers["User-Agent"] == crowdsift_user_agent()
        assert source.transport.client.headers["User-Agent"].startswith(
            f"crowdsift/{__version__}"
        )  # crowdsift's own name, never the Reddit user agent
        assert isinstance(source.transport.rate_limiter, RateLimiter)
        assert source.transport.budget is not None and source.transport.budget.total == 7
        assert len(source.search_subreddit(SUB, "skillet").posts) == 2
    finally:
        source.close()
    assert source.transport.client.is_closed


def test_close_leaves_an_injected_client_open(arctic: Harness) -> None:
    with httpx.Client(base_url=arctic.server.base_url) as client:
        source = ArcticShiftSource.from_settings(Settings(), http_client=client)
        source.close()
        assert not client.is_closed


def test_concurrent_searches_share_one_source(arctic: Harness) -> None:
    for sub in ("alpha", "beta", "gamma", "delta"):
        posts = [
            make_post(f"{sub}{i}", NOW_TS - i, f"skillet {i}", subreddit=sub) for i in range(5)
        ]
        arctic.server.add_posts(sub, posts)
    source = arctic.source()
    results: dict[str, list[str]] = {}

    def run(sub: str) -> None:
        results[sub] = [p["id"] for p in source.search_subreddit(sub, "skillet").posts]

    threads = [threading.Thread(target=run, args=(s,)) for s in ("alpha", "beta", "gamma", "delta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {s: [f"{s}{i}" for i in range(5)] for s in results}
    assert len(results) == 4
    assert source.stats.requests == 4


def test_cursor_round_trips_and_rejects_garbage() -> None:
    cursor = TimeCursor(1700000000, frozenset({"b", "a"}))
    assert cursor.encode() == "1700000000:a,b"
    assert TimeCursor.decode(cursor.encode()) == cursor
    assert TimeCursor.decode("1700000000") == TimeCursor(1700000000)
    with pytest.raises(ValueError, match="not an arctic-shift cursor"):
        TimeCursor.decode("t3_abc")


# --- the emulated API itself --------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"subreddit": SUB, "q": "x"}, "Unknown parameter: q"),
        ({"subreddit": SUB, "limit": "101"}, "Invalid limit"),
        ({"subreddit": SUB, "sort": "top"}, "Invalid sort"),
        ({"subreddit": SUB, "after": "1w"}, "Invalid date"),
        ({"query": "skillet"}, "only supported in combination"),
        ({"subreddit": SUB, "fields": "id,permalink"}, "Invalid field: permalink"),
    ],
)
def test_server_refuses_what_the_api_refuses(
    arctic: Harness, params: dict[str, str], error: str
) -> None:
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get("/api/posts/search", params=params)
    assert response.status_code == 400
    assert response.json()["data"] is None
    assert error in response.json()["error"]


def test_server_unknown_path_is_404(arctic: Harness) -> None:
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get("/api/users/search", params={"author": "x"})
    assert response.status_code == 404
    assert "error" in response.json()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cast iron", {"both", "title_only", "phrase"}),  # AND, any order
        ('"iron cast"', {"phrase"}),
        ("skillets", {"both", "title_only", "body_only"}),
        ("skillet -rust", {"title_only", "body_only"}),
        ("wok OR rust", {"both", "phrase"}),
        ("the skillet", {"both", "title_only", "body_only"}),
    ],
)
def test_server_full_text_query_semantics(arctic: Harness, query: str, expected: set[str]) -> None:
    arctic.server.add_posts(
        SUB,
        [
            make_post("both", NOW_TS - 1, "Cast iron skillet", "no rust at all"),
            make_post("title_only", NOW_TS - 2, "Cast iron skillet"),
            make_post("body_only", NOW_TS - 3, "Kitchen", "my skillet"),
            make_post("phrase", NOW_TS - 4, "Iron cast pan", "a wok"),
        ],
    )
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get("/api/posts/search", params={"subreddit": SUB, "query": query})
    assert {p["id"] for p in response.json()["data"]} == expected


@pytest.mark.parametrize(
    "after",
    [str(NOW_TS - 100), str((NOW_TS - 100) * 1000), "2024-05-31T23:58:20Z", "100s"],
)
def test_server_accepts_every_documented_date_form(arctic: Harness, after: str) -> None:
    arctic.server.add_posts(
        SUB, [make_post("new", NOW_TS - 50, "x"), make_post("old", NOW_TS - 150, "x")]
    )
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get("/api/posts/search", params={"subreddit": SUB, "after": after})
    assert [p["id"] for p in response.json()["data"]] == ["new"]


def test_server_fields_trim_the_answer_and_requests_are_recorded(arctic: Harness) -> None:
    arctic.server.add_posts(SUB, [make_post("a1", NOW_TS - 5, "x")])
    with httpx.Client(base_url=arctic.server.base_url) as client:
        response = client.get(
            "/api/posts/search", params={"subreddit": f"r/{SUB.lower()}", "fields": "id,title"}
        )
    assert response.json() == {"data": [{"id": "a1", "title": "x"}]}
    assert arctic.server.requests[-1].params["fields"] == "id,title"
