"""API listings → Posts, Comments and evidence items, over real HTTP on 127.0.0.1.

One local server answers each path with whatever body the example holds, and the real
sources (reddit-api, arctic-shift, YouTube, Amazon) and the fetcher read it. Properties:
any body gives a result or a CrowdsiftError; a listing mixing valid and broken records keeps
every valid one and accounts for every broken one; a valid post keeps its fields.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    HUGE_INTS,
    IDS,
    INT64,
    SCALARS,
    dumps,
    examples,
    hostile_json_text,
    json_values,
    mutated,
)

from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.models import SearchPlan
from crowdsift.core.source import RedditSource
from crowdsift.core.text import clean_text
from crowdsift.http.transport import HttpTransport
from crowdsift.pipeline.fetch.fetcher import FetchOutcome, RedditFetcher, SearchOptions
from crowdsift.sources.amazon import AmazonSource
from crowdsift.sources.amazon_auth import CreatorsOAuth
from crowdsift.sources.amazon_items import parse_search_result
from crowdsift.sources.models import EvidenceItem
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.sources.youtube import YouTubeSource
from crowdsift.sources.youtube_api import YouTubeTransport
from crowdsift.testing.factories import raw_comment, raw_post
from harness import AMAZON_TOKEN_BODY, AMAZON_TOKEN_PATH, FIXED_NOW
from tests.support.amazon_server import product
from tests.support.local_http import LocalHTTPServer, Reply
from tests.support.reddit_listings import listing

PLAN = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"])
OPTIONS = SearchOptions(max_posts_per_query=100, max_comments_per_post=100, concurrency=1)
EMPTY_THREAD = json.dumps([listing([]), listing([])]).encode()


class Bodies:
    """A responder answering each request with the body of the first path fragment it holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bodies: dict[str, bytes] = {}

    def set(self, bodies: dict[str, bytes]) -> None:
        with self._lock:
            self._bodies = dict(bodies)

    def respond(self, _method: str, target: str, _headers: dict[str, str], _body: bytes) -> Reply:
        path = target.split("?", 1)[0]
        with self._lock:
            for fragment, content in self._bodies.items():
                if fragment in path:
                    return Reply(200, content, {"Content-Type": "application/json"})
        return Reply(404, b"{}")


@dataclass
class Server:
    """The local server, what it answers, and one client for every example (an httpx client
    costs ~20 ms to build, its SSL context mostly)."""

    http: LocalHTTPServer
    bodies: Bodies
    client: httpx.Client


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    bodies = Bodies()
    http = LocalHTTPServer(bodies, name="property-listings")
    http.start()
    try:
        with httpx.Client(base_url=http.base_url) as client:
            yield Server(http, bodies, client)
    finally:
        http.stop()


def _no_sleep(_seconds: float) -> None:
    """No retry may wait: one answer per request is the whole example."""


def _transport(client: httpx.Client, source: str) -> HttpTransport:
    return HttpTransport(client, source=source, max_retries=0, sleep=_no_sleep)


SOURCES: dict[str, Callable[[httpx.Client], RedditSource]] = {
    "reddit-api": lambda client: RedditApiSource(_transport(client, "reddit-api")),
    "arctic-shift": lambda client: ArcticShiftSource(
        _transport(client, "arctic-shift"), clock=lambda: FIXED_NOW
    ),
}
SEARCH_PATHS = {"reddit-api": "/search", "arctic-shift": "/api/posts/"}
COMMENT_PATHS = {"reddit-api": "/comments/", "arctic-shift": "/api/comments/"}


def _fetch(server: Server, name: str, search: bytes, comments: bytes) -> FetchOutcome | None:
    """The fetcher over one source against these bodies; None when it raised a typed error."""
    server.bodies.set({SEARCH_PATHS[name]: search, COMMENT_PATHS[name]: comments})
    source = SOURCES[name](server.client)
    fetcher = RedditFetcher(source, options=OPTIONS, clock=lambda: FIXED_NOW)
    try:
        outcome = fetcher.fetch(PLAN)
    except CrowdsiftError:
        return None
    report = outcome.report
    assert report.posts_seen == report.posts_accepted + sum(report.post_rejections.values())
    assert report.comments_seen == report.comments_accepted + sum(
        report.comment_rejections.values()
    )
    assert len(outcome.result.posts) == report.posts_accepted
    outcome.result.model_dump_json()  # `crowdsift fetch --json` prints it: no lone surrogate
    return outcome


# --- (a) any body -----------------------------------------------------------------------------


def _valid_search(name: str) -> Any:
    posts = [raw_post("abc123"), raw_post("def456", score="12")]
    if name == "reddit-api":
        return listing({"kind": "t3", "data": p} for p in posts)
    return {"data": posts}


BODIES = st.one_of(
    st.binary(max_size=60),
    hostile_json_text(["kind", "data", "children", "after", "id", "replies", "error"]).map(
        str.encode
    ),
)


@st.composite
def _mutated_body(draw: st.DrawFn, name: str) -> bytes:
    """A valid answer with one of its posts mutated, or the envelope itself mutated."""
    body = _valid_search(name)
    if draw(st.booleans()):
        return dumps(draw(mutated(body))).encode()
    posts = [raw_post("abc123"), draw(mutated(raw_post("def456")))]
    if name == "reddit-api":
        return dumps(listing({"kind": "t3", "data": p} for p in posts)).encode()
    return dumps({"data": posts}).encode()


@examples(40)
@given(name=st.sampled_from(sorted(SOURCES)), data=st.data())
def test_any_search_answer_gives_a_fetch_or_a_typed_error(
    server: Server, name: str, data: st.DataObject
) -> None:
    search = data.draw(st.one_of(BODIES, _mutated_body(name)))
    _fetch(server, name, search, EMPTY_THREAD)


@st.composite
def _mutated_comments(draw: st.DrawFn, name: str) -> bytes:
    """A comments answer whose top-level comments of abc123 are mutated."""
    comments = [
        draw(mutated(raw_comment(f"c{n}", "abc123"))) for n in range(draw(st.integers(1, 3)))
    ]
    if name == "reddit-api":
        things = [{"kind": "t1", "data": c} for c in comments]
        return dumps([listing([]), listing(things)]).encode()
    return dumps({"data": comments}).encode()


@examples(60)
@given(name=st.sampled_from(sorted(SOURCES)), data=st.data())
def test_any_comments_answer_gives_a_fetch_or_a_typed_error(
    server: Server, name: str, data: st.DataObject
) -> None:
    comments = data.draw(st.one_of(BODIES, _mutated_comments(name)))
    _fetch(server, name, json.dumps(_valid_search(name)).encode(), comments)


@examples(40)
@given(name=st.sampled_from(sorted(SOURCES)), comments=BODIES)
def test_any_comment_tree_answer_gives_a_tree_or_a_typed_error(
    server: Server, name: str, comments: bytes
) -> None:
    server.bodies.set({COMMENT_PATHS[name]: comments})
    try:
        tree = SOURCES[name](server.client).fetch_comment_tree("abc123", limit=50, depth=5)
    except CrowdsiftError:
        return
    assert all(isinstance(c["depth"], int) and 0 <= c["depth"] < 5 for c in tree)


def _youtube(server: Server, bodies: dict[str, bytes]) -> YouTubeSource:
    server.bodies.set(bodies)
    transport = YouTubeTransport(server.client, source="youtube", max_retries=0, sleep=_no_sleep)
    return YouTubeSource(transport, api_key="test-key", now=lambda: FIXED_NOW)


@examples(40)
@given(search=BODIES, videos=BODIES, threads=BODIES)
def test_any_youtube_answer_gives_items_or_a_typed_error(
    server: Server, search: bytes, videos: bytes, threads: bytes
) -> None:
    bodies = {"/search": search, "/videos": videos, "/commentThreads": threads}
    with _youtube(server, bodies) as source:
        try:
            items = source.search("desk", 5)
        except CrowdsiftError:
            return
    assert all(isinstance(item, EvidenceItem) and item.kind == "youtube" for item in items)


def _amazon(client: httpx.Client, base_url: str) -> AmazonSource:
    auth = CreatorsOAuth(
        auth_url=base_url + AMAZON_TOKEN_PATH,
        credential_id="test-id",
        credential_secret="test-secret",
        version="3.1",
        clock=lambda: 0.0,
    )
    return AmazonSource(
        client, auth, base_url=base_url, partner_tag="test-20", max_retries=0, sleep=_no_sleep
    )


@examples(40)
@given(search=BODIES, token=st.one_of(st.just(AMAZON_TOKEN_BODY), BODIES))
def test_any_amazon_answer_gives_items_or_a_typed_error(
    server: Server, search: bytes, token: bytes
) -> None:
    server.bodies.set({AMAZON_TOKEN_PATH: token, "/catalog/": search})
    try:
        items = _amazon(server.client, server.http.base_url).search("desk", 5)
    except CrowdsiftError:
        return
    assert all(item.kind == "amazon" for item in items)


# --- (b) valid records are kept, broken ones counted ------------------------------------------

BROKEN_CHILDREN = st.one_of(
    json_values(max_leaves=3).filter(lambda v: not isinstance(v, dict)),
    st.builds(
        lambda kind, data: {"kind": kind, "data": data},
        st.sampled_from(["t1", "more", "Listing", "t5", None]),
        json_values(max_leaves=3),
    ),
    st.builds(lambda data: {"kind": "t3", "data": data}, json_values(max_leaves=2)).filter(
        lambda child: not isinstance(child["data"], dict)
    ),
)
"""Children the reddit-api source drops: not t3 things with a data object."""

UNUSABLE_POSTS = st.one_of(
    st.builds(
        lambda p: {k: v for k, v in p.items() if k not in ("id", "name")}, st.just(raw_post())
    ),
    st.builds(
        lambda bad_id, score: raw_post(bad_id, score=score, permalink=None),
        st.sampled_from(["a/b", "ABC", "x y", "ü1", "t3_"]),
        st.one_of(INT64, st.just(10**30)),
    ),
    st.builds(lambda: raw_post("zzz1", subreddit="", permalink=None)),
)
"""t3 data the source passes on but no Post can be built from: rejected and counted."""


@st.composite
def _mixed_listing(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any], list[Any]]:
    ids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    valid = [
        raw_post(i, score=draw(st.one_of(INT64, st.just(10**30))), num_comments=draw(INT64))
        for i in ids
    ]
    dropped = draw(st.lists(BROKEN_CHILDREN, max_size=4))
    unusable = draw(st.lists(UNUSABLE_POSTS, max_size=4))
    return valid, dropped, unusable


@examples(40)
@given(case=_mixed_listing(), order=st.randoms(use_true_random=False))
def test_a_listing_keeps_every_valid_post_and_counts_every_unusable_one(
    server: Server, case: tuple[Any, Any, Any], order: Any
) -> None:
    valid, dropped, unusable = case
    children = [{"kind": "t3", "data": p} for p in valid + unusable] + dropped
    order.shuffle(children)
    outcome = _fetch(server, "reddit-api", dumps(listing(children)).encode(), EMPTY_THREAD)
    assert outcome is not None
    report = outcome.report
    expected = [
        c["data"]["id"] for c in children if c in [{"kind": "t3", "data": p} for p in valid]
    ]
    assert [p.id for p in outcome.result.posts] == expected
    assert report.posts_seen == len(valid) + len(unusable)
    assert sum(report.post_rejections.values()) == len(unusable)
    for post in outcome.result.posts:
        assert -(2**63) <= post.post_karma < 2**63 and 0 <= post.num_comments < 2**63


@examples(30)
@given(case=_mixed_listing())
def test_an_arctic_shift_page_keeps_every_valid_post_and_counts_every_unusable_one(
    server: Server, case: tuple[Any, Any, Any]
) -> None:
    valid, _dropped, unusable = case
    items = valid + unusable
    outcome = _fetch(server, "arctic-shift", dumps({"data": items}).encode(), b'{"data": []}')
    assert outcome is not None
    valid_ids = [p["id"] for p in valid]
    assert [p.id for p in outcome.result.posts] == valid_ids
    assert outcome.report.posts_seen == len(items) - sum(
        str(p.get("subreddit", "")).lower() != "gadgets" for p in unusable
    )


YOUTUBE_BROKEN = st.one_of(
    json_values(max_leaves=3),
    st.just({"id": {"kind": "youtube#channel"}, "snippet": {"title": "t"}}),
    st.just({"id": {"videoId": "bad id!"}, "snippet": {"title": "t"}}),
    st.just({"id": {"videoId": "abcdefghijk"}, "snippet": {"title": "  "}}),
)


def _video(video_id: str) -> dict[str, Any]:
    return {"id": {"videoId": video_id}, "snippet": {"title": f"Video {video_id}"}}


@examples(30)
@given(
    ids=st.lists(st.from_regex(r"[A-Za-z0-9_-]{11}", fullmatch=True), max_size=5, unique=True),
    broken=st.lists(YOUTUBE_BROKEN, max_size=5),
    counts=st.lists(st.one_of(st.integers(-5, 2**70).map(str), HUGE_INTS, SCALARS), max_size=5),
    order=st.randoms(use_true_random=False),
)
def test_youtube_keeps_every_valid_video_and_counts_every_broken_item(
    server: Server,
    ids: list[str],
    broken: list[Any],
    counts: list[Any],
    order: Any,
) -> None:
    items = [_video(i) for i in ids] + broken
    order.shuffle(items)
    expected = [item["id"]["videoId"] for item in items if item in [_video(i) for i in ids]]
    details = [
        {"id": i, "statistics": {"viewCount": count}} for i, count in zip(ids, counts, strict=False)
    ]
    bodies = {
        "/search": dumps({"items": items}).encode(),
        "/videos": dumps({"items": details}).encode(),
        "/commentThreads": b'{"items": []}',
    }
    with _youtube(server, bodies) as source:
        found = source.search("desk", 50, comments_per_video=0)
        skipped = source.skipped_items
    assert [item.id for item in found] == expected
    assert skipped == len(items) - len(ids)
    for item in found:  # a count is a finite, non-negative float, or left out
        assert all(0 <= value < 2**63 for value in item.metrics.values())


AMAZON_BROKEN = st.one_of(
    json_values(max_leaves=3),
    st.just({"asin": "short"}),
    st.just({"asin": "B0ABCDEFGH", "itemInfo": {"title": {"displayValue": " "}}}),
    st.just({**product("B0ZZZZZZZZ", "t"), "customerReviews": {"count": 10**400}}),
    st.just({**product("B0YYYYYYYY", "t"), "customerReviews": {"starRating": {"value": "5"}}}),
)


@examples(60)
@given(
    asins=st.lists(st.from_regex(r"B0[A-Z0-9]{8}", fullmatch=True), max_size=5, unique=True),
    broken=st.lists(AMAZON_BROKEN, max_size=5),
    reviews=st.one_of(st.none(), st.integers(0, 2**63 - 1)),
)
def test_amazon_keeps_every_valid_product_and_counts_every_broken_one(
    asins: list[str], broken: list[Any], reviews: int | None
) -> None:
    valid = [product(a, f"Product {a}", reviews=reviews, rating=4.5) for a in asins]
    body = {"searchResult": {"items": valid + broken}}
    items, skipped = parse_search_result(body, "www.amazon.com", url="test")
    assert [item.id for item in items] == asins
    assert skipped == len(broken)
    expected_reviews = None if reviews is None else float(reviews)
    assert all(item.metrics.get("reviews") == expected_reviews for item in items)


# --- (c) round trip ---------------------------------------------------------------------------


@examples(30)
@given(
    post_id=IDS,
    title=st.text(max_size=40).map(lambda t: f"plaud {t}"),
    score=INT64,
    created=st.integers(0, 2**33),
)
def test_a_valid_post_keeps_its_fields_through_listing_and_fetch(
    server: Server, post_id: str, title: str, score: int, created: int
) -> None:
    raw = raw_post(post_id, title=title, score=score, created_utc=created, subreddit="Gadgets")
    outcome = _fetch(
        server, "reddit-api", dumps(listing([{"kind": "t3", "data": raw}])).encode(), EMPTY_THREAD
    )
    assert outcome is not None
    (post,) = outcome.result.posts
    assert post.id == post_id
    assert post.title == clean_text(title)
    assert post.selftext == clean_text(raw["selftext"])
    assert post.post_karma == score and post.num_comments == raw["num_comments"]
    assert post.subreddit == "gadgets"
    assert post.created_at == datetime.fromtimestamp(created, UTC)
    assert post.url.startswith(f"https://www.reddit.com/r/Gadgets/comments/{post_id}/")


def test_records_no_model_takes_are_rejected_not_raised(server: Server) -> None:
    """Found by these properties: a lone surrogate in a comment id or a subreddit, a 64-bit
    overflow in a score, or an id that links elsewhere failed the whole fetch."""
    posts = [
        raw_post("abc123", score=10**30),
        raw_post("bad1", subreddit="gad\ud800gets"),
        raw_post("a/b", permalink=None),
        raw_post("zzz9", author="\udc00"),
    ]
    comments = [raw_comment("\udc00", "abc123"), raw_comment("good1", "abc123", score=-(10**30))]
    search = dumps(listing({"kind": "t3", "data": p} for p in posts)).encode()
    thread = dumps([listing([]), listing({"kind": "t1", "data": c} for c in comments)]).encode()
    outcome = _fetch(server, "reddit-api", search, thread)
    assert outcome is not None
    by_id = {post.id: post for post in outcome.result.posts}
    assert sorted(by_id) == ["abc123", "zzz9"]
    assert by_id["abc123"].post_karma == 2**63 - 1
    assert [(c.comment_id, c.comment_karma) for c in by_id["abc123"].comments] == [
        ("good1", -(2**63))
    ]
    assert sum(outcome.report.post_rejections.values()) == 2


@examples(30)
@given(expires_in=st.one_of(SCALARS, HUGE_INTS, st.integers(10**300, 10**400)))
def test_any_token_lifetime_gives_a_token_or_a_typed_error(server: Server, expires_in: Any) -> None:
    """``expires_in`` of any type or size (found: 10**400 raised OverflowError)."""
    token = dumps({"access_token": "t0k", "expires_in": expires_in}).encode()
    body = dumps({"searchResult": {"items": [product("B0ABCDEFGH", "Desk")]}}).encode()
    server.bodies.set({AMAZON_TOKEN_PATH: token, "/catalog/": body})
    items = _amazon(server.client, server.http.base_url).search("desk", 5)
    assert [item.id for item in items] == ["B0ABCDEFGH"]


@examples(30)
@given(
    dates=st.lists(st.one_of(SCALARS, st.just("inf"), st.just(10**400)), min_size=25, max_size=25)
)
def test_a_full_arctic_shift_page_with_any_dates_pages_or_fails_typed(
    server: Server, dates: list[Any]
) -> None:
    """A full page is where the date cursor is built (found: "inf" raised OverflowError)."""
    posts = [raw_post(f"p{n}", created_utc=date) for n, date in enumerate(dates)]
    outcome = _fetch(server, "arctic-shift", dumps({"data": posts}).encode(), b'{"data": []}')
    assert outcome is not None
    assert {p.id for p in outcome.result.posts} == {p["id"] for p in posts}
