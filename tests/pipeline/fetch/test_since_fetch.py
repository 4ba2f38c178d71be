"""``--since`` through the fetcher over real HTTP on 127.0.0.1: each source gets its window.

- reddit-api: ``t`` is the smallest window covering the bound; what Reddit returns inside that
  window but before the bound is dropped (``too_old``), never returned;
- arctic-shift: ``after`` is the bound minus one second (Arctic Shift's ``after`` is exclusive);
- a plan without ``since`` keeps its own time filter (the default is unchanged).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from crowdsift.core.config import Settings
from crowdsift.core.models import PlanQuery, RejectReason, SearchPlan
from crowdsift.core.since import parse_since, since_epoch
from crowdsift.core.source import RawThing
from crowdsift.http.transport import HttpTransport
from crowdsift.pipeline.fetch.fetcher import RedditFetcher
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.testing.clock import Sleeps
from crowdsift.testing.factories import raw_post
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.reddit_server import RedditProtocolServer

# The fake Reddit applies ``t`` against the wall clock, so posts are dated from it.
NOW = datetime.now(UTC).replace(microsecond=0)


def dated(post_id: str, age: timedelta) -> RawThing:
    return raw_post(
        post_id,
        title=f"Plaud Note after months of meetings ({post_id})",
        created_utc=int((NOW - age).timestamp()),
    )


FRESH, STALE, ANCIENT = (
    dated("fresh1", timedelta(days=5)),
    dated("stale1", timedelta(days=25)),  # inside Reddit's month, before a 20-day bound
    dated("ancient1", timedelta(days=60)),
)


@pytest.fixture
def reddit() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id="cid", client_secret="since-secret-31") as server:
        server.add_posts("gadgets", [FRESH, STALE, ANCIENT])
        yield server


def reddit_fetch(server: RedditProtocolServer, plan: SearchPlan) -> object:
    settings = Settings(
        reddit_client_id="cid",
        reddit_client_secret="since-secret-31",
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
        cache_ttl=0,
    )
    sleeps = Sleeps()
    source = RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock)
    try:
        fetcher = RedditFetcher.from_settings(source, Settings(), clock=lambda: NOW)
        return fetcher.fetch(plan)
    finally:
        source.close()


def searches(server: RedditProtocolServer) -> list[dict[str, str]]:
    return [r.params for r in server.requests if r.path.endswith("/search")]


def test_reddit_api_gets_the_covering_window_and_older_posts_never_return(
    reddit: RedditProtocolServer,
) -> None:
    since = parse_since("20d", NOW)
    plan = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"], since=since)
    outcome = reddit_fetch(reddit, plan)
    result, report = outcome.result, outcome.report  # type: ignore[attr-defined]
    assert [s["t"] for s in searches(reddit)] == ["month"]
    assert [p.id for p in result.posts] == ["fresh1"]
    assert report.posts_seen == 2  # Reddit's month let stale1 through; the bound did not
    assert report.post_rejections == {RejectReason.TOO_OLD: 1}
    assert result.since == since
    assert all(p.created_at is not None and p.created_at >= since for p in result.posts)


def test_reddit_api_window_replaces_the_plan_queries_own(reddit: RedditProtocolServer) -> None:
    """A plan file's query asking for ``week`` still searches back to the bound."""
    since = parse_since("20d", NOW)
    query = PlanQuery(strategy="targeted", term="plaud", subreddits=["gadgets"], time_filter="week")
    plan = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"], queries=[query], since=since)
    outcome = reddit_fetch(reddit, plan)
    assert [s["t"] for s in searches(reddit)] == ["month"]
    assert [p.id for p in outcome.result.posts] == ["fresh1"]  # type: ignore[attr-defined]


def test_reddit_api_without_since_is_unchanged(reddit: RedditProtocolServer) -> None:
    plan = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"])
    outcome = reddit_fetch(reddit, plan)
    result, report = outcome.result, outcome.report  # type: ignore[attr-defined]
    assert [s["t"] for s in searches(reddit)] == ["all"]  # CROWDSIFT_SEARCH_TIME's default
    assert sorted(p.id for p in result.posts) == ["ancient1", "fresh1", "stale1"]
    assert RejectReason.TOO_OLD not in report.post_rejections
    assert result.since is None


# --- arctic-shift ----------------------------------------------------------------------------


ARCTIC_NOW = datetime(2026, 11, 25, 19, 30, tzinfo=UTC)


@pytest.fixture
def arctic() -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer(clock=lambda: ARCTIC_NOW) as server:
        yield server


def arctic_fetch(server: ArcticShiftServer, plan: SearchPlan) -> object:
    client = httpx.Client(base_url=server.base_url, timeout=5.0)
    source = ArcticShiftSource(
        HttpTransport(client, source="arctic-shift", sleep=Sleeps().sleep),
        clock=lambda: ARCTIC_NOW,
    )
    try:
        return RedditFetcher(source, clock=lambda: ARCTIC_NOW).fetch(plan)
    finally:
        client.close()


def test_arctic_shift_gets_after_one_second_before_the_bound(arctic: ArcticShiftServer) -> None:
    since = parse_since("2026-10-26", ARCTIC_NOW)
    edge = since_epoch(since)
    posts = [
        raw_post("onedge", title="Plaud Note at the bound", created_utc=edge),
        raw_post("inside", title="Plaud Note a day later", created_utc=edge + 86_400),
        raw_post("outside", title="Plaud Note a second early", created_utc=edge - 1),
    ]
    arctic.add_posts("gadgets", posts)
    plan = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"], since=since)
    outcome = arctic_fetch(arctic, plan)
    sent = [r.params for r in arctic.requests if r.path == "/api/posts/search"]
    assert sent and all(int(p["after"]) == edge - 1 for p in sent)
    assert sorted(p.id for p in outcome.result.posts) == ["inside", "onedge"]  # type: ignore[attr-defined]


def test_arctic_shift_without_since_sends_no_after(arctic: ArcticShiftServer) -> None:
    arctic.add_posts("gadgets", [raw_post("old1", title="Plaud Note", created_utc=1_600_000_000)])
    outcome = arctic_fetch(arctic, SearchPlan(search_terms=["plaud"], subreddits=["gadgets"]))
    sent = [r.params for r in arctic.requests if r.path == "/api/posts/search"]
    assert sent and all("after" not in p for p in sent)
    assert [p.id for p in outcome.result.posts] == ["old1"]  # type: ignore[attr-defined]
