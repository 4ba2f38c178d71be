"""The retry policy's pure parts: Retry-After parsing, wait computation, the shared budget."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import httpx
import pytest
from tenacity import RetryCallState, Retrying

from crowdsift.core.errors import RetryBudgetExceededError
from crowdsift.http.retry import (
    RetryableResponse,
    RetryBudget,
    RetryPolicy,
    is_retryable,
    is_retryable_status,
    parse_retry_after,
)

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def failed_state(attempt: int, exc: BaseException) -> RetryCallState:
    state = RetryCallState(retry_object=Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7.0),
        (" 120 ", 120.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        ("Sat, 01 Mar 2025 12:00:30 GMT", 30.0),
        ("Sat, 01 Mar 2025 11:00:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value, expected):
    assert parse_retry_after(value, now=NOW) == expected


@pytest.mark.parametrize("status", [429, 500, 503, 599])
def test_retryable_statuses(status):
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [200, 302, 400, 401, 403, 404])
def test_non_retryable_statuses(status):
    assert not is_retryable_status(status)


def test_retryable_exceptions():
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert is_retryable(httpx.ReadTimeout("slow", request=request))
    assert is_retryable(httpx.ConnectError("refused", request=request))
    assert is_retryable(httpx.RemoteProtocolError("reset", request=request))
    assert is_retryable(RetryableResponse("invalid JSON", status=200))
    assert not is_retryable(httpx.UnsupportedProtocol("ftp", request=request))
    assert not is_retryable(ValueError("ours"))


def test_backoff_grows_exponentially_without_jitter():
    wait = RetryPolicy(initial_backoff=0.5, jitter=0.0, max_retry_wait=60).wait_strategy()
    waits = [wait(failed_state(n, RetryableResponse("x", status=503))) for n in (1, 2, 3, 4)]
    assert waits == [0.5, 1.0, 2.0, 4.0]


def test_jitter_stays_within_its_range():
    wait = RetryPolicy(initial_backoff=1.0, jitter=0.5).wait_strategy()
    for _ in range(50):
        assert 1.0 <= wait(failed_state(1, RetryableResponse("x", status=502))) <= 1.5


def test_retry_after_wins_over_a_shorter_backoff():
    wait = RetryPolicy(initial_backoff=0.5, jitter=0.0).wait_strategy()
    assert wait(failed_state(1, RetryableResponse("429", status=429, retry_after=7))) == 7.0


def test_backoff_wins_over_a_shorter_retry_after():
    wait = RetryPolicy(initial_backoff=4.0, jitter=0.0).wait_strategy()
    assert wait(failed_state(2, RetryableResponse("429", status=429, retry_after=1))) == 8.0


def test_waits_are_capped_by_max_retry_wait():
    wait = RetryPolicy(initial_backoff=0.5, jitter=0.0, max_retry_wait=60).wait_strategy()
    assert wait(failed_state(1, RetryableResponse("429", status=429, retry_after=3600))) == 60.0
    assert wait(failed_state(30, httpx.ReadTimeout("slow"))) == 30.0  # max_backoff first


def test_policy_stops_after_max_retries_and_sleeps_between():
    sleeps: list[float] = []
    calls = 0

    def flaky() -> str:
        nonlocal calls
        calls += 1
        raise RetryableResponse("down", status=503)

    retrying = RetryPolicy(max_retries=2, jitter=0.0).retrying(sleep=sleeps.append)
    with pytest.raises(RetryableResponse):
        retrying(flaky)
    assert calls == 3
    assert sleeps == [0.5, 1.0]


def test_policy_does_not_retry_other_errors():
    calls = 0

    def broken() -> str:
        nonlocal calls
        calls += 1
        raise KeyError("bug")

    with pytest.raises(KeyError):
        RetryPolicy().retrying(sleep=lambda _s: None)(broken)
    assert calls == 1


def test_budget_counts_and_then_refuses():
    budget = RetryBudget(2)
    budget.spend()
    budget.spend()
    assert budget.remaining == 0
    with pytest.raises(RetryBudgetExceededError) as info:
        budget.spend(url="http://127.0.0.1/r/x/search", status=503, reason="Service Unavailable")
    message = str(info.value)
    assert "2 retries spent" in message
    assert "CROWDSIFT_RETRY_BUDGET" in message
    assert "try again later" in message
    assert info.value.status == 503
    assert info.value.url == "http://127.0.0.1/r/x/search"


def test_budget_is_exact_under_threads():
    budget = RetryBudget(100)
    refused = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal refused
        for _ in range(30):
            try:
                budget.spend()
            except RetryBudgetExceededError:
                with lock:
                    refused += 1

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.spent == 100
    assert refused == 8 * 30 - 100


def test_budget_rejects_negative_totals():
    with pytest.raises(ValueError, match="negative"):
        RetryBudget(-1)


def test_a_retry_after_longer_than_the_cap_stops_the_retries():
    calls = 0

    def throttled() -> str:
        nonlocal calls
        calls += 1
        raise RetryableResponse("429", status=429, retry_after=61)

    sleeps: list[float] = []
    retrying = RetryPolicy(max_retries=4, max_retry_wait=60).retrying(sleep=sleeps.append)
    with pytest.raises(RetryableResponse):
        retrying(throttled)
    assert (calls, sleeps) == (1, [])
