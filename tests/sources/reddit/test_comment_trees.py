"""fetch_comment_tree from every source, against real local servers and a real archive file.

Also: Reddit's multireddit search (``/r/a+b/search``) on the fake server, through the source.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from crowdsift.core.errors import (
    ResponseError,
    SourceError,
    SubredditUnavailableError,
    TransportError,
)
from crowdsift.core.source import RedditSource
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.pagination import paginate_search
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.sources.reddit.threads import comment_tree
from crowdsift.testing.memory_source import MemorySource
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.reddit_listings import listing
from tests.support.reddit_server import RedditProtocolServer

BASE = 1_700_000_000
SUB = "homelab"
CHAIN = 8  # a reply chain 8 levels under the first top-level comment


def comment(comment_id: str, parent: str, score: int, created: int, post: str = "p1") -> dict:
    return {
        "id": comment_id,
        "name": f"t1_{comment_id}",
        "link_id": f"t3_{post}",
        "parent_id": parent,
        "subreddit": SUB,
        "author": f"user_{comment_id}",
        "body": f"comment {comment_id}",
        "score": score,
        "created_utc": created,
        "permalink": f"/r/{SUB}/comments/{post}/x/{comment_id}/",
    }


def big_thread() -> list[dict[str, Any]]:
    """128 comments of p1, nested 9 levels deep at most, sibling scores all distinct.

    The chain hangs under t00, the best top-level comment, so a limit cannot hide it.

    Created times grow from parents to children: top-level first, then the chain, then the
    replies, so an oldest-first sample always holds a reply's parent.
    """
    tops = [comment(f"t{i:02d}", "t3_p1", (i * 37) % 61 or 100, BASE + i) for i in range(60)]
    chain = [
        comment(f"ch{k}", "t1_t00" if k == 1 else f"t1_ch{k - 1}", 1, BASE + 100 + k)
        for k in range(1, CHAIN + 1)
    ]
    replies = [
        comment(f"r{i:02d}_{j}", f"t1_t{i:02d}", 10 - j, BASE + 200 + i * 3 + j)
        for i in range(20)
        for j in range(3)
    ]
    return tops + chain + replies


def alien() -> dict[str, Any]:
    """A comment of another thread that claims a parent in p1 and outscores everything."""
    return comment("alien", "t3_p1", 1000, BASE + 1, post="zz")


def assert_is_a_tree(got: list[dict[str, Any]], *, limit: int, depth: int) -> None:
    """Parents come first, depth = parent's + 1, cuts obeyed, only p1's comments."""
    assert len(got) <= limit
    placed: dict[str, int] = {}
    for item in got:
        assert item["link_id"] == "t3_p1"
        assert isinstance(item["depth"], int) and 0 <= item["depth"] < depth
        if item["parent_id"] == "t3_p1":
            assert item["depth"] == 0
        else:
            assert item["parent_id"].startswith("t1_")
            assert item["depth"] == placed[item["parent_id"][3:]] + 1
        assert item["id"] not in placed
        placed[item["id"]] = item["depth"]


def shape(items: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    return [(x["id"], x["depth"], x["parent_id"]) for x in items]


# --- reddit-api -----------------------------------------------------------------------------


def tree_requests(server: RedditProtocolServer) -> list[dict[str, str]]:
    return [r.params for r in server.requests if r.path.startswith("/comments/")]


def test_reddit_api_tree_obeys_depth_and_limit(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    flat = big_thread()
    reddit_api_server.add_posts(SUB, [{"id": "p1", "title": "Rack advice", "selftext": "x"}])
    reddit_api_server.add_comments("p1", [*flat, alien()])

    got = reddit_api_source.fetch_comment_tree("p1")

    assert tree_requests(reddit_api_server) == [
        {"depth": "5", "limit": "100", "sort": "top", "raw_json": "1"}
    ]
    assert_is_a_tree(got, limit=100, depth=5)
    # The server spent one of its 100 on the alien (top score), then "more" stubs: 99 left.
    assert len(got) == 99
    assert max(x["depth"] for x in got) == 4
    assert "ch4" in {x["id"] for x in got} and "ch5" not in {x["id"] for x in got}
    assert all("replies" not in x for x in got)
    # Distinct sibling scores: Reddit's top order is the flat tree's top order.
    assert shape(got) == shape(comment_tree(flat, "p1", limit=99, depth=5))


def test_reddit_api_tree_caps_limit_and_accepts_a_fullname(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    reddit_api_server.add_comments("p1", big_thread())

    got = reddit_api_source.fetch_comment_tree("t3_p1", limit=700, depth=3)

    (params,) = tree_requests(reddit_api_server)
    assert params["limit"] == "500" and params["depth"] == "3"
    assert_is_a_tree(got, limit=700, depth=3)
    assert len(got) == 60 + 60 + 2  # every comment within 3 levels: tops, replies, ch1, ch2
    assert reddit_api_source.fetch_comment_tree("p1", limit=0) == []
    assert reddit_api_source.fetch_comment_tree("p1", depth=0) == []
    assert len(tree_requests(reddit_api_server)) == 1  # nothing asked for, nothing sent


def test_reddit_api_tree_keeps_reddits_order(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    def thing(data: dict[str, Any], replies: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "t1", "data": {**data, "replies": listing(replies) if replies else ""}}

    low = comment("low", "t3_p1", 1, BASE)
    high = comment("high", "t3_p1", 90, BASE)
    reply = comment("rep", "t1_low", 5, BASE)
    more = {"kind": "more", "data": {"id": "m", "parent_id": "t3_p1", "children": ["q1"]}}
    body = [
        listing([{"kind": "t3", "data": {"id": "p1"}}]),
        listing([thing(low, [thing(reply, [])]), thing(high, []), more]),
    ]
    reddit_api_server.add_fault("/comments/*", "status", code=200, body=body)

    got = reddit_api_source.fetch_comment_tree("p1")

    assert shape(got) == [("low", 0, "t3_p1"), ("rep", 1, "t1_low"), ("high", 0, "t3_p1")]


def test_reddit_api_tree_raises_like_post_comments(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    with pytest.raises(TransportError) as info:
        reddit_api_source.fetch_comment_tree("nope00")
    assert info.value.status == 404
    reddit_api_server.add_fault("/comments/*", "status", code=200, body=listing([]))
    with pytest.raises(ResponseError, match="/comments/p9"):
        reddit_api_source.fetch_comment_tree("p9")


# --- arctic-shift ---------------------------------------------------------------------------


@pytest.fixture
def arctic() -> Iterator[tuple[ArcticShiftServer, ArcticShiftSource]]:
    now = datetime(2024, 6, 1, tzinfo=UTC)
    with (
        ArcticShiftServer(clock=lambda: now) as server,
        httpx.Client(base_url=server.base_url, timeout=5.0) as client,
    ):
        transport = HttpTransport(client, source="arctic-shift", sleep=lambda _: None)
        yield server, ArcticShiftSource(transport, clock=lambda: now)


def late_best() -> dict[str, Any]:
    """A top-level comment posted after all of ``big_thread`` that outscores all of it: the
    oldest 100 comments never hold it, the best ones always do."""
    return comment("late", "t3_p1", 5000, BASE + 5000)


def tree_paths(server: ArcticShiftServer) -> list[str]:
    return [r.path for r in server.requests]


def test_arctic_shift_tree_reads_the_whole_thread_not_its_oldest_hundred(
    arctic: tuple[ArcticShiftServer, ArcticShiftSource],
) -> None:
    server, source = arctic
    flat = [*big_thread(), late_best()]
    server.add_comments("p1", [*flat, alien()])
    server.add_comments("p2", [comment("other", "t3_p2", 50, BASE, post="p2")])

    got = source.fetch_comment_tree("p1", limit=100, depth=5)

    params = [r.params for r in server.requests]
    assert params == [{"link_id": "t3_p1", "limit": "2000"}]
    assert tree_paths(server) == ["/api/comments/tree"]
    assert_is_a_tree(got, limit=100, depth=5)
    assert got[0]["id"] == "late"  # the best comment, although it is the newest
    assert shape(got) == shape(comment_tree(flat, "p1", limit=100, depth=5))
    ids = {x["id"] for x in got}
    assert {"ch1", "ch4"} <= ids  # replies of every level reach the tree
    assert not {"ch5", "alien", "other"} & ids


def test_arctic_shift_tree_expands_collapsed_more_stubs_by_id(
    arctic: tuple[ArcticShiftServer, ArcticShiftSource],
) -> None:
    server, _ = arctic
    flat = [*big_thread(), late_best()]
    server.add_comments("p1", flat)
    with httpx.Client(base_url=server.base_url, timeout=5.0) as client:
        transport = HttpTransport(client, source="arctic-shift", sleep=lambda _: None)
        source = ArcticShiftSource(transport, tree_limit=50)
        answer = client.get("/api/comments/tree", params={"link_id": "t3_p1", "limit": 50})
        stubs = [i for i in answer.json()["data"] if i["kind"] == "more"]
        assert stubs and "late" in stubs[-1]["data"]["children"]  # the server collapsed it

        got = source.fetch_comment_tree("p1", limit=100, depth=5)

    assert tree_paths(server)[1:] == ["/api/comments/tree", "/api/comments/ids"]
    assert got[0]["id"] == "late"
    assert shape(got) == shape(comment_tree(flat, "p1", limit=100, depth=5))
    assert source.stats.extra["tree_expanded"] == len(flat) - 50
    assert "tree_collapsed_left" not in source.stats.extra


def test_arctic_shift_tree_limit_and_top_order(
    arctic: tuple[ArcticShiftServer, ArcticShiftSource],
) -> None:
    server, source = arctic
    flat = big_thread()
    server.add_comments("p1", flat)

    got = source.fetch_comment_tree("t3_p1", limit=30, depth=2)

    assert_is_a_tree(got, limit=30, depth=2)
    assert len(got) == 30
    tops = [x for x in got if x["depth"] == 0]
    assert [x["score"] for x in tops] == sorted((x["score"] for x in tops), reverse=True)
    assert tops[0]["score"] == max(x["score"] for x in flat if x["parent_id"] == "t3_p1")
    assert [r.params["limit"] for r in server.requests] == ["2000"]


def test_arctic_shift_server_returns_every_level_without_parent_id(
    arctic: tuple[ArcticShiftServer, ArcticShiftSource],
) -> None:
    server, _ = arctic
    server.add_comments("p1", big_thread()[:70])
    with httpx.Client(base_url=server.base_url) as client:
        every = client.get("/api/comments/search", params={"link_id": "p1", "limit": 100})
        top = client.get(
            "/api/comments/search", params={"link_id": "p1", "parent_id": "", "limit": 100}
        )
    assert len(every.json()["data"]) == 70
    assert len(top.json()["data"]) == 60


def test_arctic_shift_tree_errors_surface(
    arctic: tuple[ArcticShiftServer, ArcticShiftSource],
) -> None:
    server, source = arctic
    server.add_fault("/api/comments/tree", "api_error", status=400, message="Bad link_id")
    with pytest.raises(ResponseError, match="Bad link_id"):
        source.fetch_comment_tree("p1")
    assert source.fetch_comment_tree("p1", limit=0) == []


# --- archive --------------------------------------------------------------------------------


@pytest.fixture
def archive_source(tmp_path: Path) -> Iterator[ArchiveSource]:
    post = {
        "id": "p1",
        "subreddit": SUB,
        "author": "op",
        "title": "Rack advice",
        "selftext": "which rack",
        "score": 10,
        "num_comments": 128,
        "created_utc": BASE - 10,
        "permalink": f"/r/{SUB}/comments/p1/rack_advice/",
        "over_18": False,
        "is_self": True,
    }
    records = [*big_thread(), alien(), comment("other", "t3_p2", 50, BASE, post="p2")]
    posts_file = tmp_path / "RS_test.ndjson"
    comments_file = tmp_path / "RC_test.ndjson"
    posts_file.write_text(json.dumps(post) + "\n")
    comments_file.write_text("".join(json.dumps(r) + "\n" for r in records))
    target = tmp_path / "archive.sqlite"
    report = import_files([posts_file, comments_file], target)
    assert report.ok and report.comments == len(records)
    source = ArchiveSource(target)
    yield source
    source.close()


def test_archive_tree_reads_the_whole_thread(archive_source: ArchiveSource) -> None:
    flat = big_thread()

    got = archive_source.fetch_comment_tree("p1")

    assert_is_a_tree(got, limit=100, depth=5)
    assert len(got) == 100  # 124 comments within depth 5 are stored; the limit cuts
    assert shape(got) == shape(comment_tree(flat, "p1", limit=100, depth=5))
    assert all(x["permalink"].startswith(f"/r/{SUB}/comments/p1/") for x in got)
    assert archive_source.stats.requests == 1


def test_archive_tree_depth_one_and_prefixed_id(archive_source: ArchiveSource) -> None:
    got = archive_source.fetch_comment_tree("t3_p1", limit=500, depth=1)
    assert len(got) == 60
    assert [x["score"] for x in got] == sorted((x["score"] for x in got), reverse=True)
    assert archive_source.fetch_comment_tree("p1", limit=0) == []
    assert archive_source.fetch_comment_tree("missing") == []


# --- memory source --------------------------------------------------------------------------


def test_memory_source_builds_the_tree_and_records_the_call() -> None:
    flat = big_thread()
    source = MemorySource(comments={"p1": [*flat, alien()]}, failing_comments={"p9": "boom"})
    assert isinstance(source, RedditSource)

    got = source.fetch_comment_tree("t3_p1", limit=50, depth=3)

    assert shape(got) == shape(comment_tree(flat, "p1", limit=50, depth=3))
    assert source.calls == [("tree", "t3_p1")]
    assert source.stats.requests == 1
    with pytest.raises(SourceError, match="boom"):
        source.fetch_comment_tree("p9")
    assert source.fetch_comment_tree("nothing") == []
    assert source.stats.requests == 3


# --- multireddit search on the fake Reddit server -------------------------------------------


def test_multireddit_search_merges_sorts_and_pages(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    reddit_api_server.add_posts(
        "alpha", [{"id": f"a{i}", "title": f"rack {i}", "score": i * 10} for i in range(4)]
    )
    reddit_api_server.add_posts(
        "beta", [{"id": f"b{i}", "title": f"rack {i}", "score": i * 10 + 5} for i in range(4)]
    )
    reddit_api_server.add_posts("gamma", [{"id": "g0", "title": "rack", "score": 999}])

    got = list(paginate_search(reddit_api_source, "alpha+Beta", "rack", sort="top", page_size=3))

    assert [p["id"] for p in got] == ["b3", "a3", "b2", "a2", "b1", "a1", "b0", "a0"]
    assert {p["subreddit"] for p in got} == {"alpha", "beta"}
    searches = [r for r in reddit_api_server.requests if r.path.endswith("/search")]
    assert [r.path for r in searches] == ["/r/alpha+Beta/search"] * 3
    assert [r.params.get("after") for r in searches] == [None, "t3_b2", "t3_a1"]


def test_multireddit_skips_unavailable_members_unless_all_are(
    reddit_api_source: RedditApiSource, reddit_api_server: RedditProtocolServer
) -> None:
    reddit_api_server.add_posts("alpha", [{"id": "a1", "title": "rack"}])
    reddit_api_server.mark_unavailable("hidden", status=403, reason="private")

    page = reddit_api_source.search_subreddit("hidden+alpha+nosuch", "rack")
    assert [p["id"] for p in page.posts] == ["a1"]

    with pytest.raises(SubredditUnavailableError) as info:
        reddit_api_source.search_subreddit("hidden+nosuch", "rack")
    assert info.value.status == 403 and info.value.reason == "private"
