"""The response cache keeps no usernames: bodies are scrubbed at the transport, hits equal misses.

Real local protocol servers (Reddit, Arctic Shift, YouTube), the real SQLite cache file in the
test's CROWDSIFT_HOME (read back byte for byte, WAL included) and the machine's real Redis.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import redis

from crowdsift.core.config import Settings
from crowdsift.core.models import SearchPlan
from crowdsift.core.privacy import AuthorPolicy, load_salt
from crowdsift.core.source import RedditSource
from crowdsift.http.cache import RedisResponseCache, SqliteResponseCache
from crowdsift.http.transport import HttpTransport
from crowdsift.pipeline.fetch.fetcher import FetchOutcome, RedditFetcher
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.sources.youtube import YouTubeSource
from crowdsift.testing.clock import Sleeps
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.corpus import Corpus, build_corpus
from tests.support.reddit_server import RedditProtocolServer
from tests.support.youtube_server import YouTubeProtocolServer

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SUBS = ["gadgets"]
TERMS = ["plaud"]
CLIENT_ID = "privacy-client"
CLIENT_SECRET = "privacy-secret-value-77"
REDIS_URL = "redis://127.0.0.1:6379/0"
POSTER = "Zelda_Quietwater"
COMMENTER = "Orrin_Vasquez_1987"
MODERATOR = "Mod_Halvard"
YT_KEY = "AIzaSy-privacy-key-0123456789ab"
YT_COMMENTER = "@Ingrid_Lakeside"
NAMES = (POSTER, COMMENTER, MODERATOR)
PLAN = SearchPlan(search_terms=TERMS, subreddits=SUBS)


def fixed_now() -> datetime:
    return NOW


def named_corpus() -> Corpus:
    """A small corpus whose posts and comments are signed by recognisable people."""
    corpus = build_corpus(SUBS, TERMS, posts_per_query=3, comments_per_post=2)
    for posts in corpus.posts.values():
        for post in posts:
            post.update(author=POSTER, author_fullname="t2_zelda99", approved_by=MODERATOR)
    for comments in corpus.comments.values():
        for comment in comments:
            comment.update(author=COMMENTER, author_fullname="t2_orrin42")
        comments.append({**comments[0], "id": comments[0]["id"] + "x", "author": "[deleted]"})
    return corpus


@pytest.fixture
def reddit_server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as server:
        named_corpus().load_into(server)
        yield server


@pytest.fixture
def arctic_server() -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer(clock=fixed_now) as server:
        named_corpus().load_into(server)
        yield server


def reddit_settings(server: RedditProtocolServer, **overrides: object) -> Settings:
    return Settings(
        reddit_client_id=CLIENT_ID,
        reddit_client_secret=CLIENT_SECRET,
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
        max_retries=0,
        **overrides,
    )


def fetch(source: RedditSource, settings: Settings) -> FetchOutcome:
    try:
        return RedditFetcher.from_settings(source, settings, clock=fixed_now).fetch(PLAN)
    finally:
        source.close()


def reddit_fetch(settings: Settings) -> FetchOutcome:
    sleeps = Sleeps()
    return fetch(
        RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock), settings
    )


def cache_file_bytes(home: Path) -> bytes:
    """Everything the SQLite cache holds on disk: the database and its WAL."""
    return b"".join(
        path.read_bytes() for path in sorted(home.glob("cache.sqlite*")) if path.is_file()
    )


def assert_nameless(data: bytes) -> None:
    for name in (*NAMES, "t2_zelda99", "t2_orrin42"):
        assert name.encode() not in data, name


# --- the default SQLite cache ------------------------------------------------------------


def test_a_reddit_fetch_caches_pseudonyms_and_hits_equal_misses(
    reddit_server: RedditProtocolServer, isolated_environment: Path
) -> None:
    settings = reddit_settings(reddit_server)
    first = reddit_fetch(settings)
    second = reddit_fetch(settings)

    on_disk = cache_file_bytes(isolated_environment)
    assert b'"author_hash"' in on_disk
    assert b"[deleted]" in on_disk  # markers are no one, and the vetoes read them
    assert_nameless(on_disk)
    assert second.report.requests == 0  # every page came from the cache
    assert second.result.model_dump() == first.result.model_dump()
    expected = AuthorPolicy(load_salt(settings)).hash(POSTER)
    assert {post.author_hash for post in first.result.posts} == {expected}
    assert first.report.comments_accepted > 0


def test_an_arctic_shift_fetch_caches_no_names(
    arctic_server: ArcticShiftServer, isolated_environment: Path
) -> None:
    settings = Settings(arctic_shift_base_url=arctic_server.base_url, max_retries=0)
    outcomes = [
        fetch(ArcticShiftSource.from_settings(settings, clock=fixed_now), settings)
        for _ in range(2)
    ]
    assert_nameless(cache_file_bytes(isolated_environment))
    assert outcomes[1].report.requests == 0
    assert outcomes[1].result.model_dump() == outcomes[0].result.model_dump()
    assert all(post.author_hash for post in outcomes[0].result.posts)


def test_opting_in_keeps_names_under_its_own_keys(
    reddit_server: RedditProtocolServer, isolated_environment: Path
) -> None:
    hashed = reddit_fetch(reddit_settings(reddit_server))
    kept = reddit_fetch(reddit_settings(reddit_server, keep_usernames=True))

    assert kept.report.requests == hashed.report.requests > 0  # no entry shared between them
    assert POSTER.encode() in cache_file_bytes(isolated_environment)
    assert [p.author_hash for p in kept.result.posts] == [
        p.author_hash for p in hashed.result.posts
    ]


def test_a_new_salt_never_reads_pseudonyms_made_under_the_old_one(
    reddit_server: RedditProtocolServer,
) -> None:
    old = reddit_fetch(reddit_settings(reddit_server, author_salt="salt-one-" * 4))
    new = reddit_fetch(reddit_settings(reddit_server, author_salt="salt-two-" * 4))

    assert new.report.requests == old.report.requests > 0
    old_hashes = {post.author_hash for post in old.result.posts}
    new_hashes = {post.author_hash for post in new.result.posts}
    assert old_hashes.isdisjoint(new_hashes)
    assert None not in old_hashes | new_hashes


def test_a_cache_file_from_before_scrubbing_is_emptied_on_open(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as conn:  # what schema 1 wrote: raw bodies, user_version 0
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
            "expires_at REAL NOT NULL)"
        )
        body = f'{{"author":"{POSTER}"}}'.encode()
        conn.execute("INSERT INTO responses VALUES ('k', ?, 4e9)", (body,))
    conn.close()

    cache = SqliteResponseCache(path, clock=lambda: 1_800_000_000.0)
    try:
        assert cache.get("k") is None
        cache.set("k2", b"{}", 60)
    finally:
        cache.close()
    assert POSTER.encode() not in cache_file_bytes(tmp_path)
    reopened = SqliteResponseCache(path, clock=lambda: 1_800_000_000.0)
    try:
        assert reopened.get("k2") == b"{}"  # a current file is not emptied again
    finally:
        reopened.close()


# --- Redis and YouTube -------------------------------------------------------------------


def test_the_redis_cache_holds_no_names(
    arctic_server: ArcticShiftServer, redis_namespace: str
) -> None:
    settings = Settings(arctic_shift_base_url=arctic_server.base_url, max_retries=0)
    cache = RedisResponseCache(REDIS_URL, namespace=redis_namespace)
    try:
        with httpx.Client(base_url=arctic_server.base_url, timeout=5) as client:
            transport = HttpTransport.from_settings(
                client, settings, source="arctic-shift", cache=cache
            )
            fetch(ArcticShiftSource(transport, clock=fixed_now), settings)
    finally:
        cache.close()
    client = redis.Redis.from_url(REDIS_URL)
    try:
        values = [client.get(key) for key in client.scan_iter(match=redis_namespace + "*")]
    finally:
        client.close()
    stored = b"".join(value for value in values if isinstance(value, bytes))
    assert len(values) > 0
    assert b'"author_hash"' in stored
    assert_nameless(stored)


def test_youtube_commenters_are_not_cached(isolated_environment: Path) -> None:
    with YouTubeProtocolServer(api_key=YT_KEY) as server:
        server.add_video(
            "vid00000001", "desk review", comments=[{"text": "great desk", "author": YT_COMMENTER}]
        )
        settings = Settings(youtube_api_key=YT_KEY, youtube_api_base_url=server.base_url)
        with YouTubeSource.from_settings(settings, sleep=lambda _: None) as source:
            first = source.search("desk", 5)
            second = source.search("desk", 5)
            hits = source.stats.cache_hits
    assert hits > 0
    assert second == first
    assert "great desk" in str(first)
    on_disk = cache_file_bytes(isolated_environment)
    assert b"great desk" in on_disk
    assert YT_COMMENTER.encode() not in on_disk
