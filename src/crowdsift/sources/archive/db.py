"""The archive's SQLite schema, how to open it for writing or reading, and old formats.

An archive is one SQLite file. ``posts`` and ``comments`` keep the columns searches filter,
sort and join on, plus ``doc``: the whole record, zstd-compressed with a dictionary trained
on the archive's own dumps (``codec``; the dictionaries live in ``zstd_dicts``). The text is
stored once, inside ``doc``: ``posts_fts`` (title, selftext) and ``comments_fts`` (body) are
*contentless* FTS5 indexes, so comments are searchable as well as posts. Comments, four in
five records, are indexed without word positions (``detail = column``: half the size and
40 % less indexing work, measured), so a phrase searched in comments matches its words
anywhere in one comment (``fts_query.build_terms``). ``meta`` holds
key/value facts such as the demo archive's content hash.

Keeping the indexes in step: a contentless index must be told the exact text a row was
indexed with to forget it. New rows are indexed by the writer from the text it staged
(``writer``, one set-based statement per batch: FTS5 flushes pending terms at every
statement end, and ``executemany`` is one statement per row). Updates and deletes go through
triggers that read the old text back out of ``doc`` with the ``crowdsift_text`` function,
which ``connect`` registers (so rows can only be changed through ``connect``'s connections).

``PRAGMA application_id`` marks the file as ours, so opening some other SQLite database (the
comment store, a browser history) fails with a clear message instead of being written into.
``PRAGMA user_version`` is the format: 3 is this one. Versions 1 and 2 stored every record
as uncompressed JSON and indexed posts only; opening one says to run
``crowdsift archive migrate`` (``migrate``), which rewrites it in this format.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import cast

from crowdsift.core.errors import ArchiveError
from crowdsift.sources.archive.codec import DocCodec, text_field
from crowdsift.sources.archive.codec import load as load_dicts
from crowdsift.sources.archive.codec import store as store_dict

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
"""The old formats, step by step (version ``i`` to ``i + 1``): what ``migrate`` reads, and
how tests build an archive as an older crowdsift wrote it."""


_V3 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE zstd_dicts (
    seq     INTEGER PRIMARY KEY,
    dict_id INTEGER NOT NULL UNIQUE,
    data    BLOB NOT NULL
);
CREATE TABLE posts (
    id           TEXT NOT NULL UNIQUE,
    subreddit    TEXT NOT NULL,
    author       TEXT,
    title        TEXT NOT NULL,
    score        INTEGER NOT NULL,
    num_comments INTEGER NOT NULL,
    created_utc  INTEGER NOT NULL,
    retrieved    INTEGER NOT NULL,
    doc          BLOB NOT NULL,
    author_hash  TEXT
);
CREATE INDEX posts_subreddit_created ON posts (subreddit, created_utc);
CREATE INDEX posts_subreddit_score ON posts (subreddit, score);
CREATE TABLE comments (
    id           TEXT NOT NULL UNIQUE,
    link_id      TEXT NOT NULL,
    parent_id    TEXT NOT NULL,
    subreddit    TEXT NOT NULL,
    author       TEXT,
    score        INTEGER NOT NULL,
    created_utc  INTEGER NOT NULL,
    retrieved    INTEGER NOT NULL,
    doc          BLOB NOT NULL,
    author_hash  TEXT
);
CREATE INDEX comments_link ON comments (link_id, parent_id);
CREATE VIRTUAL TABLE posts_fts USING fts5 (
    title, selftext, subreddit,
    content = '', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE comments_fts USING fts5 (
    body, subreddit,
    content = '', detail = column, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER posts_fts_delete AFTER DELETE ON posts BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, title, selftext, subreddit)
    VALUES ('delete', old.rowid, old.title, crowdsift_text(old.doc, 'selftext'), old.subreddit);
END;
CREATE TRIGGER posts_fts_update AFTER UPDATE ON posts
WHEN old.title IS NOT new.title OR old.doc IS NOT new.doc OR old.subreddit IS NOT new.subreddit
BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, title, selftext, subreddit)
    VALUES ('delete', old.rowid, old.title, crowdsift_text(old.doc, 'selftext'), old.subreddit);
    INSERT INTO posts_fts (rowid, title, selftext, subreddit)
    VALUES (new.rowid, new.title, crowdsift_text(new.doc, 'selftext'), new.subreddit);
END;
CREATE TRIGGER comments_fts_delete AFTER DELETE ON comments BEGIN
    INSERT INTO comments_fts (comments_fts, rowid, body, subreddit)
    VALUES ('delete', old.rowid, crowdsift_text(old.doc, 'body'), old.subreddit);
END;
CREATE TRIGGER comments_fts_update AFTER UPDATE ON comments
WHEN old.doc IS NOT new.doc OR old.subreddit IS NOT new.subreddit
BEGIN
    INSERT INTO comments_fts (comments_fts, rowid, body, subreddit)
    VALUES ('delete', old.rowid, crowdsift_text(old.doc, 'body'), old.subreddit);
    INSERT INTO comments_fts (rowid, body, subreddit)
    VALUES (new.rowid, crowdsift_text(new.doc, 'body'), new.subreddit);
END;
"""
SCHEMA_VERSION = 3
OLD_VERSIONS = (1, 2)


_REDDIT_EPOCH = 1134028003  # Reddit's "hot" ranking counts seconds from this moment.


def hot_rank(score: int | None, created_utc: int | None) -> float:
    """Reddit's published ``hot`` formula: log10 of votes plus 1 per 12.5 hours of age."""
    s = int(score or 0)
    order = math.log10(max(abs(s), 1))
    sign = (s > 0) - (s < 0)
    return round(sign * order + (int(created_utc or 0) - _REDDIT_EPOCH) / 45000, 7)


class ArchiveConnection(sqlite3.Connection):
    """A connection to an archive, carrying the codec that reads and writes its ``doc``s.

    One codec per connection: zstd contexts are not thread-safe, and each thread of a
    reader has its own connection (see ``ArchiveSource``)."""

    codec: DocCodec


def codec_of(conn: sqlite3.Connection) -> DocCodec:
    """The codec of a connection opened by ``connect`` or ``open_readonly``."""
    codec: DocCodec | None = getattr(conn, "codec", None)
    if codec is None:
        raise ArchiveError("internal: an archive connection opened without db.connect")
    return codec


def old_format_message(path: Path, version: int) -> str:
    return (
        f"archive {path} is in an old format (schema {version}: uncompressed, comments not "
        f"searchable); run `crowdsift archive migrate --archive {path}` to convert it in place "
        "(several times smaller; progress is shown), then try again"
    )


class OldArchiveFormatError(ArchiveError):
    """An archive written by an older crowdsift: ``crowdsift archive migrate`` converts it."""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) an archive for writing.

    Autocommit mode: the importer opens its own transactions, one per batch, so an interrupted
    import keeps every batch it committed and nothing half-written. An archive in an old
    format raises ``OldArchiveFormatError`` (saying to run ``crowdsift archive migrate``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(
            path,
            timeout=30.0,
            isolation_level=None,
            check_same_thread=False,
            factory=ArchiveConnection,
        )
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot open archive {path}: {exc}") from exc
    try:
        _check_identity(conn, path, writable=True)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
        migrate(conn, path)
        _attach_codec(conn)
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
        conn = sqlite3.connect(
            uri, uri=True, timeout=30.0, check_same_thread=False, factory=ArchiveConnection
        )
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot open archive {path}: {exc}; {HINT}") from exc
    try:
        _check_identity(conn, path, writable=False)
        _check_version(conn, path)
        conn.create_function("crowdsift_hot", 2, hot_rank, deterministic=True)
        _attach_codec(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise ArchiveError(f"{path} is not a readable archive ({exc}); {HINT}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema in a brand-new file; refuse an old or a newer format.

    The version is read again inside the write transaction: of two writers opening one new
    file together, the second waits for the first's schema, finds it, and creates nothing."""
    if _user_version(conn) == 0:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _user_version(conn) == 0:
                for statement in _statements(_V3):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return
    _check_version(conn, path)


def _statements(script: str) -> list[str]:
    """The statements of ``script`` one by one (a trigger's body keeps its own ``;``)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    version = _user_version(conn)
    if version in OLD_VERSIONS:
        raise OldArchiveFormatError(old_format_message(path, version))
    if version != SCHEMA_VERSION:
        raise ArchiveError(
            f"archive {path} has schema version {version}, this crowdsift reads "
            f"{SCHEMA_VERSION}; upgrade crowdsift to use it"
        )


def _attach_codec(conn: sqlite3.Connection) -> None:
    """The connection's codec, with the archive's dictionaries, and ``crowdsift_text``."""
    codec = DocCodec(load_dicts(conn))
    cast(ArchiveConnection, conn).codec = codec

    def doc_text(doc: bytes | None, key: str) -> str:
        return "" if doc is None else text_field(codec.decode(doc), key)

    conn.create_function("crowdsift_text", 2, doc_text, deterministic=True)


def add_dictionary(conn: sqlite3.Connection, data: bytes) -> None:
    """Store a trained dictionary and encode this connection's new records with it."""
    store_dict(conn, data)
    codec_of(conn).add(data)


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


class PostSubreddits:
    """Subreddits of posts in the archive by id, for imported comments that do not name
    theirs; read on a connection of its own (an importer's is busy on its finisher thread).
    Posts of files imported earlier in the same run are committed before the next file
    starts, so they are found too; a post not found is asked again next time."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self._conn: sqlite3.Connection | None = None
        self._found: dict[str, str] = {}

    def __call__(self, post_id: str) -> str | None:
        if post_id not in self._found:
            if self._conn is None:
                self._conn = open_readonly(self.archive)
            sql = "SELECT subreddit FROM posts WHERE id = ?"
            row = self._conn.execute(sql, (post_id,)).fetchone()
            if row is None:
                return None
            self._found[post_id] = str(row[0])
        return self._found[post_id]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
