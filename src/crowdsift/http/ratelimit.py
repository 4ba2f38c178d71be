"""Stay under Reddit's rate limit by reading the ``x-ratelimit-*`` headers, like prawcore does.

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
    ) -> None:
        self.window_size = window_size
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
        seconds_to_reset = _number(headers, "x-ratelimit-reset")
        if remaining is None or seconds_to_reset is None:
            return
        seconds_to_reset = max(seconds_to_reset, 0.0)
        used = _number(headers, "x-ratelimit-used")
        if used is None or used < 0:
            used = max(self.window_size - remaining, 0.0)
        with self._lock:
            now = self._clock()
            self.remaining = max(remaining, 0.0)
            self.used = used
            self.reset_at = now + seconds_to_reset
            self.next_request_at = now + self._wait_for(self.remaining, used, seconds_to_reset)

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
