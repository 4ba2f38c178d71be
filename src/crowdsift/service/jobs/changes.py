"""Waking a job's event stream the moment this process writes to the job, instead of on its
next poll.

The job store is the one channel between whoever runs a job and the streams that follow it,
and a stream polls it (``service.api.sse``). With the embedded pool the writer is this very
process, so the store announces each write here and a waiting stream reads at once: a served
answer arrived up to one poll interval (0.25 s) after it was done, about 0.2 s a question in
the ask benchmark. A Celery worker writes from another process, never calls ``notify`` here,
and its streams keep polling at the same interval as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class ChangeSignal:
    """A version number that grows with every job write, and waiters woken when it does.

    Thread-safe on the writing side (job threads call ``notify``); waiting is async, on any
    event loop: a waiter registers its loop and is woken through ``call_soon_threadsafe``.
    """

    def __init__(self) -> None:
        self._version = 0
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    @property
    def version(self) -> int:
        """Read before reading the store: ``wait(version)`` then returns at once if a write
        came in between, so no write is slept through."""
        return self._version

    def notify(self) -> None:
        """A job or its events changed: wake every waiter."""
        with self._lock:
            self._version += 1
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody to wake
                loop.call_soon_threadsafe(event.set)

    async def wait(self, seen: int, timeout: float) -> bool:
        """Until a write after version ``seen``, at most ``timeout`` seconds; True if woken."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._lock:
            if self._version != seen:
                return True
            self._waiters.add(entry)
        try:
            await asyncio.wait_for(event.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock:
                self._waiters.discard(entry)
