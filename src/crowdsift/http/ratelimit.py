"""Stay under a server's rate limit by reading its ``x-ratelimit-*`` headers, as prawcore does.

Reddit answers every OAuth request with three headers: ``x-ratelimit-remaining`` (requests left
in the window, often a float such as ``"599.0"``), ``x-ratelimit-used`` and
``x-ratelimit-reset`` (seconds until the window restarts). From them the limiter works out
when the next request may go:

* remaining is 0 → wait until the window resets;
* fresh headers (at least ``burst_fraction`` of the window's allowance left) → no wait at all:
  a fetch of a few dozen requests should not crawl at one request per second while hundreds
  remain;
* in between → prawcore's pacing: slow down by how far we are ahead of an even spread over
  the window, never pausing more than ``max_pace`` seconds at a time.

Several fetcher threads share one limiter, so its state sits behind a lock and each
``delay()`` reserves one request from ``remaining``: four threads cannot all spend the last
request of a window because each saw ``remaining == 1``.

Arctic Shift sends the window's end without ``x-ratelimit-remaining``: ``x-ratelimit-reset``
(seconds left in its 60 s window) and ``x-ratelimit-reset-at`` (epoch **milliseconds**). Such
headers say nothing about how many requests are left, so they never slow a request down by
themselves; the limiter only remembers when the window ends, and ``back_off`` (called when the
server says "slow down") holds every request until then. A reset is never believed beyond one
window (``window_size``): a timestamp misread as seconds cannot stall a fetch for decades.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping

from crowdsift.core.log import get_logger

log = get_logger(__name__)

DEFAULT_WINDOW = 600.0
"""Reddit's rate-limit window in seconds (600 requests per 600 s for OAuth clients)."""
_EPOCH_MS_FROM = 100_000_000_000.0
"""A ``reset-at`` at least this large is epoch milliseconds (as seconds it is the year 5138)."""


def _number(headers: Mapping[str, str], name: str) -> float | None:
    """A header as a finite float, or None when it is missing or garbage (never raise)."""
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except (ValueError, AttributeError):
        return None
    return value if math.isfinite(value) else None


class RateLimiter:
    """Decides how long to wait before each request from the last ``x-ratelimit-*`` headers."""

    def __init__(
        self,
        *,
        window_size: float = DEFAULT_WINDOW,
        max_pace: float = 10.0,
        burst_fraction: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` measures waits; ``wall_clock`` (epoch s) reads ``x-ratelimit-reset-at``."""
        self.window_size = window_size
        self._wall_clock = wall_clock
        self.max_pace = max_pace
        self.burst_fraction = burst_fraction
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self.remaining: float | None = None
        self.used: float | None = None
        self.reset_at: float | None = None
        self.next_request_at: float | None = None

    def delay(self) -> float:
        """Sleep until the next request may go; return the seconds slept (0.0 when none).

        The wait is decided under the lock (and one request reserved), the sleep itself
        happens outside it so other threads can read their own wait meanwhile.
        """
        with self._lock:
            now = self._clock()
            target = self.next_request_at
            if self.remaining is not None:
                if self.remaining <= 0 and self.reset_at is not None:
                    # Nothing left in this window (maybe spent by requests still in flight).
                    target = max(target if target is not None else now, self.reset_at)
                self.remaining -= 1
            wait = 0.0 if target is None else max(target - now, 0.0)
        if wait > 0:
            log.debug("rate_limit_wait", seconds=round(wait, 3), remaining=self.remaining)
            self._sleep(wait)
        return wait

    def update(self, headers: Mapping[str, str]) -> None:
        """Take in a response's headers; responses without usable ones change nothing.

        ``delay()`` already counted the request against ``remaining``, so a response without
        headers (an error page, a token request) needs no further bookkeeping.
        """
        remaining = _number(headers, "x-ratelimit-remaining")
        seconds_to_reset = self.seconds_to_reset(headers)
        if seconds_to_reset is None:
            return
        if remaining is None:  # the window's end only (Arctic Shift): remember it, no pacing
            with self._lock:
                self.reset_at = self._clock() + seconds_to_reset
            return
        used = _number(headers, "x-ratelimit-used")
        if used is None or used < 0:
            used = max(self.window_size - remaining, 0.0)
        with self._lock:
            now = self._clock()
            self.remaining = max(remaining, 0.0)
            self.used = used
            self.reset_at = now + seconds_to_reset
            self.next_request_at = now + self._wait_for(self.remaining, used, seconds_to_reset)

    def seconds_to_reset(self, headers: Mapping[str, str]) -> float | None:
        """Seconds until the window resets, from ``x-ratelimit-reset`` (seconds left) or else
        ``x-ratelimit-reset-at`` (epoch milliseconds, or seconds when small); never more than
        one window, never negative; None without a usable header."""
        seconds = _number(headers, "x-ratelimit-reset")
        if seconds is None:
            at = _number(headers, "x-ratelimit-reset-at")
            if at is None:
                return None
            at = at / 1000.0 if at >= _EPOCH_MS_FROM else at
            seconds = at - self._wall_clock()
        return min(max(seconds, 0.0), self.window_size)

    def back_off(self, fallback: float, *, cap: float | None = None) -> float:
        """The server asked us to slow down: hold every request until the window resets (when
        the headers told us when), else for ``fallback`` seconds, never longer than ``cap``.
        Returns the hold in seconds; the next ``delay()`` of any thread serves it."""
        with self._lock:
            now = self._clock()
            reset = self.reset_at if self.reset_at is not None and self.reset_at > now else None
            until = reset if reset is not None else now + max(fallback, 0.0)
            if cap is not None:
                until = min(until, now + max(cap, 0.0))
            if self.next_request_at is None or until > self.next_request_at:
                self.next_request_at = until
            hold = self.next_request_at - now
        log.info("rate_limit_back_off", seconds=round(hold, 3), from_headers=reset is not None)
        return hold

    def _wait_for(self, remaining: float, used: float, seconds_to_reset: float) -> float:
        """Seconds from now until the next request (prawcore's pacing, capped by max_pace)."""
        if remaining <= 0:
            return seconds_to_reset
        if remaining >= self.burst_fraction * (remaining + used):
            return 0.0
        # Time the window would still need if the used requests had been spread evenly; if the
        # reset is further away than that, we are ahead of the pace and slow down.
        even_pace_left = self.window_size - self.window_size / (remaining + used) * used
        pace = min(max(seconds_to_reset - even_pace_left, 0.0), self.max_pace)
        return min(pace, seconds_to_reset)
