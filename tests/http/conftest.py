"""Fixtures for the transport tests: a real Reddit-protocol server, time that tests control, and
a private namespace on the machine's real Redis (the response cache's tests)."""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest
import redis
import structlog

from crowdsift.core.log import configure_logging
from crowdsift.http.auth import RedditOAuth
from tests.support.reddit_server import RedditProtocolServer

CLIENT_ID = "transport-client"
CLIENT_SECRET = "s3cr3t-transport-value"


class FakeTime:
    """A monotonic clock that only moves when something sleeps; every sleep is recorded."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def reddit_client_secret() -> str:
    return CLIENT_SECRET


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def reddit_server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as server:
        server.add_posts(
            "python",
            [
                {"id": f"p{i}", "title": f"Ducks post {i}", "selftext": "all about ducks"}
                for i in range(5)
            ],
        )
        yield server


@pytest.fixture
def make_oauth(
    reddit_server: RedditProtocolServer, fake_time: FakeTime
) -> Callable[..., RedditOAuth]:
    """RedditOAuth against the test server; keyword arguments override the credentials."""

    def make(**overrides: str | None) -> RedditOAuth:
        args = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, **overrides}
        return RedditOAuth(
            auth_url=reddit_server.auth_url,
            user_agent="python:crowdsift-tests:0 (by /u/tests)",
            clock=fake_time.monotonic,
            **args,
        )

    return make


@pytest.fixture
def reddit_oauth(make_oauth: Callable[..., RedditOAuth]) -> RedditOAuth:
    return make_oauth()


@pytest.fixture
def reddit_client(
    reddit_server: RedditProtocolServer, reddit_oauth: RedditOAuth
) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=reddit_server.base_url, auth=reddit_oauth, timeout=5, follow_redirects=False
    ) as client:
        yield client


@pytest.fixture
def captured_log() -> Iterator[io.StringIO]:
    """Every structured event at DEBUG and above, as rendered text."""
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    yield stream
    structlog.reset_defaults()


REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def redis_namespace() -> Iterator[str]:
    """A namespace no one else uses; every key under it is deleted afterwards."""
    namespace = f"crowdsift-test:{uuid.uuid4().hex}:"
    yield namespace
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=namespace + "*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
