"""Fixtures shared by the Reddit tests: a private namespace on the machine's real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

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
