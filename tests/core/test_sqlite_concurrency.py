"""SQLite under the service's load: WAL, so a reader never makes a writer fail with "locked"."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from crowdsift.core.store import open_engine


def test_sqlite_files_run_in_wal_mode(tmp_path: Path) -> None:
    engine = open_engine(f"sqlite:///{tmp_path / 'a.sqlite'}")
    try:
        with engine.connect() as connection:
            mode = connection.execute(text("PRAGMA journal_mode")).scalar()
    finally:
        engine.dispose()
    assert mode == "wal"


def test_a_write_commits_while_another_connection_holds_a_read_transaction(
    tmp_path: Path,
) -> None:
    """In rollback-journal mode the commit waits for the reader and fails "database is locked"."""
    url = f"sqlite:///{tmp_path / 'b.sqlite'}"
    reader_engine, writer_engine = open_engine(url), open_engine(url)
    try:
        with writer_engine.begin() as setup:
            setup.execute(text("CREATE TABLE t (n INTEGER)"))
            setup.execute(text("INSERT INTO t VALUES (1)"))
        with reader_engine.connect() as reader:
            reader.execute(text("BEGIN"))
            assert reader.execute(text("SELECT count(*) FROM t")).scalar() == 1  # shared lock
            with writer_engine.begin() as writer:
                writer.execute(text("INSERT INTO t VALUES (2)"))
            # The reader's snapshot is unchanged; a new read sees the commit.
            assert reader.execute(text("SELECT count(*) FROM t")).scalar() == 1
            reader.execute(text("COMMIT"))
            assert reader.execute(text("SELECT count(*) FROM t")).scalar() == 2
    finally:
        reader_engine.dispose()
        writer_engine.dispose()


def test_memory_databases_are_left_alone() -> None:
    engine = open_engine("sqlite:///:memory:")
    try:
        with engine.connect() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "memory"
    finally:
        engine.dispose()
