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

The full-text indexes are contentless (``db``): the text of a batch's rows is staged in two
temporary tables with the batch, and the finisher indexes the rows that are new (rowid past
the batch's start) from there; rows updated in place are re-indexed by trigger. Each batch
commit writes one FTS5 segment per index, and merging segments is most of the index's cost,
so batches are large (measured: 20,000-record batches index in half the time of 5,000).
"""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive import db
from crowdsift.sources.archive.parse import PostRow, Record
from crowdsift.sources.archive.scrub import BoundRow, row_values

log = get_logger(__name__)

_UPSERT_POSTS = """
INSERT INTO posts (id, subreddit, author, title, score, num_comments,
                   created_utc, retrieved, doc, author_hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    subreddit = excluded.subreddit, author = excluded.author, title = excluded.title,
    score = excluded.score, num_comments = excluded.num_comments,
    created_utc = excluded.created_utc, retrieved = excluded.retrieved, doc = excluded.doc,
    author_hash = excluded.author_hash
WHERE excluded.retrieved >= posts.retrieved AND excluded.doc IS NOT posts.doc
"""
_UPSERT_COMMENTS = """
INSERT INTO comments (id, link_id, parent_id, subreddit, author, score,
                      created_utc, retrieved, doc, author_hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    link_id = excluded.link_id, parent_id = excluded.parent_id,
    subreddit = excluded.subreddit, author = excluded.author,
    score = excluded.score, created_utc = excluded.created_utc,
    retrieved = excluded.retrieved, doc = excluded.doc, author_hash = excluded.author_hash
WHERE excluded.retrieved >= comments.retrieved AND excluded.doc IS NOT comments.doc
"""
_STAGE = """
CREATE TEMP TABLE IF NOT EXISTS stage_posts (id TEXT PRIMARY KEY, text TEXT) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS stage_comments (id TEXT PRIMARY KEY, text TEXT) WITHOUT ROWID;
"""
_INDEX_NEW_POSTS = """
INSERT INTO posts_fts (rowid, title, selftext, subreddit)
SELECT p.rowid, p.title, s.text, p.subreddit
FROM temp.stage_posts AS s JOIN posts AS p ON p.id = s.id WHERE p.rowid > ?
"""
_INDEX_NEW_COMMENTS = """
INSERT INTO comments_fts (rowid, body, subreddit)
SELECT c.rowid, s.text, c.subreddit
FROM temp.stage_comments AS s JOIN comments AS c ON c.id = s.id WHERE c.rowid > ?
"""
_RETRIEVED_AT = 7
"""Where ``retrieved`` sits in a bound row (of either table)."""
_COLUMNS = 10
"""A bound row's table columns; the indexed text follows them."""


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
        max_chars: int = 64 << 20,
        checkpointer: BackgroundCheckpointer | None = None,
    ) -> None:
        self.conn = conn
        self.authors = authors
        self.codec = db.codec_of(conn)
        self.batch_size = max(1, batch_size)
        self.max_chars = max_chars
        self.checkpointer = checkpointer
        self.posts: dict[str, BoundRow] = {}
        self.comments: dict[str, BoundRow] = {}
        self.chars = 0
        conn.executescript(_STAGE)
        self._finisher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive-commit")
        self._finishing: Future[None] | None = None

    def add(self, record: Record, line: str | bytes = "") -> bool:
        """Queue a row (``line``: its JSON text, if at hand; see ``row_values``); True when
        the batch is full and should be flushed."""
        values = row_values(record, self.authors, self.codec, line)
        return self.add_bound(values, type(record) is PostRow, len(line) or 1000)

    def add_bound(self, values: BoundRow, post: int, size: int) -> bool:
        """``add`` for a row already turned into its parameters (``row_values``, by a
        parsing worker, see ``crowdsift.sources.archive.parallel``): ``post`` says which table,
        ``size`` is the length of its JSON text."""
        rows = self.posts if post else self.comments
        key = values[0]
        previous = rows.get(key)
        if previous is None or values[_RETRIEVED_AT] >= previous[_RETRIEVED_AT]:
            rows[key] = values
        self.chars += size
        return len(self.posts) + len(self.comments) >= self.batch_size or (
            self.chars >= self.max_chars
        )

    def flush(self) -> None:
        """Upsert the pending rows in one transaction; new rows are indexed in it too.

        The upserts and the staging of the text run here; indexing the new rows and the
        commit (single long C calls that release the GIL) finish on the finisher thread
        while the caller parses the next batch. ``wait`` (or the next ``flush``, or leaving
        the ``with``) joins them.
        """
        if not self.posts and not self.comments:
            return
        self.wait()  # the previous batch is committed: the connection is this thread's again
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            after = (_upsert(conn, "posts", self.posts), _upsert(conn, "comments", self.comments))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.posts.clear()
        self.comments.clear()
        self.chars = 0
        self._finishing = self._finisher.submit(self._finish, *after)

    def wait(self) -> None:
        """Block until the last flushed batch is committed; raise what committing it raised."""
        finishing, self._finishing = self._finishing, None
        if finishing is not None:
            finishing.result()

    def _finish(self, posts_after: int | None, comments_after: int | None) -> None:
        """Index the batch's new rows and commit it (on the finisher thread)."""
        conn = self.conn
        try:
            if posts_after is not None:
                conn.execute(_INDEX_NEW_POSTS, (posts_after,))
                conn.execute("DELETE FROM temp.stage_posts")
            if comments_after is not None:
                conn.execute(_INDEX_NEW_COMMENTS, (comments_after,))
                conn.execute("DELETE FROM temp.stage_comments")
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


def _upsert(conn: sqlite3.Connection, table: str, rows: dict[str, BoundRow]) -> int | None:
    """Upsert ``rows`` into ``table`` and stage their text; the largest rowid before them
    (rows past it are new and need indexing), or None when there were no rows."""
    if not rows:
        return None
    after = int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0])  # noqa: S608
    upsert = _UPSERT_POSTS if table == "posts" else _UPSERT_COMMENTS
    conn.executemany(upsert, [row[:_COLUMNS] for row in rows.values()])
    conn.executemany(
        f"INSERT INTO temp.stage_{table} (id, text) VALUES (?, ?)",  # noqa: S608
        [(row[0], row[_COLUMNS]) for row in rows.values()],
    )
    return after


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
