"""RedditApiSource against a real local server speaking Reddit's protocol."""

from __future__ import annotations

import io
import threading

import httpx
import pytest
import structlog

from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    AuthError,
    ConfigError,
    ResponseError,
    RetryBudgetExceededError,
    SubredditUnavailableError,
    TransportError,
)
from crowdsift.core.log import configure_logging
from crowdsift.core.source import RedditSource
from crowdsift.sources.reddit.pagination import paginate_search
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from tests.support.reddit_listings import listing

SEARCH = "/r/ducks/search"


def duck_posts(count: int) -> list[dict]:
    return [
        {"id": f"d{i:02d}", "title": f"Duck care question {i}", "selftext": "feeding ducklings"}
        for i in range(count)
    ]


def searches(server) -> list:
    return [r for r in server.requests if r.path.endswith("/search")]


def test_is_a_reddit_source(reddit_api_source):
    assert isinstance(reddit_api_source, RedditSource)
    assert reddit_api_source.name == "reddit-api"


def test_missing_credentials_say_what_to_do():
    with pytest.raises(ConfigError) as info:
        RedditApiSource.from_settings(Settings(reddit_client_id=None, reddit_client_secret=None))
    message = str(info.value)
    assert "REDDIT_CLIENT_ID" in message and "REDDIT_CLIENT_SECRET" in message
    assert "--source archive" in message and "--source arctic-shift" in message


def test_search_sends_reddit_parameters(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(3))
    page = reddit_api_source.search_subreddit(
        "ducks", "duck care", sort="new", time_filter="year", limit=500
    )
    assert [p["id"] for p in page.posts] == ["d00", "d01", "d02"]
    assert page.after is None
    (request,) = searches(reddit_api_server)
    assert request.params == {
        "q": "duck care",
        "restrict_sr": "1",
        "include_over_18": "false",
        "sort": "new",
        "t": "year",
        "limit": "100",
        "raw_json": "1",
    }
    assert request.bearer
    assert reddit_api_source.stats.pages == 1


def test_limit_is_clamped_up_to_one(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(3))
    page = reddit_api_source.search_subreddit("ducks", "duck", limit=0)
    assert len(page.posts) == 1
    assert searches(reddit_api_server)[0].params["limit"] == "1"


def test_pages_linked_by_after_until_null(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(23))
    reddit_api_server.add_posts("ducks", [{"id": "x1", "title": "geese", "selftext": "honk"}])
    pages = paginate_search(reddit_api_source, "ducks", "duck", page_size=10, cap=100)
    ids = [p["id"] for p in pages]
    assert ids == [f"d{i:02d}" for i in range(23)]
    afters = [r.params.get("after") for r in searches(reddit_api_server)]
    assert afters == [None, "t3_d09", "t3_d19"]
    assert reddit_api_source.stats.pages == 3


def test_pagination_stops_on_a_repeated_cursor(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(30))
    looping = listing([{"kind": "t3", "data": {"id": "zz", "title": "duck again"}}], after="t3_d09")
    reddit_api_server.add_fault(SEARCH, "status", times=5, code=200, body=looping)
    ids = [p["id"] for p in paginate_search(reddit_api_source, "ducks", "duck", page_size=10)]
    # Page 1 hands out cursor t3_d09; page 2 (asked after t3_d09) hands it out again: stop.
    assert ids == ["zz", "zz"]
    assert [r.params.get("after") for r in searches(reddit_api_server)] == [None, "t3_d09"]


def test_search_matches_every_query_token(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts(
        "ducks",
        [
            {"id": "a1", "title": "Feeding DUCKS", "selftext": "peas are good"},
            {"id": "a2", "title": "Feeding geese", "selftext": "bread is bad"},
            {"id": "a3", "title": "ducks", "selftext": "nothing else"},
        ],
    )
    page = reddit_api_source.search_subreddit("ducks", "ducks feeding")
    assert [p["id"] for p in page.posts] == ["a1"]


@pytest.mark.parametrize(
    ("status", "reason"), [(403, "private"), (403, "quarantined"), (404, "banned")]
)
def test_unavailable_subreddits(reddit_api_source, reddit_api_server, status, reason):
    reddit_api_server.mark_unavailable("hidden", status=status, reason=reason)
    with pytest.raises(SubredditUnavailableError) as info:
        reddit_api_source.search_subreddit("hidden", "duck")
    assert info.value.subreddit == "hidden"
    assert info.value.reason == reason
    assert info.value.status == status


def test_missing_subreddit_redirect_is_unavailable(reddit_api_source, reddit_api_server):
    with pytest.raises(SubredditUnavailableError) as info:
        reddit_api_source.search_subreddit("nosuchsubreddit", "duck")
    assert info.value.status == 302
    assert "does not exist" in info.value.reason
    assert len(searches(reddit_api_server)) == 1  # the redirect was not followed


def test_forbidden_without_a_reason_body(reddit_api_source, reddit_api_server):
    reddit_api_server.add_fault(SEARCH, "status", code=403, body="<html>nope</html>")
    with pytest.raises(SubredditUnavailableError) as info:
        reddit_api_source.search_subreddit("ducks", "duck")
    assert info.value.reason == "forbidden"


def test_a_body_that_is_not_a_listing(reddit_api_source, reddit_api_server):
    reddit_api_server.add_fault(SEARCH, "status", code=200, body={"kind": "t3", "data": {}})
    with pytest.raises(ResponseError) as info:
        reddit_api_source.search_subreddit("ducks", "duck")
    assert reddit_api_server.base_url + SEARCH in str(info.value)


def add_thread(server) -> None:
    server.add_posts("ducks", [{"id": "p1", "title": "Duck thread", "selftext": "duck"}])
    server.add_comments(
        "p1",
        [
            {"id": "c1", "body": "first", "score": 5, "parent_id": "t3_p1"},
            {"id": "c2", "body": "reply to first", "score": 50, "parent_id": "t1_c1"},
            {"id": "c3", "body": "second", "score": 9, "parent_id": "t3_p1"},
            {"id": "c4", "body": "third", "score": 1, "parent_id": "t3_p1"},
            {"id": "cx", "body": "stray", "score": 99, "parent_id": "t3_p1", "link_id": "t3_zz"},
        ],
    )


def test_comments_are_this_threads_top_level_only(reddit_api_source, reddit_api_server):
    add_thread(reddit_api_server)
    comments = reddit_api_source.fetch_post_comments("p1")
    assert [c["id"] for c in comments] == ["c3", "c1", "c4"]  # sort=top; cx is another thread's
    assert all(c["link_id"] == "t3_p1" for c in comments)
    (request,) = [r for r in reddit_api_server.requests if r.path == "/comments/p1"]
    assert request.params == {"limit": "100", "depth": "1", "sort": "top", "raw_json": "1"}


def test_more_stubs_are_skipped(reddit_api_source, reddit_api_server):
    add_thread(reddit_api_server)
    params = {"limit": 2, "depth": 1, "sort": "top"}
    raw = reddit_api_source.transport.get_json("/comments/p1", params)[1]["data"]["children"]
    assert [c["kind"] for c in raw] == ["t1", "t1", "more"]  # cx, c3, then more: [c1, c4]
    comments = reddit_api_source.fetch_post_comments("t3_p1", limit=2)
    assert [c["id"] for c in comments] == ["c3"]  # cx belongs to another thread


def test_comments_of_a_missing_post(reddit_api_source):
    with pytest.raises(TransportError) as info:
        reddit_api_source.fetch_post_comments("nope00")
    assert info.value.status == 404


def test_comment_body_of_the_wrong_shape(reddit_api_source, reddit_api_server):
    reddit_api_server.add_fault("/comments/*", "status", code=200, body=listing([]))
    with pytest.raises(ResponseError, match="/comments/p9"):
        reddit_api_source.fetch_post_comments("p9")


def test_persistent_401_is_an_auth_error_naming_settings(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(1))
    reddit_api_server.add_fault(SEARCH, "expire_token", times=2)
    with pytest.raises(AuthError) as info:
        reddit_api_source.search_subreddit("ducks", "duck")
    assert "REDDIT_CLIENT_ID" in str(info.value)


def test_retry_after_is_honoured(reddit_api_source, reddit_api_server, reddit_api_sleeps):
    reddit_api_server.add_posts("ducks", duck_posts(2))
    reddit_api_server.add_fault(SEARCH, "rate_limited", retry_after=7)
    page = reddit_api_source.search_subreddit("ducks", "duck")
    assert len(page.posts) == 2
    assert 7.0 in reddit_api_sleeps.calls
    assert reddit_api_source.stats.retries == 1


def test_retry_budget_is_shared_by_the_whole_source(
    reddit_api_settings, reddit_api_server, reddit_api_sleeps
):
    settings = reddit_api_settings.model_copy(update={"retry_budget": 2, "max_retries": 4})
    source = RedditApiSource.from_settings(settings, sleep=reddit_api_sleeps.sleep)
    try:
        reddit_api_server.add_posts("ducks", duck_posts(2))
        reddit_api_server.add_fault(SEARCH, "status", times=10, code=500)
        with pytest.raises(RetryBudgetExceededError):
            source.search_subreddit("ducks", "duck")
        assert source.stats.retries == 2
    finally:
        source.close()


def test_close_leaves_an_injected_client_open(reddit_api_settings, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(1))
    with httpx.Client(base_url=reddit_api_server.base_url) as client:
        source = RedditApiSource.from_settings(reddit_api_settings, http_client=client)
        source.close()
        assert not client.is_closed


def test_close_closes_its_own_client(reddit_api_source):
    client = reddit_api_source._owned_client
    reddit_api_source.close()
    assert client is not None and client.is_closed


def test_thread_safe_under_concurrent_calls(reddit_api_source, reddit_api_server):
    reddit_api_server.add_posts("ducks", duck_posts(5))
    add_thread(reddit_api_server)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            if n % 2:
                assert len(reddit_api_source.fetch_post_comments("p1")) == 3
            else:
                assert len(reddit_api_source.search_subreddit("ducks", "duck").posts) == 6
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert reddit_api_source.stats.requests == 12
    assert reddit_api_source.stats.pages == 6
    assert len([r for r in reddit_api_server.requests if r.path.endswith("access_token")]) == 1


def test_secret_and_token_never_appear_in_the_log(reddit_api_source, reddit_api_server):
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    try:
        reddit_api_server.add_posts("ducks", duck_posts(2))
        reddit_api_server.add_fault(SEARCH, "expire_token")
        reddit_api_source.search_subreddit("ducks", "duck")
    finally:
        structlog.reset_defaults()
    output = stream.getvalue()
    token = reddit_api_source.transport.client.auth._token
    assert "http_request" in output and "oauth_token_acquired" in output
    assert token and token not in output
    assert "source-secret-value-42" not in output
