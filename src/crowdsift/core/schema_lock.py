"""One process at a time creates or migrates the schema of a SQLite file in the data directory.

Two ``crowdsift`` processes started together on a fresh data directory both find a table
missing and both create it; SQLite then fails the second ("table comments already exists").
``schema_lock(database)`` holds an exclusive OS lock (``fcntl.flock``) on ``<database>.lock``
beside the file while its schema is made: the second process waits, then finds the tables
there (``CREATE … IF NOT EXISTS``, ``checkfirst``) and creates nothing.

The lock belongs to an open file, so the OS releases it when its holder exits, crashed or
not: a lock file left behind is harmless and is never deleted (deleting it while another
process waits would let a third take a lock on a new file). Threads of one process open their
own file and so wait for each other too. Where ``fcntl`` does not exist (Windows) the lock is
a no-op and the ``IF NOT EXISTS`` statements alone keep creation idempotent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from crowdsift.core.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_SECONDS = 120.0
"""How long a process waits for another one to finish creating a schema (building the demo
archive on two slow cores takes tens of seconds) before it gives up with a message."""
POLL_SECONDS = 0.05


class SchemaLockTimeoutError(StoreError):
    """Another process held a schema lock longer than the wait allows."""


def lock_path(database: Path) -> Path:
    """``<database>.lock``, beside the file it guards."""
    return database.with_name(f"{database.name}.lock")


@contextmanager
def schema_lock(
    database: Path,
    *,
    timeout: float = LOCK_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold the exclusive lock of ``database``'s schema for the ``with`` block.

    Raises ``SchemaLockTimeoutError`` (naming the lock file and what to do) when another holder
    keeps it past ``timeout`` seconds; ``clock`` and ``sleep`` are injected for tests.
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    path = lock_path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = clock() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if clock() >= deadline:
                    raise SchemaLockTimeoutError(
                        f"another crowdsift process has been setting up {database} for more "
                        f"than {timeout:.0f} s (it holds {path}); wait for it to finish, or "
                        "stop it and run again"
                    ) from None
                sleep(POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
