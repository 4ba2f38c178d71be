"""Fixtures for the reddit-api source tests (names start with ``reddit_api_``).

Other sources' tests in this directory keep their fixtures in their own modules.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crowdsift.core.config import Settings
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from tests.support.reddit_server import RedditProtocolServer

REDDIT_API_CLIENT_ID = "source-client"
REDDIT_API_CLIENT_SECRET = "source-secret-value-42"


class RedditApiSleeps:
    """Records every sleep (retry waits and rate-limit pauses) and moves a fake clock."""

    def __init__(self) -> None:
        self.now = 5000.0
        self.calls: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def reddit_api_server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(
        client_id=REDDIT_API_CLIENT_ID, client_secret=REDDIT_API_CLIENT_SECRET
    ) as server:
        yield server


@pytest.fixture
def reddit_api_settings(reddit_api_server: RedditProtocolServer) -> Settings:
    return Settings(
        reddit_client_id=REDDIT_API_CLIENT_ID,
        reddit_client_secret=REDDIT_API_CLIENT_SECRET,
        reddit_api_base_url=reddit_api_server.base_url,
        reddit_auth_url=reddit_api_server.auth_url,
        max_retries=3,
        retry_budget=10,
        cache_ttl=0,  # these tests count upstream requests; the response cache has its own
    )


@pytest.fixture
def reddit_api_sleeps() -> RedditApiSleeps:
    return RedditApiSleeps()


@pytest.fixture
def reddit_api_source(
    reddit_api_settings: Settings, reddit_api_sleeps: RedditApiSleeps
) -> Iterator[RedditApiSource]:
    source = RedditApiSource.from_settings(
        reddit_api_settings, sleep=reddit_api_sleeps.sleep, clock=reddit_api_sleeps.clock
    )
    yield source
    source.close()
