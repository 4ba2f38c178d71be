"""SearchPlan → FetchResult end to end over real HTTP on 127.0.0.1, faults included.

The local server speaks Reddit's protocol (token grant, paged search, /comments, rate-limit
headers); sleeps are injected so retries cost nothing but are recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings
from crowdsift.core.models import RejectReason, SearchPlan
from crowdsift.pipeline.fetch.fetcher import RedditFetcher
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.testing.clock import Sleeps
from crowdsift.testing.factories import raw_comment, raw_post
from tests.support.corpus import build_corpus
from tests.support.reddit_server import RedditProtocolServer

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SUBS = ["gadgets", "productivity"]
TERMS = ["plaud", "voice recorder"]
PLAN = SearchPlan(search_terms=TERMS, subreddits=[*SUBS, "secretclub"])


@pytest.fixture
def server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id="cid", client_secret="integration-secret-77") as srv:
        corpus = build_corpus(SUBS, TERMS, posts_per_query=7, comments_per_post=2)
        gadgets = corpus.posts["gadgets"]
        gadgets.append(raw_post("nsfw1", title="plaud nsfw", over_18=True))
        gadgets.append(raw_post("ad1", title="plaud deal", promoted=True))
        gadgets.append(raw_post("link1", title="plaud link", is_self=False, selftext=""))
        gadgets.append(
            raw_post("short1", title="plaud?", selftext="title says it all", num_comments=0)
        )
        corpus.comments["s0t0n0"].append(raw_comment("gone", "s0t0n0", body="[removed]"))
        corpus.load_into(srv)
        srv.mark_unavailable("secretclub", 403, "private")
        yield srv


def make_source(server: RedditProtocolServer, sleeps: Sleeps) -> RedditApiSource:
    settings = Settings(
        reddit_client_id="cid",
        reddit_client_secret="integration-secret-77",
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
        page_size=5,
        cache_ttl=0,  # repeated runs must reach the server (faults, request counts)
    )
    return RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock)


def run(server: RedditProtocolServer, sleeps: Sleeps, concurrency: int = 4) -> object:
    source = make_source(server, sleeps)
    settings = Settings(page_size=5, concurrency=concurrency)
    try:
        return RedditFetcher.from_settings(source, settings, clock=lambda: NOW).fetch(PLAN)
    finally:
        source.close()


def test_plan_to_fetch_result_with_exact_counts(server: RedditProtocolServer) -> None:
    outcome = run(server, Sleeps())
    result, report = outcome.result, outcome.report  # type: ignore[attr-defined]
    # 2 subs x 2 terms x 7 posts, plus 4 vetoed/short posts that match "plaud" in r/gadgets
    assert report.posts_seen == 32
    assert report.posts_accepted == 28
    assert report.post_rejections == {
        RejectReason.NSFW_OR_AD: 2,
        RejectReason.METADATA_VETO: 1,
        RejectReason.TOO_SHORT: 1,
    }
    assert report.skipped_subreddits == {"secretclub": "private"}
    assert report.errors == []
    assert report.comments_accepted == 56
    assert report.comment_rejections == {RejectReason.DELETED_OR_REMOVED: 1}
    assert len(result.posts) == 28
    for post in result.posts:
        assert post.url.startswith("https://www.reddit.com/r/")
        assert "127.0.0.1" not in post.url
        assert [c.post_id for c in post.comments] == [post.id] * 2
    search_requests = [r for r in server.requests if r.path.endswith("/search")]
    assert all(
        r.params.get("restrict_sr") == "1" and r.params.get("include_over_18") == "false"
        for r in search_requests
    )


def test_faults_are_retried_and_the_result_is_unchanged(server: RedditProtocolServer) -> None:
    clean = run(server, Sleeps()).result  # type: ignore[attr-defined]
    server.add_fault("/r/gadgets/search", "rate_limited", retry_after=7)
    server.add_fault("/comments/*", "status", times=3, status=503)
    server.add_fault("/r/productivity/search", "truncated")
    server.add_fault("/comments/s1t1n3", "expire_token")
    sleeps = Sleeps()
    faulty = run(server, sleeps).result  # type: ignore[attr-defined]
    assert faulty.model_dump(exclude={"fetched_at"}) == clean.model_dump(exclude={"fetched_at"})
    assert 7 in sleeps.calls  # Retry-After honoured exactly


def test_concurrency_gives_the_same_result_as_sequential(server: RedditProtocolServer) -> None:
    sequential = run(server, Sleeps(), concurrency=1).result  # type: ignore[attr-defined]
    concurrent = run(server, Sleeps(), concurrency=8).result  # type: ignore[attr-defined]
    assert concurrent == sequential


def test_cli_fetch_over_the_reddit_api(
    server: RedditProtocolServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDDIT_CLIENT_ID", "cid")
    monkeypatch.setenv("REDDIT_CLIENT_SECRET", "integration-secret-77")
    monkeypatch.setenv("REDDIT_API_BASE_URL", server.base_url)
    monkeypatch.setenv("REDDIT_AUTH_URL", server.auth_url)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"search_terms": TERMS, "subreddits": SUBS}))
    outcome = CliRunner().invoke(app, ["-vv", "fetch", "--plan", str(plan), "--json"])
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.stdout)
    assert len(data["posts"]) == 28
    assert data["posts"][0]["source"] == "reddit-api"
    assert "posts: 28 accepted of 32" in outcome.stderr
    assert "integration-secret-77" not in outcome.output
    assert "integration-secret-77" not in outcome.stderr
