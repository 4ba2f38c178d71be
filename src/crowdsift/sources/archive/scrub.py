"""Usernames out of the archive: rows keep a salted ``author_hash``, raw JSON keeps no names.

An archive row holds its record's raw JSON as well as columns, and the JSON names the author.
Unless ``CROWDSIFT_KEEP_USERNAMES`` is set, the writer passes every row through ``row_values``:
the ``author`` column becomes NULL, the ``author_hash`` column the pseudonym, and the JSON goes
through ``crowdsift.core.pseudonymize.scrub_names`` (every name field null, ``author_hash`` beside
``author``). Deletion markers (``[deleted]``) and AutoModerator stay: they are no one, and the
vetoes read them.

Archives written before this existed (schema 1) are hashed in place the next time they are
opened for writing (``scrub_existing``), in batches that each commit, so an interrupted pass
is finished by the next one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from crowdsift.core.privacy import AuthorPolicy, is_person, privacy_state
from crowdsift.core.pseudonymize import scrub_record
from crowdsift.sources.archive import db
from crowdsift.sources.archive.parse import CommentRow, PostRow

PRIVACY_KEY = "author_privacy"
"""Meta key: ``hashed:<salt fingerprint>`` or ``kept:<salt fingerprint>`` once every row is."""
_AUTHOR_AT = {
    PostRow: PostRow._fields.index("author"),
    CommentRow: CommentRow._fields.index("author"),
}
_RAW_AT = PostRow._fields.index("raw")
assert _RAW_AT == CommentRow._fields.index("raw") == len(PostRow._fields) - 1  # raw is last
_SCRUB_BATCH = 2000
_ANY_ROW = "SELECT EXISTS (SELECT 1 FROM posts UNION ALL SELECT 1 FROM comments)"


BoundRow = tuple[Any, ...]
"""The upsert parameters of one row: its columns (names scrubbed), then ``author_hash``."""


def row_values(row: PostRow | CommentRow, policy: AuthorPolicy) -> BoundRow:
    """The upsert parameters of a row: its columns in order (name and JSON scrubbed), then
    ``author_hash``. (Built by position, not ``_replace``: this runs once per dump line.)"""
    author = row.author
    digest = policy.hash(author)
    if policy.keep_usernames:
        return (*row, digest)
    if is_person(author):
        at = _AUTHOR_AT[type(row)]
        raw = scrub_record(row.raw, policy, author, digest)
        return (*row[:at], None, *row[at + 1 : _RAW_AT], raw, digest)
    return (*row[:_RAW_AT], scrub_record(row.raw, policy, author, None), digest)


def scrub_existing(
    conn: sqlite3.Connection,
    policy: AuthorPolicy,
    *,
    on_done: Callable[[int], None] | None = None,
) -> int:
    """Bring rows written under another policy (or before hashing existed) to ``policy``.

    Returns how many rows were rewritten (0 when the archive already follows ``policy``).
    Rows whose names are gone cannot be re-hashed under a new salt; they keep their old
    ``author_hash`` and a warning says so.
    """
    wanted = privacy_state(policy)
    current = db.get_meta(conn, PRIVACY_KEY)
    if current == wanted:
        return 0
    if not conn.execute(_ANY_ROW).fetchone()[0]:
        _set_state(conn, wanted)
        return 0
    if current is not None and current.partition(":")[2] != policy.fingerprint:
        _warn_salt_changed()
    # The names must leave the file, not only the rows: freed space is zeroed, and the WAL
    # (which holds the old pages until a checkpoint) is emptied when the pass is done.
    conn.execute("PRAGMA secure_delete = ON")
    changed = sum(_scrub_table(conn, table, policy) for table in ("posts", "comments"))
    _set_state(conn, wanted)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if on_done is not None:
        on_done(changed)
    return changed


def _warn_salt_changed() -> None:
    # Imported here: parsing workers (``crowdsift.sources.archive.parallel``) use ``row_values``
    # only and start faster without loading the logging stack.
    from crowdsift.core.log import get_logger

    get_logger(__name__).warning(
        "archive_salt_changed",
        note="rows hashed under the old salt keep their author_hash; names are gone",
    )


def _set_state(conn: sqlite3.Connection, state: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        db.set_meta(conn, PRIVACY_KEY, state)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _scrub_table(conn: sqlite3.Connection, table: str, policy: AuthorPolicy) -> int:
    """Rewrite ``author``/``author_hash``/``raw`` of every row of ``table``, batch by batch."""
    select = f"SELECT rowid, author, author_hash, raw FROM {table} WHERE rowid > ? "  # noqa: S608
    select += "ORDER BY rowid LIMIT ?"
    update = f"UPDATE {table} SET author = ?, author_hash = ?, raw = ? WHERE rowid = ?"  # noqa: S608
    changed = 0
    last = 0
    while True:
        rows = conn.execute(select, (last, _SCRUB_BATCH)).fetchall()
        if not rows:
            return changed
        updates = []
        for rowid, author, old_hash, raw in rows:
            digest = policy.hash(author) if is_person(author) else None
            new = (
                policy.stored_name(author),
                digest or old_hash,
                scrub_record(raw, policy, author, digest),
            )
            if new != (author, old_hash, raw):
                updates.append((*new, rowid))
        if updates:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(update, updates)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        changed += len(updates)
        last = rows[-1][0]
