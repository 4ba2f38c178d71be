"""Usernames out of the archive: rows keep a salted ``author_hash``, stored records no names.

An archive row holds its whole record as well as columns, and the record names the author.
Unless ``CROWDSIFT_KEEP_USERNAMES`` is set, the writer passes every row through ``row_values``:
the ``author`` column becomes NULL, the ``author_hash`` column the pseudonym, and the record
is scrubbed as ``crowdsift.core.pseudonymize.scrub_names`` scrubs raw JSON: every ``author``
that names a person becomes null with ``author_hash`` beside it, ``author_fullname`` and the
moderator fields become null, at any depth. Deletion markers (``[deleted]``) and AutoModerator
stay: they are no one, and the vetoes read them.

The common dump line names ``author`` and ``author_fullname`` once each, at the top, and no
moderator: then those two keys are set in place (``line`` tells, by counting the keys in the
text). Anything else walks the whole record.

Archives whose names were kept and are now to be hashed (or hashed under another salt) are
rewritten the next time they are opened for writing (``scrub_existing``), in batches that
each commit, so an interrupted pass is finished by the next one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from crowdsift.core.privacy import AuthorPolicy, is_person, privacy_state
from crowdsift.sources.archive import db
from crowdsift.sources.archive.codec import DocCodec, text_field
from crowdsift.sources.archive.parse import CommentRow, PostRow, RawDict

PRIVACY_KEY = "author_privacy"
"""Meta key: ``hashed:<salt fingerprint>`` or ``kept:<salt fingerprint>`` once every row is."""
_SCRUB_BATCH = 2000
_ANY_ROW = "SELECT EXISTS (SELECT 1 FROM posts UNION ALL SELECT 1 FROM comments)"
_MODERATOR_KEYS = ("approved_by", "banned_by", "removed_by", "mod_reason_by", "link_author")
_NAME_KEYS = frozenset(("author", "author_fullname", *_MODERATOR_KEYS))


BoundRow = tuple[Any, ...]
"""The parameters of one row: its columns (``doc`` compressed, names scrubbed), then
``author_hash``, then the text the full-text index gets (not a column)."""


def row_values(
    row: PostRow | CommentRow, policy: AuthorPolicy, codec: DocCodec, line: str | bytes = ""
) -> BoundRow:
    """The parameters of a row: columns in table order with the record scrubbed and
    compressed, ``author_hash``, and the indexed text. ``line``: the record's JSON text, when
    the caller has it, lets the common record skip the walk over every field."""
    author = row.author
    digest = policy.hash(author)
    data = row.data
    column_author = author
    if not policy.keep_usernames:
        scrub_data(data, policy, author, digest, line)
        if is_person(author):
            column_author = None
    doc = codec.encode(data)
    if type(row) is PostRow:
        return (
            row.id,
            row.subreddit,
            column_author,
            row.title,
            row.score,
            row.num_comments,
            row.created_utc,
            row.retrieved,
            doc,
            digest,
            text_field(data, "selftext"),
        )
    return (
        row.id,
        row[1],  # link_id
        row[2],  # parent_id
        row.subreddit,
        column_author,
        row.score,
        row.created_utc,
        row.retrieved,
        doc,
        digest,
        text_field(data, "body"),
    )


def scrub_data(
    data: RawDict,
    policy: AuthorPolicy,
    author: str | None,
    digest: str | None,
    line: str | bytes = "",
) -> None:
    """Remove usernames from a record in place (see the module docstring)."""
    if policy.keep_usernames:
        return
    if line and _top_level_only(data, line):
        if digest is not None and data.get("author") == author:
            data["author"] = None
            data["author_hash"] = digest
        if type(data.get("author_fullname")) is str:
            data["author_fullname"] = None
        return
    _walk(data, policy)


def _top_level_only(data: RawDict, line: str | bytes) -> bool:
    """True when the text names ``author``/``author_fullname`` only as the record's own keys
    and names no moderator (so the two top-level keys are all there is to scrub)."""
    if isinstance(line, bytes):
        count = line.count
        return (
            count(b'"author"') == ("author" in data)
            and count(b'"author_fullname"') == ("author_fullname" in data)
            and b'_by"' not in line
            and b'link_author"' not in line
        )
    return (
        line.count('"author"') == ("author" in data)
        and line.count('"author_fullname"') == ("author_fullname" in data)
        and '_by"' not in line
        and 'link_author"' not in line
    )


def _walk(node: Any, policy: AuthorPolicy) -> None:
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict | list):
                _walk(item, policy)
        return
    if not isinstance(node, dict):
        return
    hashed: str | None = None
    for key, value in node.items():
        if isinstance(value, dict | list):
            _walk(value, policy)
        elif key in _NAME_KEYS and type(value) is str:
            if key != "author":
                node[key] = None
            elif is_person(value):
                node[key] = None
                hashed = policy.hash(value)
    if hashed is not None:
        node["author_hash"] = hashed


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
    """Rewrite ``author``/``author_hash``/``doc`` of every row of ``table``, batch by batch."""
    select = f"SELECT rowid, author, author_hash, doc FROM {table} WHERE rowid > ? "  # noqa: S608
    select += "ORDER BY rowid LIMIT ?"
    update = f"UPDATE {table} SET author = ?, author_hash = ?, doc = ? WHERE rowid = ?"  # noqa: S608
    codec = db.codec_of(conn)
    changed = 0
    last = 0
    while True:
        rows = conn.execute(select, (last, _SCRUB_BATCH)).fetchall()
        if not rows:
            return changed
        updates = []
        for rowid, author, old_hash, doc in rows:
            digest = policy.hash(author) if is_person(author) else None
            before = codec.decode(doc)
            data = codec.decode(doc)
            scrub_data(data, policy, author, digest)
            new = (policy.stored_name(author), digest or old_hash)
            if new != (author, old_hash) or data != before:
                updates.append((*new, codec.encode(data), rowid))
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
