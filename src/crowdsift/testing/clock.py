"""A fake monotonic clock whose ``sleep`` moves time instead of waiting, for retry and
rate-limit tests that must not take real seconds."""

from __future__ import annotations


class Sleeps:
    """Records every sleep and advances ``clock()`` by it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.calls: list[float] = []
        self.now = start

    def sleep(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now
