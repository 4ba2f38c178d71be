"""The comment store: standalone Comment records, persisted once, reused by later stages.

One table keyed by (``comment_id``, ``post_id``) with idempotent upserts. SQLite under the data
directory by default; any SQLAlchemy URL through ``CROWDSIFT_DATABASE_URL`` (PostgreSQL for
scale-out). The fetcher nests the very records it stored into ``Post.comments`` (seed 000 §3).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    DateTime,
    Engine,
    Integer,
    String,
    Text,
    create_engine,
    delete,
    event,
    func,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from crowdsift.core.config import SourceName
from crowdsift.core.errors import StoreError
from crowdsift.core.models import Comment
from crowdsift.core.schema_lock import schema_lock

_BATCH = 500


class Base(DeclarativeBase):
    """Declarative base of crowdsift's relational tables."""


class CommentRow(Base):
    __tablename__ = "comments"

    comment_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    post_id: Mapped[str] = mapped_column(String(32), primary_key=True, index=True)
    body: Mapped[str] = mapped_column(Text)
    comment_karma: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(32))
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


SQLITE_BUSY_SECONDS = 30.0
"""How long a SQLite writer waits for another one before "database is locked"."""


def open_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their parent directory created first.

    The job store, comment store and metrics share one SQLite file in the service, written by
    many threads at once: SQLite files run in WAL mode (readers never block the writer) and a
    writer waits up to ``SQLITE_BUSY_SECONDS`` for the lock instead of failing after 5 s.
    """
    file_db = url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:")
    if file_db:
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    try:
        if not url.startswith("sqlite"):
            return create_engine(url, pool_pre_ping=True)
        engine = create_engine(
            url, pool_pre_ping=True, connect_args={"timeout": SQLITE_BUSY_SECONDS}
        )
        if file_db:
            event.listen(engine, "connect", _sqlite_wal)
        return engine
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise StoreError(
            f"cannot open the database {_safe_url(url)}: {exc}. "
            "Check CROWDSIFT_DATABASE_URL (e.g. postgresql+psycopg://user@host/db)."
        ) from exc


def _sqlite_wal(connection: Any, _record: Any) -> None:
    """WAL survives a crash like the rollback journal and lets reads run beside a write."""
    cursor = connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
    finally:
        cursor.close()


@contextmanager
def guarded(engine: Engine, doing: str) -> Iterator[None]:
    """SQLAlchemy failures become a StoreError naming the database (password hidden)."""
    try:
        yield
    except SQLAlchemyError as exc:
        where = engine.url.render_as_string(hide_password=True)
        raise StoreError(f"{doing} in {where} failed: {exc}") from exc


def create_tables(engine: Engine, tables: Sequence[Any]) -> None:
    """``create_all`` that several processes can run at once on a fresh database.

    A SQLite file's tables are created under its schema lock (``core.schema_lock``): the
    processes take turns, and each one after the first finds the tables (``checkfirst``) and
    creates nothing. A server database (PostgreSQL) has no file to lock: there, a process
    that loses the race fails ("already exists" / duplicate type) after the table exists, so
    a second look finds it."""
    database = _sqlite_database(engine)
    if database is not None:
        with schema_lock(database):
            Base.metadata.create_all(engine, tables=list(tables))
        return
    try:
        Base.metadata.create_all(engine, tables=list(tables))
    except (IntegrityError, ProgrammingError, OperationalError):
        Base.metadata.create_all(engine, tables=list(tables))


def _sqlite_database(engine: Engine) -> Path | None:
    """The file behind a SQLite engine; None for memory databases and servers."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def _safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL carries nothing we can show safely
        return "<unparsable database URL>"


class CommentStore:
    """Idempotent persistence of Comment records over an injected SQLAlchemy engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        try:
            create_tables(engine, [CommentRow.__table__])
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot create the comment table in {_safe_url(str(engine.url))}: {exc}"
            ) from exc

    @classmethod
    def from_url(cls, url: str) -> CommentStore:
        return cls(open_engine(url))

    def upsert(self, comments: Iterable[Comment]) -> int:
        """Insert or update by (comment_id, post_id); returns how many records were written."""
        rows = [_to_row(comment) for comment in comments]
        if not rows:
            return 0
        try:
            with self._engine.begin() as conn:
                for start in range(0, len(rows), _BATCH):
                    conn.execute(self._upsert_statement(rows[start : start + _BATCH]))
        except SQLAlchemyError as exc:
            raise StoreError(f"writing {len(rows)} comments failed: {exc}") from exc
        return len(rows)

    def _upsert_statement(self, rows: Sequence[dict[str, Any]]) -> Any:
        dialect = self._engine.dialect.name
        insert: Any
        if dialect == "postgresql":
            insert = postgresql.insert(CommentRow)
        elif dialect == "sqlite":
            insert = sqlite.insert(CommentRow)
        else:
            raise StoreError(f"the comment store supports SQLite and PostgreSQL, not {dialect}")
        statement = insert.values(list(rows))
        updated = {
            key: statement.excluded[key]
            for key in ("body", "comment_karma", "source", "fetched_at")
        }
        return statement.on_conflict_do_update(
            index_elements=["comment_id", "post_id"], set_=updated
        )

    def for_post(self, post_id: str) -> list[Comment]:
        """Every stored comment of one post, highest karma first (the order Post nests them)."""
        query = (
            select(CommentRow)
            .where(CommentRow.post_id == post_id)
            .order_by(CommentRow.comment_karma.desc(), CommentRow.comment_id)
        )
        with self._engine.connect() as conn:
            return [_to_model(row) for row in conn.execute(query).all()]

    def count(self) -> int:
        with self._engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(CommentRow)).scalar_one())

    def post_ids(self, *, sources: Sequence[str]) -> list[str]:
        """Ids of the posts whose comments came from one of ``sources`` (for maintenance)."""
        query = (
            select(CommentRow.post_id)
            .where(CommentRow.source.in_(list(sources)))
            .distinct()
            .order_by(CommentRow.post_id)
        )
        with guarded(self._engine, "listing stored posts"), self._engine.connect() as conn:
            return [str(post_id) for post_id in conn.execute(query).scalars()]

    def delete_posts(self, post_ids: Iterable[str]) -> int:
        """Delete every stored comment of these posts (one transaction); returns rows deleted.

        ``crowdsift archive purge-deleted`` calls it for posts deleted or removed on Reddit.
        """
        ids = list(dict.fromkeys(post_ids))
        deleted = 0
        with guarded(self._engine, "deleting comments"), self._engine.begin() as conn:
            for start in range(0, len(ids), _BATCH):
                chunk = ids[start : start + _BATCH]
                result = conn.execute(delete(CommentRow).where(CommentRow.post_id.in_(chunk)))
                deleted += result.rowcount or 0
        return deleted

    def close(self) -> None:
        self._engine.dispose()


def _to_row(comment: Comment) -> dict[str, Any]:
    row = comment.model_dump()
    row["fetched_at"] = comment.fetched_at.astimezone(UTC)  # SQLite keeps no zone: store UTC
    return row


def _to_model(row: Any) -> Comment:
    fetched_at = row.fetched_at
    if fetched_at.tzinfo is None:  # SQLite drops the zone; we always store UTC
        fetched_at = fetched_at.replace(tzinfo=UTC)
    source: SourceName = row.source
    return Comment(
        comment_id=row.comment_id,
        post_id=row.post_id,
        body=row.body,
        comment_karma=row.comment_karma,
        source=source,
        fetched_at=fetched_at,
    )
