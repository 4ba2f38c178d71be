"""Writing rows to the archive: batches of upserts, one transaction each, and checkpoints.

Each batch is upserted with ``executemany`` and committed on its own, so an interrupted
import keeps every committed batch and nothing half-written. Checkpoints (copying the WAL
into the database, then fsync) run on a background thread: a checkpoint is one long C call
that releases the GIL, so it overlaps the importer's JSON parsing.

Measured on 50k records, for the record: a per-row FTS insert trigger (1.9 s of SQLite time
vs 1.1 s set-based, see ``db``) and inline autocheckpoints (3.3 s vs 2.5 s overall) were the
two big costs. Moving the inserts themselves to a thread does not pay: ``executemany`` takes
the GIL back after every row and starves beside a busy parser, and sending a batch as one
JSON array for ``json_each`` costs SQLite more JSON parsing than the thread saves. What does
pay is the tail of each batch: indexing its new posts (one ``INSERT … SELECT`` into FTS5)
and the commit are two C calls that release the GIL, so they run on a finisher thread while
the next batch is parsed; the connection is only ever used by one thread at a time. Parsing,
the larger share, moves to worker processes for big files instead (``parallel``): they hand
back rows already bound (``add_bound``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive import db
from crowdsift.sources.archive.parse import CommentRow, PostRow, Record
from crowdsift.sources.archive.scrub import BoundRow, row_values

log = get_logger(__name__)

_UPSERT_POSTS = """
INSERT INTO posts (id, subreddit, author, title, selftext, score, num_comments,
                   created_utc, retrieved, raw, author_hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    subreddit = excluded.subreddit, author = excluded.author, title = excluded.title,
    selftext = excluded.selftext, score = excluded.score, num_comments = excluded.num_comments,
    created_utc = excluded.created_utc, retrieved = excluded.retrieved, raw = excluded.raw,
    author_hash = excluded.author_hash
WHERE excluded.retrieved >= posts.retrieved AND excluded.raw IS NOT posts.raw
"""
_UPSERT_COMMENTS = """
INSERT INTO comments (id, link_id, parent_id, subreddit, author, body, score,
                      created_utc, retrieved, raw, author_hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    link_id = excluded.link_id, parent_id = excluded.parent_id,
    subreddit = excluded.subreddit, author = excluded.author, body = excluded.body,
    score = excluded.score, created_utc = excluded.created_utc,
    retrieved = excluded.retrieved, raw = excluded.raw, author_hash = excluded.author_hash
WHERE excluded.retrieved >= comments.retrieved AND excluded.raw IS NOT comments.raw
"""
_RETRIEVED_AT = -3
"""Where ``retrieved`` sits in a bound row: before ``raw`` and ``author_hash``."""


class BatchWriter:
    """Collects rows and upserts them one transaction per batch.

    Rows are keyed by id, so a record repeated within one batch is written once (the newer
    retrieval wins, ties go to the later line): a post inserted in this batch has no FTS
    entry yet, so the update trigger could not replace it. Usernames are replaced by their
    salted hashes on the way in (``authors``; see ``crowdsift.sources.archive.scrub``), so the same
    file imported twice under one salt writes identical rows and changes nothing.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        batch_size: int,
        authors: AuthorPolicy,
        max_chars: int = 32 << 20,
        checkpointer: BackgroundCheckpointer | None = None,
    ) -> None:
        self.conn = conn
        self.authors = authors
        self.batch_size = max(1, batch_size)
        self.max_chars = max_chars
        self.checkpointer = checkpointer
        self.posts: dict[str, PostRow | BoundRow] = {}
        self.comments: dict[str, CommentRow | BoundRow] = {}
        self.chars = 0
        self._finisher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive-commit")
        self._finishing: Future[None] | None = None

    def add(self, record: Record) -> bool:
        """Queue a row; True when the batch is full and should be flushed."""
        rows: dict[str, Any] = self.posts if type(record) is PostRow else self.comments
        previous = rows.get(record.id)
        if previous is None or record.retrieved >= previous.retrieved:
            rows[record.id] = record
        self.chars += len(record.raw)
        return len(self.posts) + len(self.comments) >= self.batch_size or (
            self.chars >= self.max_chars
        )

    def add_bound(self, values: BoundRow, post: int, size: int) -> bool:
        """``add`` for a row already turned into its upsert parameters (``row_values``, by a
        parsing worker, see ``crowdsift.sources.archive.parallel``): ``post`` says which table,
        ``size`` is the length of its raw JSON before scrubbing."""
        rows: dict[str, Any] = self.posts if post else self.comments
        key = values[0]
        previous = rows.get(key)
        if previous is None or values[_RETRIEVED_AT] >= previous[_RETRIEVED_AT]:
            rows[key] = values
        self.chars += size
        return len(self.posts) + len(self.comments) >= self.batch_size or (
            self.chars >= self.max_chars
        )

    def flush(self) -> None:
        """Upsert the pending rows in one transaction; new posts are indexed in it too.

        The upserts run here; indexing the new posts and the commit (single long C calls
        that release the GIL) finish on the finisher thread while the caller parses the
        next batch. ``wait`` (or the next ``flush``, or leaving the ``with``) joins them.
        """
        if not self.posts and not self.comments:
            return
        self.wait()  # the previous batch is committed: the connection is this thread's again
        conn, authors = self.conn, self.authors
        conn.execute("BEGIN IMMEDIATE")
        try:
            last_rowid = None
            if self.posts:
                last_rowid = db.max_post_rowid(conn)
                conn.executemany(_UPSERT_POSTS, _bindings(self.posts.values(), authors))
            if self.comments:
                conn.executemany(_UPSERT_COMMENTS, _bindings(self.comments.values(), authors))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.posts.clear()
        self.comments.clear()
        self.chars = 0
        self._finishing = self._finisher.submit(self._finish, last_rowid)

    def wait(self) -> None:
        """Block until the last flushed batch is committed; raise what committing it raised."""
        finishing, self._finishing = self._finishing, None
        if finishing is not None:
            finishing.result()

    def _finish(self, last_rowid: int | None) -> None:
        """Index the batch's new posts and commit it (on the finisher thread)."""
        conn = self.conn
        try:
            if last_rowid is not None:
                db.index_new_posts(conn, last_rowid)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if self.checkpointer is not None:
            self.checkpointer.poke()

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        """Join the last commit, then stop the finisher. A commit that failed while another
        error is already on its way is logged, not raised over it."""
        try:
            self.wait()
        except Exception as commit_error:
            if exc is None:
                raise
            log.warning(
                "archive_commit_failed", error=f"{type(commit_error).__name__}: {commit_error}"
            )
        finally:
            self._finisher.shutdown(wait=True)


def _bindings(rows: Iterable[Record | BoundRow], authors: AuthorPolicy) -> list[BoundRow]:
    """The upsert parameters of a batch: rows as parsed are bound here (``row_values``),
    rows a parsing worker bound already (plain tuples) are taken as they are."""
    return [row if type(row) is tuple else row_values(cast(Record, row), authors) for row in rows]


class BackgroundCheckpointer:
    """Copies the WAL into the database on its own thread and connection during an import.

    Durability is unchanged (WAL, synchronous=NORMAL); only the thread doing the work moves.
    At most one checkpoint is in flight: ``poke`` waits for the previous one, which bounds
    the WAL to about two batches. Use as a context manager around the writes.
    """

    def __init__(self, path: Path, writer: sqlite3.Connection) -> None:
        self._writer = writer
        self._conn = sqlite3.connect(
            path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="archive-checkpoint", daemon=True)

    def __enter__(self) -> BackgroundCheckpointer:
        self._writer.execute("PRAGMA wal_autocheckpoint = 0")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._idle.wait()
        self._stopping = True
        self._wake.set()
        self._thread.join()
        self._conn.close()
        self._writer.execute("PRAGMA wal_autocheckpoint = 1000")

    def poke(self) -> None:
        """Start a checkpoint of everything committed so far (after the previous one ends)."""
        self._idle.wait()
        self._idle.clear()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            try:
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:  # the importer's final checkpoint catches up
                log.debug("archive_checkpoint_failed", error=str(exc))
            finally:
                self._idle.set()
