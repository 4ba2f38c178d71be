"""Blocking source calls, run concurrently from the Reddit branch's event loop, and abandonable.

Sources are synchronous and thread-safe (their transports hold the rate limiter), so the branch
runs them on its own bounded thread pool. The pool is private because the branch's timeout
must be able to walk away from calls still in flight: ``asyncio.run`` waits for the *default*
executor at shutdown, which would stretch a 120 s bound by a slow request's full latency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")


class SourceRunner:
    """At most ``concurrency`` blocking calls in flight; ``close`` never waits for them."""

    def __init__(self, concurrency: int) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=max(concurrency, 1), thread_name_prefix="crowdsift-reddit"
        )

    async def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(function, *args, **kwargs))

    def close(self) -> None:
        """Drop queued calls and return at once; running ones finish in the background."""
        self._executor.shutdown(wait=False, cancel_futures=True)
