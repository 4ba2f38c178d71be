"""The shared response cache: a repeated identical fetch makes zero upstream requests.

Everything runs against the real local protocol servers, the real SQLite file in the test's
CROWDSIFT_HOME and the machine's real Redis (keys under a unique namespace, deleted after).
"""

from __future__ import annotations

import io
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import redis
import structlog
from redis.backoff import NoBackoff
from redis.retry import Retry

from crowdsift.core.config import Settings
from crowdsift.core.errors import SubredditUnavailableError, TransportError
from crowdsift.core.log import configure_logging
from crowdsift.core.models import SearchPlan
from crowdsift.http.cache import (
    FailSafeCache,
    RedisResponseCache,
    ResponseCache,
    SqliteResponseCache,
    cache_key,
    open_response_cache,
)
from crowdsift.http.transport import HttpTransport
from crowdsift.pipeline.fetch.fetcher import FetchOutcome, RedditFetcher
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.testing.clock import Sleeps
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.corpus import build_corpus
from tests.support.reddit_server import RedditProtocolServer

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SUBS = ["gadgets", "productivity"]
TERMS = ["plaud", "recorder"]
PLAN = SearchPlan(search_terms=TERMS, subreddits=SUBS)
CLIENT_ID = "cache-client"
CLIENT_SECRET = "cache-secret-value-31"
REDIS_URL = "redis://127.0.0.1:6379/0"


class WallClock:
    """An injected time.time for cache expiry."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def fixed_now() -> datetime:
    return NOW


@pytest.fixture
def reddit_server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as server:
        build_corpus(SUBS, TERMS, posts_per_query=4, comments_per_post=2).load_into(server)
        yield server


@pytest.fixture
def arctic_server() -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer(clock=fixed_now) as server:
        build_corpus(SUBS, TERMS, posts_per_query=4, comments_per_post=2).load_into(server)
        yield server


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("INFO", stream)
    yield stream
    structlog.reset_defaults()


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def reddit_settings(server: RedditProtocolServer, **overrides: object) -> Settings:
    return Settings(
        reddit_client_id=CLIENT_ID,
        reddit_client_secret=CLIENT_SECRET,
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
        page_size=3,
        max_retries=0,
        **overrides,
    )


def reddit_fetch(settings: Settings, sleeps: Sleeps | None = None) -> tuple[FetchOutcome, int]:
    """One whole fetch through a fresh source (as a new job would); (outcome, cache hits)."""
    sleeps = sleeps or Sleeps()
    source = RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock)
    try:
        outcome = RedditFetcher.from_settings(source, settings, clock=fixed_now).fetch(PLAN)
        return outcome, source.stats.cache_hits
    finally:
        source.close()


def arctic_source(server: ArcticShiftServer, settings: Settings | None = None) -> ArcticShiftSource:
    settings = settings or Settings(arctic_shift_base_url=server.base_url, max_retries=0)
    return ArcticShiftSource.from_settings(settings, sleep=lambda _: None, clock=fixed_now)


def arctic_transport(
    client: httpx.Client, cache: ResponseCache, ttl: float = 60.0
) -> ArcticShiftSource:
    """An arctic-shift source over ``client`` with an injected cache (which the test owns)."""
    transport = HttpTransport(
        client,
        source="arctic-shift",
        max_retries=0,
        sleep=lambda _: None,
        cache=cache,
        cache_ttl=ttl,
    )
    return ArcticShiftSource(transport, clock=fixed_now)


# --- the promise: a repeated identical fetch makes zero upstream requests ---------


def test_repeated_reddit_fetch_makes_zero_upstream_requests(
    reddit_server: RedditProtocolServer, isolated_environment: Path
) -> None:
    settings = reddit_settings(reddit_server)
    first, first_hits = reddit_fetch(settings)
    upstream = len(reddit_server.requests)
    gets = [r for r in reddit_server.requests if r.method == "GET"]
    assert first_hits == 0
    assert first.report.requests == len(gets) > 0
    assert (isolated_environment / "cache.sqlite").is_file()  # the default: SQLite in the home

    sleeps = Sleeps()
    second, second_hits = reddit_fetch(settings, sleeps)

    assert len(reddit_server.requests) == upstream  # not even a token request
    assert second.report.requests == 0
    assert second_hits == len(gets)
    assert sleeps.calls == []  # the rate limiter was never consulted
    assert second.result.model_dump() == first.result.model_dump()
    assert len(second.result.posts) == len(SUBS) * len(TERMS) * 4
    assert second.report.comments_accepted == first.report.comments_accepted > 0


def test_repeated_arctic_shift_fetch_makes_zero_upstream_requests(
    arctic_server: ArcticShiftServer,
) -> None:
    settings = Settings(arctic_shift_base_url=arctic_server.base_url, page_size=3)
    outcomes = []
    for _ in range(2):
        source = arctic_source(arctic_server, settings)
        try:
            outcomes.append(
                RedditFetcher.from_settings(source, settings, clock=fixed_now).fetch(PLAN)
            )
        finally:
            source.close()
        if len(outcomes) == 1:
            upstream = len(arctic_server.requests)
            assert upstream > 0
    assert len(arctic_server.requests) == upstream
    assert outcomes[1].report.requests == 0
    assert outcomes[1].result.model_dump() == outcomes[0].result.model_dump()
    assert len(outcomes[1].result.posts) == len(SUBS) * len(TERMS) * 4


def test_cache_ttl_zero_turns_the_cache_off(reddit_server: RedditProtocolServer) -> None:
    settings = reddit_settings(reddit_server, cache_ttl=0)
    reddit_fetch(settings)
    upstream = len(reddit_server.requests)
    _, hits = reddit_fetch(settings)
    assert hits == 0
    assert len(reddit_server.requests) > upstream


def test_a_user_login_does_not_share_entries_with_app_only_access() -> None:
    """A password grant reads as that user (private subreddits): its answers are its own."""
    with RedditProtocolServer(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, username="alice", password="alice-pw-9"
    ) as server:
        server.add_posts("gadgets", [{"id": "p1", "title": "plaud review"}])
        app_only = reddit_settings(server)
        as_alice = reddit_settings(server, reddit_username="alice", reddit_password="alice-pw-9")
        hits = []
        for settings in (app_only, as_alice, as_alice, app_only):
            sleeps = Sleeps()
            source = RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock)
            try:
                source.search_subreddit("gadgets", "plaud")
                hits.append(source.stats.cache_hits)
            finally:
                source.close()
        searches = [r for r in server.requests if r.path == "/r/gadgets/search"]
    assert hits == [0, 0, 1, 1]
    assert len(searches) == 2


def test_a_different_question_still_goes_upstream(arctic_server: ArcticShiftServer) -> None:
    source = arctic_source(arctic_server)
    try:
        source.search_subreddit("gadgets", "plaud", limit=3)
        source.search_subreddit("gadgets", "plaud", limit=3)
        assert len(arctic_server.requests) == 1
        source.search_subreddit("gadgets", "plaud", limit=4)
        source.search_subreddit("gadgets", "recorder", limit=3)
        source.search_subreddit("productivity", "plaud", limit=3)
        assert len(arctic_server.requests) == 4
        assert source.stats.cache_hits == 1
        assert source.stats.requests == 4
    finally:
        source.close()


# --- expiry, ownership ------------------------------------------------------------------


def test_entries_expire_after_the_ttl(arctic_server: ArcticShiftServer, tmp_path: Path) -> None:
    clock = WallClock()
    cache = SqliteResponseCache(tmp_path / "ttl.sqlite", clock=clock)
    with httpx.Client(base_url=arctic_server.base_url, timeout=5) as client:
        source = arctic_transport(client, cache, ttl=60.0)
        first = source.search_subreddit("gadgets", "plaud", limit=3)
        clock.now += 59.9
        assert source.search_subreddit("gadgets", "plaud", limit=3) == first
        assert len(arctic_server.requests) == 1
        clock.now += 0.2  # past the TTL
        assert source.search_subreddit("gadgets", "plaud", limit=3) == first
        assert len(arctic_server.requests) == 2
        assert source.search_subreddit("gadgets", "plaud", limit=3) == first  # stored afresh
        assert len(arctic_server.requests) == 2
    cache.close()


def test_expired_rows_are_pruned_on_write(tmp_path: Path) -> None:
    clock = WallClock()
    path = tmp_path / "prune.sqlite"
    cache = SqliteResponseCache(path, clock=clock, prune_every=2)
    cache.set("old", b"1", 10)
    clock.now += 11
    assert cache.get("old") is None  # expired: ignored on read at once
    cache.set("new", b"2", 10)  # second write: prunes
    cache.close()
    with sqlite3.connect(path) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM responses")]
    conn.close()
    assert keys == ["new"]


def test_the_source_closes_the_cache_it_opened_but_not_an_injected_one(
    arctic_server: ArcticShiftServer, tmp_path: Path
) -> None:
    source = arctic_source(arctic_server)
    opened = source.transport.cache
    assert isinstance(opened, FailSafeCache)
    assert isinstance(opened.inner, SqliteResponseCache)
    source.close()
    with pytest.raises(sqlite3.ProgrammingError):
        opened.inner.get("anything")

    injected = SqliteResponseCache(tmp_path / "mine.sqlite")
    settings = Settings(arctic_shift_base_url=arctic_server.base_url)
    with httpx.Client(base_url=arctic_server.base_url) as client:
        transport = HttpTransport.from_settings(
            client, settings, source="arctic-shift", cache=injected
        )
        ArcticShiftSource(transport, clock=fixed_now).search_subreddit("gadgets", "plaud")
        ArcticShiftSource(transport, clock=fixed_now).close()
    assert injected.get("missing") is None  # still open: the caller owns it
    injected.close()


def test_from_settings_with_cache_none_runs_uncached(arctic_server: ArcticShiftServer) -> None:
    settings = Settings(arctic_shift_base_url=arctic_server.base_url)
    with httpx.Client(base_url=arctic_server.base_url) as client:
        transport = HttpTransport.from_settings(client, settings, source="arctic-shift", cache=None)
        source = ArcticShiftSource(transport, clock=fixed_now)
        source.search_subreddit("gadgets", "plaud")
        source.search_subreddit("gadgets", "plaud")
    assert transport.cache is None
    assert len(arctic_server.requests) == 2


# --- failures are never cached ----------------------------------------------------------


def test_server_errors_and_429s_are_not_cached(reddit_server: RedditProtocolServer) -> None:
    sleeps = Sleeps()
    settings = reddit_settings(reddit_server)
    source = RedditApiSource.from_settings(settings, sleep=sleeps.sleep, clock=sleeps.clock)
    try:
        reddit_server.add_fault("/r/gadgets/search", "status", code=503)
        with pytest.raises(TransportError):
            source.search_subreddit("gadgets", "plaud")
        reddit_server.add_fault("/r/gadgets/search", "rate_limited", retry_after=1)
        with pytest.raises(TransportError):
            source.search_subreddit("gadgets", "plaud")
        reddit_server.add_fault("/r/gadgets/search", "truncated")
        with pytest.raises(TransportError):
            source.search_subreddit("gadgets", "plaud")
        good = source.search_subreddit("gadgets", "plaud")  # upstream again, answers properly
        again = source.search_subreddit("gadgets", "plaud")  # now from the cache
    finally:
        source.close()
    statuses = [r.status for r in reddit_server.requests if r.path == "/r/gadgets/search"]
    assert statuses == [503, 429, 200, 200]
    assert again == good
    assert len(good.posts) == 4
    assert source.stats.cache_hits == 1


def test_unavailable_subreddits_are_asked_again(reddit_server: RedditProtocolServer) -> None:
    reddit_server.mark_unavailable("gadgets", 403, "private")
    sleeps = Sleeps()
    source = RedditApiSource.from_settings(
        reddit_settings(reddit_server), sleep=sleeps.sleep, clock=sleeps.clock
    )
    try:
        for _ in range(2):
            with pytest.raises(SubredditUnavailableError):
                source.search_subreddit("gadgets", "plaud")
    finally:
        source.close()
    assert len([r for r in reddit_server.requests if r.path == "/r/gadgets/search"]) == 2


def test_an_error_envelope_sent_with_200_is_not_cached(arctic_server: ArcticShiftServer) -> None:
    arctic_server.add_fault("posts/search", "api_error", status=200)
    source = arctic_source(arctic_server)
    try:
        shrunk = source.search_subreddit("gadgets", "plaud", limit=4)
        full = source.search_subreddit("gadgets", "plaud", limit=4)
    finally:
        source.close()
    limits = [r.params["limit"] for r in arctic_server.requests]
    # the timeout answer (limit 4) was not kept: the repeat asked upstream for limit 4 again,
    # while the good limit-2 answer of the first call was kept
    assert limits == ["4", "2", "4"]
    assert len(shrunk.posts) == 2
    assert len(full.posts) == 4


# --- backends ---------------------------------------------------------------------------


def test_sqlite_cache_is_shared_between_instances_and_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "cache.sqlite"
    writer = SqliteResponseCache(f"sqlite:///{path}")
    reader = SqliteResponseCache(path)
    writer.set("k1", b'{"a": 1}', 60)
    assert reader.get("k1") == b'{"a": 1}'

    script = (
        "import sys\n"
        "from crowdsift.http.cache import SqliteResponseCache\n"
        "cache = SqliteResponseCache(sys.argv[1])\n"
        "assert cache.get('k1') == b'{\"a\": 1}', cache.get('k1')\n"
        "cache.set('k2', b'from another process', 60)\n"
        "cache.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert reader.get("k2") == b"from another process"
    assert writer.get("k2") == b"from another process"
    writer.close()
    reader.close()


def test_sqlite_cache_is_safe_across_threads(tmp_path: Path) -> None:
    cache = SqliteResponseCache(tmp_path / "threads.sqlite")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(25):
                cache.set(f"{n}:{i}", f"{n}-{i}".encode(), 60)
                assert cache.get(f"{n}:{i}") == f"{n}-{i}".encode()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    cache.close()
    assert errors == []


def test_redis_backend_stores_with_expiry_under_its_namespace(redis_namespace: str) -> None:
    first = RedisResponseCache(REDIS_URL, namespace=redis_namespace)
    second = RedisResponseCache(REDIS_URL, namespace=redis_namespace)
    raw = redis.Redis.from_url(REDIS_URL)
    try:
        assert first.get("k") is None
        first.set("k", b"body", 30)
        assert second.get("k") == b"body"  # another worker sees it
        ttl_ms = raw.pttl(redis_namespace + "k")
        assert isinstance(ttl_ms, int)
        assert 0 < ttl_ms <= 30_000
        first.set("skip", b"never", 0)
        assert raw.exists(redis_namespace + "skip") == 0
    finally:
        raw.close()
        first.close()
        second.close()


def test_redis_backend_serves_a_repeated_fetch(
    arctic_server: ArcticShiftServer, redis_namespace: str
) -> None:
    cache = RedisResponseCache(REDIS_URL, namespace=redis_namespace)
    raw = redis.Redis.from_url(REDIS_URL)
    try:
        with httpx.Client(base_url=arctic_server.base_url, timeout=5) as client:
            first = arctic_transport(client, cache).search_subreddit("gadgets", "plaud")
        with httpx.Client(base_url=arctic_server.base_url, timeout=5) as client:
            again = arctic_transport(client, cache)
            assert again.search_subreddit("gadgets", "plaud") == first
            assert again.stats.cache_hits == 1
        keys = list(raw.scan_iter(match=redis_namespace + "*"))
    finally:
        raw.close()
        cache.close()
    assert len(arctic_server.requests) == 1
    assert len(keys) == 1
    assert keys[0].decode().startswith(redis_namespace + "arctic-shift:")


def test_open_response_cache_follows_the_settings(tmp_path: Path) -> None:
    assert open_response_cache(Settings(cache_ttl=0)) is None

    default = open_response_cache(Settings())
    assert default is not None and isinstance(default.inner, SqliteResponseCache)
    assert default.inner.path == Settings().data_dir / "cache.sqlite"
    default.close()

    chosen = open_response_cache(Settings(cache_url=f"sqlite:///{tmp_path / 'x.sqlite'}"))
    assert chosen is not None and isinstance(chosen.inner, SqliteResponseCache)
    assert chosen.inner.path == tmp_path / "x.sqlite"
    chosen.close()

    key = f"crowdsift-test-{uuid.uuid4().hex}"
    remote = open_response_cache(Settings(cache_url="redis://127.0.0.1:6379/15"))
    assert remote is not None and isinstance(remote.inner, RedisResponseCache)
    try:
        remote.set(key, b"v", 30)
        raw = redis.Redis.from_url("redis://127.0.0.1:6379/15")
        assert raw.get("crowdsift:http:" + key) == b"v"
        raw.delete("crowdsift:http:" + key)
        raw.close()
    finally:
        remote.close()


# --- a broken cache never breaks a fetch ------------------------------------------------


def test_unreachable_redis_warns_once_and_fetches_uncached(
    reddit_server: RedditProtocolServer, log_stream: io.StringIO
) -> None:
    url = f"redis://:hunter2-cache-pass@127.0.0.1:{closed_port()}/0"
    settings = reddit_settings(reddit_server, cache_url=url)
    first, _ = reddit_fetch(settings)
    upstream = len(reddit_server.requests)
    second, hits = reddit_fetch(settings)
    assert hits == 0
    assert len(reddit_server.requests) > upstream  # uncached: upstream again
    assert second.result.model_dump() == first.result.model_dump()
    assert len(first.result.posts) == len(SUBS) * len(TERMS) * 4
    text = log_stream.getvalue()
    assert text.count("response_cache_unavailable") == 2  # one per source opened
    assert "CROWDSIFT_CACHE_TTL=0" in text
    assert "hunter2-cache-pass" not in text


def test_cache_failing_at_get_and_set_warns_once(
    arctic_server: ArcticShiftServer, log_stream: io.StringIO
) -> None:
    dead = redis.Redis(host="127.0.0.1", port=closed_port(), retry=Retry(NoBackoff(), 0))
    cache = RedisResponseCache("redis://dead", client=dead)
    try:
        with httpx.Client(base_url=arctic_server.base_url, timeout=5) as client:
            source = arctic_transport(client, cache)
            first = source.search_subreddit("gadgets", "plaud", limit=3)
            again = source.search_subreddit("gadgets", "plaud", limit=3)
    finally:
        dead.close()
    assert first == again
    assert len(first.posts) == 3
    assert len(arctic_server.requests) == 2
    assert log_stream.getvalue().count("response_cache_failed") == 1


def test_unwritable_sqlite_cache_warns_and_fetches(
    arctic_server: ArcticShiftServer, tmp_path: Path, log_stream: io.StringIO
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    settings = Settings(
        arctic_shift_base_url=arctic_server.base_url,
        cache_url=f"sqlite:///{blocker / 'cache.sqlite'}",
    )
    source = arctic_source(arctic_server, settings)
    try:
        assert len(source.search_subreddit("gadgets", "plaud", limit=3).posts) == 3
    finally:
        source.close()
    assert source.transport.cache is None
    assert "response_cache_unavailable" in log_stream.getvalue()


def test_an_unknown_cache_url_warns_and_runs_uncached(log_stream: io.StringIO) -> None:
    assert open_response_cache(Settings(cache_url="memcached://127.0.0.1:11211")) is None
    assert "CROWDSIFT_CACHE_URL" in log_stream.getvalue()


def test_a_failed_cache_is_bypassed_for_the_cooldown_then_tried_again(
    tmp_path: Path, log_stream: io.StringIO
) -> None:
    path = tmp_path / "flaky.sqlite"
    clock = WallClock()
    inner = SqliteResponseCache(path)
    cache = FailSafeCache(inner, cooldown=30, clock=clock)
    cache.set("k", b"v", 60)
    other = sqlite3.connect(path)
    other.execute("ALTER TABLE responses RENAME TO parked")  # the backend breaks
    other.commit()
    assert cache.get("k") is None  # a failure is a miss
    other.execute("ALTER TABLE parked RENAME TO responses")  # ... and recovers
    other.commit()
    other.close()
    clock.now += 29
    assert cache.get("k") is None  # still cooling down: the backend is not asked
    clock.now += 2
    assert cache.get("k") == b"v"  # tried again after the cooldown
    cache.close()
    assert log_stream.getvalue().count("response_cache_failed") == 1


# --- keys -------------------------------------------------------------------------------


def test_cache_key_is_stable_and_tells_requests_apart() -> None:
    base = cache_key("reddit-api", "https://oauth.reddit.com/", "/r/a/search", {"q": "x", "n": 1})
    assert base == cache_key(
        "reddit-api", "https://oauth.reddit.com", "r/a/search", {"n": "1", "q": "x"}
    )
    different = [
        cache_key("arctic-shift", "https://oauth.reddit.com", "/r/a/search", {"q": "x", "n": 1}),
        cache_key("reddit-api", "https://other.example", "/r/a/search", {"q": "x", "n": 1}),
        cache_key("reddit-api", "https://oauth.reddit.com", "/r/b/search", {"q": "x", "n": 1}),
        cache_key("reddit-api", "https://oauth.reddit.com", "/r/a/search", {"q": "y", "n": 1}),
        cache_key("reddit-api", "https://oauth.reddit.com", "/r/a/search", {"q": "x"}),
        cache_key(
            "reddit-api", "https://oauth.reddit.com", "/r/a/search", {"q": "x", "n": 1},
            identity="cid:someuser",
        ),
    ]  # fmt: skip
    assert len({base, *different}) == 7
    for key in (base, *different):
        source, _, digest = key.partition(":")
        assert source in ("reddit-api", "arctic-shift")
        assert len(digest) == 64 and set(digest) <= set("0123456789abcdef")  # a hash, no clear text
