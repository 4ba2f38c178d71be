"""The archive's SQLite schema, how to open it for writing or reading, and its migrations.

An archive is one SQLite file: ``posts`` and ``comments`` keep the searchable columns plus the
record's raw JSON, ``posts_fts`` is an FTS5 index over the posts (external content), and
``meta`` holds key/value facts such as the demo archive's content hash.

Keeping the index in step: updates and deletes of posts go through triggers; *new* posts are
indexed by ``index_new_posts`` in the same transaction that inserted them, one set-based
statement per batch. A per-row insert trigger would be correct too, but FTS5 flushes its
pending terms at every statement end, and ``executemany`` is one statement per row
(measured: 50k records, 1.9 s of SQLite time with the trigger vs 1.1 s without). Every
writer of ``posts`` (only ``writer.BatchWriter``) must call ``index_new_posts``.

``PRAGMA application_id`` marks the file as ours, so opening some other SQLite database (the
comment store, a browser history) fails with a clear message instead of being written into.
``PRAGMA user_version`` is the schema version; ``MIGRATIONS[i]`` upgrades version ``i`` to
``i + 1`` inside one transaction, so a crash mid-migration leaves the old version intact.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from crowdsift.core.errors import ArchiveError

APPLICATION_ID = 0x63736674  # "csft"
HINT = (
    "run `crowdsift archive import FILE... --archive PATH` to build one "
    "(or drop --archive to use the bundled demo archive)"
)

_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE posts (
    id           TEXT NOT NULL UNIQUE,
    subreddit    TEXT NOT NULL,
    author       TEXT,
    title        TEXT NOT NULL,
    selftext     TEXT NOT NULL,
    score        INTEGER NOT NULL,
    num_comments INTEGER NOT NULL,
    created_utc  INTEGER NOT NULL,
    retrieved    INTEGER NOT NULL,
    raw          TEXT NOT NULL
);
CREATE INDEX posts_subreddit_created ON posts (subreddit, created_utc);
CREATE TABLE comments (
    id           TEXT NOT NULL UNIQUE,
    link_id      TEXT NOT NULL,
    parent_id    TEXT NOT NULL,
    subreddit    TEXT NOT NULL,
    author       TEXT,
    body         TEXT NOT NULL,
    score        INTEGER NOT NULL,
    created_utc  INTEGER NOT NULL,
    retrieved    INTEGER NOT NULL,
    raw          TEXT NOT NULL
);
CREATE INDEX comments_link ON comments (link_id, parent_id);
CREATE VIRTUAL TABLE posts_fts USING fts5 (
    title, selftext, subreddit,
    content = 'posts', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER posts_fts_delete AFTER DELETE ON posts BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, title, selftext, subreddit)
    VALUES ('delete', old.rowid, old.title, old.selftext, old.subreddit);
END;
CREATE TRIGGER posts_fts_update AFTER UPDATE ON posts
WHEN old.title IS NOT new.title OR old.selftext IS NOT new.selftext
     OR old.subreddit IS NOT new.subreddit
BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, title, selftext, subreddit)
    VALUES ('delete', old.rowid, old.title, old.selftext, old.subreddit);
    INSERT INTO posts_fts (rowid, title, selftext, subreddit)
    VALUES (new.rowid, new.title, new.selftext, new.subreddit);
END;
"""

# Version 2: the salted author pseudonym (``crowdsift.core.privacy``); ``author`` stays for archives
# whose owner opted in to keeping usernames. Rows of older archives are hashed the next time
# the archive is opened for writing (``crowdsift.sources.archive.scrub``).
_V2 = """
ALTER TABLE posts ADD COLUMN author_hash TEXT;
ALTER TABLE comments ADD COLUMN author_hash TEXT;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)
MIN_READABLE_VERSION = 1
"""Readers use only the raw JSON and the search columns, which version 1 already had."""

_REDDIT_EPOCH = 1134028003  # Reddit's "hot" ranking counts seconds from this moment.


def hot_rank(score: int | None, created_utc: int | None) -> float:
    """Reddit's published ``hot`` formula: log10 of votes plus 1 per 12.5 hours of age."""
    s = int(score or 0)
    order = math.log10(max(abs(s), 1))
    sign = (s > 0) - (s < 0)
    return round(sign * order + (int(created_utc or 0) - _REDDIT_EPOCH) / 45000, 7)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating and migrating if needed) an archive for writing.

    Autocommit mode: the importer opens its own transactions, one per batch, so an interrupted
    import keeps every batch it committed and nothing half-written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot open archive {path}: {exc}") from exc
    try:
        _check_identity(conn, path, writable=True)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
        migrate(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise ArchiveError(f"cannot use {path} as an archive: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open an existing archive for searching; never creates or modifies the file.

    ``check_same_thread=False`` only so that ``close()`` may run on another thread; each
    connection is still used by one thread at a time (see ArchiveSource).
    """
    if not path.is_file():
        raise ArchiveError(f"archive {path} does not exist; {HINT}")
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30.0, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot open archive {path}: {exc}; {HINT}") from exc
    try:
        _check_identity(conn, path, writable=False)
        version = _user_version(conn)
        if not MIN_READABLE_VERSION <= version <= SCHEMA_VERSION:
            raise ArchiveError(
                f"archive {path} has schema version {version}, this crowdsift reads "
                f"{MIN_READABLE_VERSION} to {SCHEMA_VERSION}; re-run `crowdsift archive import` "
                "on it to upgrade, or upgrade crowdsift"
            )
        conn.create_function("crowdsift_hot", 2, hot_rank, deterministic=True)
    except sqlite3.Error as exc:
        conn.close()
        raise ArchiveError(f"{path} is not a readable archive ({exc}); {HINT}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema up to SCHEMA_VERSION, one transaction per version step."""
    version = _user_version(conn)
    if version > SCHEMA_VERSION:
        raise ArchiveError(
            f"archive {path} has schema version {version}, newer than this crowdsift "
            f"({SCHEMA_VERSION}); upgrade crowdsift to use it"
        )
    for step in range(version, SCHEMA_VERSION):
        conn.executescript(
            f"BEGIN IMMEDIATE;\n{MIGRATIONS[step]}\nPRAGMA user_version = {step + 1};\nCOMMIT;"
        )


def max_post_rowid(conn: sqlite3.Connection) -> int:
    """The largest rowid in ``posts``: every row inserted after this call gets a larger one."""
    return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM posts").fetchone()[0])


def index_new_posts(conn: sqlite3.Connection, after_rowid: int) -> None:
    """Add posts inserted since ``max_post_rowid`` returned ``after_rowid`` to the FTS index.

    Must run in the transaction that inserted them, so table and index commit together.
    Rows updated in place keep their rowid (<= after_rowid) and are re-indexed by trigger.
    """
    conn.execute(
        "INSERT INTO posts_fts (rowid, title, selftext, subreddit) "
        "SELECT rowid, title, selftext, subreddit FROM posts WHERE rowid > ?",
        (after_rowid,),
    )


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _check_identity(conn: sqlite3.Connection, path: Path, *, writable: bool) -> None:
    """Refuse any SQLite file that is not ours; claim a brand-new empty one when writing."""
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if app_id == APPLICATION_ID:
        return
    has_tables = conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] > 0
    if writable and app_id == 0 and not has_tables:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return
    raise ArchiveError(f"{path} is a SQLite database but not a crowdsift archive; {HINT}")
