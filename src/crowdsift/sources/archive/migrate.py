"""Converting an archive of an old format (schema 1 or 2) into the current one, in place.

Old archives kept every record as uncompressed JSON and indexed posts only. Converting one
means compressing every record and indexing every comment, which is an import in all but
name: the rows are read back in order and written through the importer's own writer
(``BatchWriter``), so a converted archive is the archive a fresh import would have built.

In place and crash-safe: the new archive is written beside the old one (``.NAME.migrating``)
and renamed over it only when complete; until then the old file is untouched (its WAL is
folded in first, so no stale side file can outlive the rename). An interrupted migration
leaves the old archive as it was; running it again starts over.

Usernames: rows of a schema-1 archive still name their authors and are hashed on the way
(as the next write would have done); rows hashed already keep their ``author_hash``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from crowdsift.core.config import get_settings
from crowdsift.core.errors import ArchiveError
from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy, privacy_state
from crowdsift.sources.archive import codec, db
from crowdsift.sources.archive.parse import BadRecordError, PostRow, Record, parse_line
from crowdsift.sources.archive.scrub import PRIVACY_KEY, BoundRow, row_values, scrub_data
from crowdsift.sources.archive.writer import BatchWriter

log = get_logger(__name__)

READ_BATCH = 5000
_HASH_AT = 9
"""Where ``author_hash`` sits in a bound row (either table)."""


@dataclass(frozen=True)
class MigrateProgress:
    """Sent after every batch read: which table, rows done, rows in it."""

    table: str
    done: int
    total: int


class MigrateReport(BaseModel):
    """What ``migrate_archive`` did; ``migrated`` False when the archive was current already."""

    archive: str
    migrated: bool
    from_version: int
    posts: int = 0
    comments: int = 0
    unreadable: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    elapsed_seconds: float = 0.0


def migrate_archive(
    path: Path,
    *,
    progress: Callable[[MigrateProgress], None] | None = None,
    authors: AuthorPolicy | None = None,
) -> MigrateReport:
    """Rewrite the archive at ``path`` in the current format (see the module docstring)."""
    started = time.perf_counter()
    policy = authors if authors is not None else AuthorPolicy.from_settings(get_settings())
    version = _old_version(path)
    report = MigrateReport(archive=str(path), migrated=False, from_version=version)
    if version == db.SCHEMA_VERSION:
        return report
    report.bytes_before = path.stat().st_size
    tmp = path.with_name(f".{path.name}.migrating")
    _remove(tmp)
    old = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        new = db.connect(tmp)
        try:
            _copy_meta(old, new, policy)
            _train(old, new, policy)
            with BatchWriter(new, batch_size=20_000, authors=policy) as writer:
                for table in ("posts", "comments"):
                    _copy_table(old, writer, table, policy, report, progress)
            new.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            new.close()
    except BaseException:
        old.close()
        _remove(tmp)
        raise
    old.close()
    tmp.replace(path)
    report.migrated = True
    report.bytes_after = path.stat().st_size
    report.elapsed_seconds = round(time.perf_counter() - started, 3)
    log.info("archive_migrated", **report.model_dump())
    return report


def _old_version(path: Path) -> int:
    """The archive's format version, after folding its WAL into it; ArchiveError if it is
    not an archive."""
    if not path.is_file():
        raise ArchiveError(f"archive {path} does not exist; nothing to migrate")
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot open archive {path}: {exc}") from exc
    try:
        if conn.execute("PRAGMA application_id").fetchone()[0] != db.APPLICATION_ID:
            raise ArchiveError(f"{path} is not a crowdsift archive; nothing to migrate")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version not in (*db.OLD_VERSIONS, db.SCHEMA_VERSION):
            raise ArchiveError(
                f"archive {path} has schema version {version}, which this crowdsift cannot "
                "migrate; upgrade crowdsift"
            )
        if version != db.SCHEMA_VERSION:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode = DELETE")
        return version
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot read archive {path}: {exc}") from exc
    finally:
        conn.close()


def _copy_meta(old: sqlite3.Connection, new: sqlite3.Connection, policy: AuthorPolicy) -> None:
    """Every meta fact but the privacy state, which is the current policy's once rows are
    written through it."""
    rows = old.execute("SELECT key, value FROM meta WHERE key != ?", (PRIVACY_KEY,)).fetchall()
    new.execute("BEGIN IMMEDIATE")
    for key, value in rows:
        db.set_meta(new, key, value)
    db.set_meta(new, PRIVACY_KEY, privacy_state(policy))
    new.execute("COMMIT")


def _train(old: sqlite3.Connection, new: sqlite3.Connection, policy: AuthorPolicy) -> None:
    """The new archive's dictionary, trained on its old records."""
    samples: list[bytes] = []
    for table in ("posts", "comments"):
        sql = f"SELECT raw FROM {table} ORDER BY rowid LIMIT ?"  # noqa: S608
        for (raw,) in old.execute(sql, (codec.SAMPLE_RECORDS // 2,)):
            record = _record(raw)
            if record is not None:
                scrub_data(record.data, policy, record.author, policy.hash(record.author), raw)
                samples.append(codec.to_json(record.data))
    trained = codec.train(samples)
    if trained is not None:
        new.execute("BEGIN IMMEDIATE")
        db.add_dictionary(new, trained)
        new.execute("COMMIT")


def _copy_table(
    old: sqlite3.Connection,
    writer: BatchWriter,
    table: str,
    policy: AuthorPolicy,
    report: MigrateReport,
    progress: Callable[[MigrateProgress], None] | None,
) -> None:
    total = int(old.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608
    done = 0
    for batch in _batches(old, table):
        for raw, old_hash in batch:
            record = _record(raw)
            if record is None:
                report.unreadable += 1
                continue
            values = _bound(record, policy, writer, raw, old_hash)
            if writer.add_bound(values, type(record) is PostRow, len(raw)):
                writer.flush()
            if type(record) is PostRow:
                report.posts += 1
            else:
                report.comments += 1
        done += len(batch)
        if progress is not None:
            progress(MigrateProgress(table, done, total))
    writer.flush()
    writer.wait()


def _bound(
    record: Record, policy: AuthorPolicy, writer: BatchWriter, raw: str, old_hash: str | None
) -> BoundRow:
    """The row as an import binds it; a pseudonym the old row had already is kept (its
    name is gone, so it could not be computed again)."""
    values = row_values(record, policy, writer.codec, raw)
    if values[_HASH_AT] is None and old_hash is not None:
        values = (*values[:_HASH_AT], old_hash, *values[_HASH_AT + 1 :])
    return values


def _batches(old: sqlite3.Connection, table: str) -> Iterator[list[tuple[str, str | None]]]:
    """(raw JSON, author_hash) of every row by rowid, ``READ_BATCH`` at a time."""
    has_hash = any(
        column[1] == "author_hash" for column in old.execute(f"PRAGMA table_info({table})")
    )
    hash_column = "author_hash" if has_hash else "NULL"
    sql = (
        f"SELECT rowid, raw, {hash_column} FROM {table} "  # noqa: S608
        "WHERE rowid > ? ORDER BY rowid LIMIT ?"
    )
    last = 0
    while rows := old.execute(sql, (last, READ_BATCH)).fetchall():
        last = rows[-1][0]
        yield [(str(raw), old_hash) for _, raw, old_hash in rows]


def _record(raw: str) -> Record | None:
    try:
        return parse_line(raw)
    except BadRecordError as exc:
        log.warning("archive_migrate_unreadable_row", reason=exc.reason)
        return None


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
