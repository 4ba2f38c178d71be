"""The retry policy, Retry-After parsing and the final error messages."""

from __future__ import annotations

import pytest

from crowdsift.core.errors import EngineConfigError, EngineTransportError
from crowdsift.engines.openai_retry import (
    Failure,
    RetryPolicy,
    final_error,
    retry_after_seconds,
    safe_url,
)

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def clock() -> float:
    return NOW


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-4"}, None),
        ({"Retry-After": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers, clock) == expected


def test_backoff_doubles_with_jitter_between_half_and_one_and_a_half() -> None:
    low = RetryPolicy(rng=lambda: 0.0)
    high = RetryPolicy(rng=lambda: 0.999)

    assert [low.wait(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert [high.wait(n) for n in (1, 2, 3)] == [1.499, 2.998, 5.996]


def test_retry_after_is_a_floor_and_max_wait_a_ceiling() -> None:
    policy = RetryPolicy(max_wait=10.0, rng=lambda: 0.5, clock=clock)

    assert policy.wait(1, {"Retry-After": "3"}) == 3.0
    assert policy.wait(3, {"Retry-After": "1"}) == 4.0  # backoff is longer than asked
    assert policy.wait(1, {"Retry-After": "120"}) == 10.0
    assert policy.wait(8) == 10.0


def test_safe_url_drops_credentials_and_query() -> None:
    url = "https://user:pw@generativelanguage.example:8443/v1beta/openai/?key=AIza-secret"

    assert safe_url(url) == "https://generativelanguage.example:8443/v1beta/openai"


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_is_a_config_error(code: int) -> None:
    failure = Failure(False, f"http_{code}", code, {}, "Incorrect API key provided")

    error = final_error(failure, url="https://api.example/v1", attempts=1)

    assert isinstance(error, EngineConfigError)
    assert "CROWDSIFT_LLM_API_KEY" in str(error)
    assert "--engine local" in str(error)


def test_spent_retries_say_how_many_attempts_and_what_to_do() -> None:
    failure = Failure(True, "connection_error", None, None, "connection failed")

    error = final_error(failure, url="http://127.0.0.1:1/v1", attempts=4)

    assert isinstance(error, EngineTransportError)
    assert error.url == "http://127.0.0.1:1/v1"
    assert error.status is None
    assert "after 4 attempts: connection_error" in str(error)
    assert "CROWDSIFT_LLM_BASE_URL" in str(error)
