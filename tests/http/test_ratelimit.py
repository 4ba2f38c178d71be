"""RateLimiter on constructed header sequences, with a clock that only sleeping moves."""

from __future__ import annotations

import threading

import pytest

from crowdsift.http.ratelimit import RateLimiter


def headers(remaining: str, used: str, reset: str) -> dict[str, str]:
    return {
        "x-ratelimit-remaining": remaining,
        "x-ratelimit-used": used,
        "x-ratelimit-reset": reset,
    }


@pytest.fixture
def limiter(fake_time) -> RateLimiter:
    return RateLimiter(clock=fake_time.monotonic, sleep=fake_time.sleep)


def test_no_headers_yet_means_no_wait(limiter, fake_time):
    assert limiter.delay() == 0.0
    assert fake_time.sleeps == []


def test_fresh_window_adds_no_wait(limiter, fake_time):
    limiter.update(headers("600.0", "0", "600"))
    assert limiter.delay() == 0.0
    limiter.update(headers("599.0", "1", "600"))
    assert limiter.delay() == 0.0
    assert fake_time.sleeps == []


def test_waits_until_reset_when_nothing_remains(limiter, fake_time):
    limiter.update(headers("0", "600", "42"))
    assert limiter.delay() == pytest.approx(42.0)
    assert fake_time.sleeps == [pytest.approx(42.0)]


def test_more_than_half_the_allowance_left_is_still_a_burst(limiter, fake_time):
    # prawcore alone would wait 450 - (600 - 400) = 250 s (capped 10) here.
    limiter.update(headers("400.0", "200", "450"))
    assert limiter.delay() == 0.0


def test_paces_when_ahead_of_the_even_rate(limiter, fake_time):
    # 400 used with 500 s still to go: prawcore's pace is 500 - (600 - 400) = 300 s, capped at 10.
    limiter.update(headers("200.0", "400", "500"))
    assert limiter.delay() == pytest.approx(10.0)
    assert fake_time.sleeps == [pytest.approx(10.0)]


def test_pacing_below_the_cap_follows_prawcore(limiter, fake_time):
    # 200 left, 400 used, 205 s to reset: an even spread leaves 600 - 400 = 200 s, so wait 5 s.
    limiter.update(headers("200", "400", "205"))
    assert limiter.delay() == pytest.approx(5.0)


def test_on_pace_means_no_wait(limiter, fake_time):
    limiter.update(headers("100", "500", "100"))
    assert limiter.delay() == 0.0


def test_wait_counts_from_when_the_headers_arrived(limiter, fake_time):
    limiter.update(headers("0", "600", "30"))
    fake_time.now += 25  # time spent elsewhere counts towards the reset
    assert limiter.delay() == pytest.approx(5.0)


@pytest.mark.parametrize(
    "bad",
    [
        {},
        headers("lots", "1", "600"),
        headers("1", "1", "soon"),
        headers("nan", "1", "600"),
        {"x-ratelimit-remaining": "5"},  # no reset
    ],
)
def test_missing_or_garbage_headers_change_nothing(limiter, fake_time, bad):
    limiter.update(bad)
    assert limiter.delay() == 0.0
    assert limiter.remaining is None


def test_garbage_used_falls_back_to_window_minus_remaining(limiter):
    limiter.update(headers("599.0", "n/a", "600"))
    assert limiter.used == pytest.approx(1.0)


def test_last_request_of_a_window_is_reserved_once(limiter, fake_time):
    """Two callers that both saw remaining == 1: the second waits for the reset."""
    limiter.update(headers("1.0", "599", "20"))
    first = limiter.delay()
    second = limiter.delay()
    assert first == pytest.approx(10.0)  # paced (capped), not yet the reset
    assert second == pytest.approx(20.0 - first)


def test_concurrent_delays_are_consistent(fake_time):
    lock = threading.Lock()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        with lock:
            waits.append(seconds)

    limiter = RateLimiter(clock=lambda: 0.0, sleep=sleep)
    limiter.update(headers("3.0", "597", "60"))
    threads = [threading.Thread(target=limiter.delay) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Three requests fit the window (pace wait only); the other five wait for the reset.
    assert sum(1 for w in waits if w == pytest.approx(60.0)) == 5
    assert limiter.remaining == pytest.approx(-5.0)
