"""Embeddings kept on disk between runs, so a new process does not embed the same text again.

Every ``crowdsift ask`` is a new process, and part of its work repeats from one question to
the next: the subreddit profiles the formulation compares the question with (eleven texts of the
model's full 256 tokens, about 0.45 s on 2 cores, on every ask), and the posts and claims of
an archive a person keeps asking about. ``DiskVectorCache`` stores each vector under a key
of the model's identity and the text (SHA-256), in one SQLite file in the data directory.

It is a cache, never a source of truth: entries of another model never match (the identity
is the exported graph's content hash), the oldest entries go first past ``max_rows``, and any
database error turns it off for the rest of the process with one warning — a run never fails
or waits because of it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from crowdsift.core.log import get_logger
from crowdsift.core.schema_lock import SchemaLockTimeoutError, schema_lock

log = get_logger(__name__)

Vector = npt.NDArray[np.float32]
VECTOR_CACHE_FILE = "vectors.sqlite"
MAX_ROWS = 20_000
"""About 32 MB of 384-dimension vectors: the profiles and the evidence of many questions."""
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors "
    "(id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, vector BLOB NOT NULL)"
)


def vector_key(identity: str, text: str) -> bytes:
    """The entry of ``text`` embedded by the model ``identity``."""
    return hashlib.sha256(f"{identity}\0{text}".encode("utf-8", "surrogatepass")).digest()[:20]


class DiskVectorCache:
    """Vectors by key in ``path`` (SQLite, WAL), shared by the threads of one process and by
    processes using the same data directory."""

    def __init__(self, path: Path, *, max_rows: int = MAX_ROWS, timeout: float = 2.0) -> None:
        self.path = path
        self._max_rows = max_rows
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, Vector]:
        """The stored vectors of ``keys`` (those it has)."""
        if not keys:
            return {}
        found: dict[bytes, Vector] = {}

        def read(conn: sqlite3.Connection) -> None:
            for start in range(0, len(keys), 500):  # SQLite's bound on parameters
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})",  # noqa: S608
                    chunk,
                )
                for key, blob in rows:
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float32).copy()

        self._use(read)
        return found

    def put_many(self, entries: Mapping[bytes, Vector]) -> None:
        """Store ``entries``; past ``max_rows`` the oldest entries are dropped."""
        if not entries:
            return

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)",
                    [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in entries.items()],
                )
                conn.execute(
                    "DELETE FROM vectors WHERE id <= (SELECT max(id) FROM vectors) - ?",
                    (self._max_rows,),
                )

        self._use(write)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _use(self, action: Callable[[sqlite3.Connection], None]) -> None:
        with self._lock:
            if self._broken:
                return
            try:
                if self._conn is None:
                    self._conn = self._open()
                action(self._conn)
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):  # another process is writing
                    log.debug("vector_cache_busy", path=str(self.path))
                    return
                self._turn_off(exc)
            except SchemaLockTimeoutError:  # another process is creating the file: next time
                log.debug("vector_cache_busy", path=str(self.path))
            except (sqlite3.Error, OSError) as exc:
                self._turn_off(exc)

    def _turn_off(self, exc: BaseException) -> None:
        """Stop using the file for this process, saying once why and what to do."""
        self._broken = True
        log.warning(
            "vector_cache_off",
            path=str(self.path),
            error=f"{type(exc).__name__}: {exc}",
            note="embeddings are computed as usual; delete the file if it is damaged",
        )

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self._timeout, check_same_thread=False)
        try:
            with schema_lock(self.path, timeout=self._timeout):  # a cache never waits long
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
        except (sqlite3.Error, SchemaLockTimeoutError):
            conn.close()
            raise
        return conn
