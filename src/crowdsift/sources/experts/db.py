"""``SqlExpertStore``: the Experts Panel's archive in SQL (SQLite by default, PostgreSQL to scale).

Five tables, every key led by ``expert_id``: Telegram message ids are unique only inside one
channel, so two experts may both have a post 12. Every read takes an ``expert_id`` and filters
by it; that is what keeps one expert's posts out of another's answer. Writes are idempotent
upserts (per dialect, as in ``crowdsift.core.store``), and an import writes all its rows in one
transaction, so a failed import leaves the previous state intact.

Times are stored in UTC; SQLite keeps no zone, so reads put UTC back.

Commenters' names are not stored (``crowdsift.core.privacy``): a community comment's ``author`` is
written as ``member-<salted hash>``, so a thread still shows who answered whom without naming
anyone. The expert's own comments keep the expert's name (the expert is the public subject of
the archive), ``Deleted Account`` stays as it is (it is nobody), and
``CROWDSIFT_KEEP_USERNAMES=1`` keeps every name. Rows written before are rewritten when their
expert is imported again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Connection,
    DateTime,
    Engine,
    Index,
    Integer,
    String,
    Text,
    delete,
    func,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from crowdsift.core.errors import StoreError
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.core.store import Base, create_tables, guarded, open_engine
from crowdsift.sources.experts.models import (
    DriftGroup,
    Expert,
    ExpertComment,
    ExpertPost,
    ExpertStore,
    ExpertSummary,
    PostLink,
)

_BATCH = 500
"""Rows per INSERT and ids per IN list: well under SQLite's and PostgreSQL's parameter limits."""
DELETED_ACCOUNT = "Deleted Account"
"""What Telegram exports (and the importer) call a commenter whose account is gone."""
PSEUDONYM_PREFIX = "member-"


class ExpertRow(Base):
    __tablename__ = "experts"

    expert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    channel: Mapped[str] = mapped_column(String(64))
    language: Mapped[str | None] = mapped_column(String(16), nullable=True)
    source_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ExpertPostRow(Base):
    __tablename__ = "expert_posts"
    __table_args__ = (Index("ix_expert_posts_date", "expert_id", "date"),)

    expert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    post_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    date: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    url: Mapped[str] = mapped_column(Text)
    views: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    forwarded_from: Mapped[str | None] = mapped_column(Text, nullable=True)


class ExpertLinkRow(Base):
    __tablename__ = "expert_links"
    __table_args__ = (Index("ix_expert_links_target", "expert_id", "target_id"),)

    expert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    source_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    target_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)


class ExpertCommentRow(Base):
    __tablename__ = "expert_comments"
    __table_args__ = (Index("ix_expert_comments_post", "expert_id", "post_id"),)

    expert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    comment_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    post_id: Mapped[int] = mapped_column(BigInteger)
    author: Mapped[str] = mapped_column(Text)
    author_is_expert: Mapped[bool] = mapped_column(Boolean)
    text: Mapped[str] = mapped_column(Text)
    date: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reply_to_comment_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class ExpertDriftRow(Base):
    __tablename__ = "expert_drift_groups"

    expert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    rank: Mapped[int] = mapped_column(Integer)
    post_id: Mapped[int] = mapped_column(BigInteger)
    topic: Mapped[str] = mapped_column(Text)
    keywords: Mapped[list[str]] = mapped_column(JSON)
    comment_ids: Mapped[list[int]] = mapped_column(JSON)
    date: Mapped[datetime] = mapped_column(DateTime(timezone=True))


_TABLES = [
    ExpertRow.__table__,
    ExpertPostRow.__table__,
    ExpertLinkRow.__table__,
    ExpertCommentRow.__table__,
    ExpertDriftRow.__table__,
]


class SqlExpertStore:
    """The ``ExpertStore`` protocol over SQLAlchemy, plus the writes the importer needs."""

    def __init__(self, engine_or_url: Engine | str, *, authors: AuthorPolicy | None = None) -> None:
        """``authors`` decides how commenters are stored; None: from the settings, read at the
        first comment written (only writers need the salt)."""
        self._authors = authors
        if isinstance(engine_or_url, str):
            try:
                engine_or_url = open_engine(engine_or_url)
            except OSError as exc:  # the SQLite file's directory cannot be created
                raise StoreError(f"cannot create the experts database: {exc}") from exc
        self._engine = engine_or_url
        if self._engine.dialect.name not in ("sqlite", "postgresql"):
            raise StoreError(
                f"the experts store supports SQLite and PostgreSQL, not {self._engine.dialect.name}"
            )
        with self._guard("creating the experts tables"):
            create_tables(self._engine, _TABLES)

    @property
    def engine(self) -> Engine:
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def _guard(self, doing: str) -> AbstractContextManager[None]:
        return guarded(self._engine, doing)

    def _comment_rows(self, comments: Iterable[ExpertComment]) -> list[dict[str, Any]]:
        """Rows to write, commenters' names replaced by pseudonyms (see the module docstring)."""
        rows = [_utc_row(c) for c in comments]
        if not rows:
            return rows
        if self._authors is None:
            from crowdsift.core.config import get_settings

            self._authors = AuthorPolicy.from_settings(get_settings())
        for row in rows:
            row["author"] = stored_author(row["author"], row["author_is_expert"], self._authors)
        return rows

    # --- writes -------------------------------------------------------------------------
    def write_import(
        self,
        expert: Expert,
        posts: Sequence[ExpertPost],
        links: Sequence[PostLink],
        comments: Sequence[ExpertComment],
        *,
        digest: str | None = None,
    ) -> None:
        """One import in one transaction: the expert, then its posts, links and comments."""
        owner = expert.expert_id
        owners = {p.expert_id for p in posts} | {k.expert_id for k in links}
        for record_owner in sorted(owners | {c.expert_id for c in comments}):
            _check_owner(owner, record_owner)
        with self._guard(f"importing expert {owner}"), self._engine.begin() as conn:
            row = {**expert.model_dump(), "source_digest": digest}
            self._upsert(conn, ExpertRow, [row], ("expert_id",))
            self._upsert(
                conn, ExpertPostRow, [_utc_row(p) for p in posts], ("expert_id", "post_id")
            )
            self._upsert(conn, ExpertLinkRow, [link.model_dump() for link in links], None)
            rows = self._comment_rows(comments)
            self._upsert(conn, ExpertCommentRow, rows, ("expert_id", "comment_id"))

    def upsert_expert(self, expert: Expert, *, digest: str | None = None) -> None:
        self.write_import(expert, [], [], [], digest=digest)

    def upsert_posts(self, posts: Iterable[ExpertPost]) -> int:
        rows = [_utc_row(p) for p in posts]
        with self._guard("writing expert posts"), self._engine.begin() as conn:
            self._upsert(conn, ExpertPostRow, rows, ("expert_id", "post_id"))
        return len(rows)

    def upsert_comments(self, comments: Iterable[ExpertComment]) -> int:
        rows = self._comment_rows(comments)
        with self._guard("writing expert comments"), self._engine.begin() as conn:
            self._upsert(conn, ExpertCommentRow, rows, ("expert_id", "comment_id"))
        return len(rows)

    def replace_drift_groups(self, expert_id: str, groups: Sequence[DriftGroup]) -> None:
        """The expert's drift groups become exactly ``groups`` (order kept); others untouched."""
        for group in groups:
            _check_owner(expert_id, group.expert_id)
        rows = [{**_utc_row(g), "rank": rank} for rank, g in enumerate(groups)]
        with self._guard(f"replacing drift groups of {expert_id}"), self._engine.begin() as conn:
            conn.execute(delete(ExpertDriftRow).where(ExpertDriftRow.expert_id == expert_id))
            self._upsert(conn, ExpertDriftRow, rows, ("expert_id", "group_id"))

    def source_digest(self, expert_id: str) -> str | None:
        """The digest recorded with the expert's last import (the demo uses it to skip work)."""
        query = select(ExpertRow.source_digest).where(ExpertRow.expert_id == expert_id)
        with self._guard("reading an expert"), self._engine.connect() as conn:
            value: str | None = conn.execute(query).scalar_one_or_none()
        return value

    def _upsert(
        self,
        conn: Connection,
        model: type[Base],
        rows: Sequence[dict[str, Any]],
        keys: tuple[str, ...] | None,
    ) -> None:
        """Insert, updating every non-key column on a key conflict (``keys=None``: ignore).

        One cached statement run with ``executemany`` (SQLAlchemy batches it into multi-row
        INSERTs where the driver allows): compiling a literal multi-row VALUES per batch cost
        more than the database work.
        """
        if not rows:
            return
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        statement: Any = dialect.insert(model)
        if keys is None:
            statement = statement.on_conflict_do_nothing()
        else:
            columns = [c.name for c in model.__table__.columns if c.name not in keys]
            updated = {name: statement.excluded[name] for name in columns}
            statement = statement.on_conflict_do_update(index_elements=keys, set_=updated)
        for start in range(0, len(rows), _BATCH):
            conn.execute(statement, list(rows[start : start + _BATCH]))

    # --- ExpertStore ------------------------------------------------------------------------
    def experts(self) -> list[ExpertSummary]:
        post_stats = select(
            ExpertPostRow.expert_id,
            func.count(),
            func.min(ExpertPostRow.date),
            func.max(ExpertPostRow.date),
        ).group_by(ExpertPostRow.expert_id)
        comment_counts = select(ExpertCommentRow.expert_id, func.count()).group_by(
            ExpertCommentRow.expert_id
        )
        with self._guard("listing experts"), self._engine.connect() as conn:
            experts = conn.execute(select(ExpertRow).order_by(ExpertRow.expert_id)).all()
            stats = {row[0]: row[1:] for row in conn.execute(post_stats).all()}
            comments = {row[0]: row[1] for row in conn.execute(comment_counts).all()}
        summaries = []
        for row in experts:
            count, first, last = stats.get(row.expert_id, (0, None, None))
            summaries.append(
                ExpertSummary(
                    **_expert(row).model_dump(),
                    posts=int(count),
                    comments=int(comments.get(row.expert_id, 0)),
                    first_post_at=_aware(first) if first is not None else None,
                    last_post_at=_aware(last) if last is not None else None,
                )
            )
        return summaries

    def get_expert(self, expert_id: str) -> Expert | None:
        query = select(ExpertRow).where(ExpertRow.expert_id == expert_id)
        with self._guard("reading an expert"), self._engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        return _expert(row) if row is not None else None

    def posts(self, expert_id: str, *, since: datetime | None = None) -> list[ExpertPost]:
        """Newest first; ``since`` keeps posts dated at or after it."""
        query = select(ExpertPostRow).where(ExpertPostRow.expert_id == expert_id)
        if since is not None:
            query = query.where(ExpertPostRow.date >= _to_utc(since))
        query = query.order_by(ExpertPostRow.date.desc(), ExpertPostRow.post_id.desc())
        with self._guard("reading expert posts"), self._engine.connect() as conn:
            return [_post(row) for row in conn.execute(query).all()]

    def posts_by_id(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertPost]:
        """The stored ones among ``post_ids``, in the order asked."""
        found: dict[int, ExpertPost] = {}
        for chunk in _chunks(post_ids):
            query = select(ExpertPostRow).where(
                ExpertPostRow.expert_id == expert_id, ExpertPostRow.post_id.in_(chunk)
            )
            with self._guard("reading expert posts"), self._engine.connect() as conn:
                found.update((row.post_id, _post(row)) for row in conn.execute(query).all())
        return [found[post_id] for post_id in post_ids if post_id in found]

    def links(self, expert_id: str, post_ids: Sequence[int]) -> list[PostLink]:
        """Edges where any of ``post_ids`` is the source or the target."""
        found: set[tuple[int, int, str]] = set()
        for chunk in _chunks(post_ids):
            query = select(ExpertLinkRow).where(
                ExpertLinkRow.expert_id == expert_id,
                or_(ExpertLinkRow.source_id.in_(chunk), ExpertLinkRow.target_id.in_(chunk)),
            )
            with self._guard("reading expert links"), self._engine.connect() as conn:
                found.update((r.source_id, r.target_id, r.kind) for r in conn.execute(query))
        return [
            PostLink(expert_id=expert_id, source_id=s, target_id=t, kind=kind)
            for s, t, kind in sorted(found)
        ]

    def comments(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertComment]:
        """Comments of the given posts, oldest first."""
        found: list[ExpertComment] = []
        for chunk in _chunks(post_ids):
            query = select(ExpertCommentRow).where(
                ExpertCommentRow.expert_id == expert_id, ExpertCommentRow.post_id.in_(chunk)
            )
            with self._guard("reading expert comments"), self._engine.connect() as conn:
                found.extend(_comment(row) for row in conn.execute(query).all())
        return sorted(found, key=lambda c: (c.date, c.comment_id))

    def all_comments(self, expert_id: str) -> list[ExpertComment]:
        query = (
            select(ExpertCommentRow)
            .where(ExpertCommentRow.expert_id == expert_id)
            .order_by(ExpertCommentRow.date, ExpertCommentRow.comment_id)
        )
        with self._guard("reading expert comments"), self._engine.connect() as conn:
            return [_comment(row) for row in conn.execute(query).all()]

    def drift_groups(self, expert_id: str, *, since: datetime | None = None) -> list[DriftGroup]:
        """In the order they were stored; ``since`` keeps groups whose newest comment is later."""
        query = select(ExpertDriftRow).where(ExpertDriftRow.expert_id == expert_id)
        if since is not None:
            query = query.where(ExpertDriftRow.date >= _to_utc(since))
        with self._guard("reading drift groups"), self._engine.connect() as conn:
            rows = conn.execute(query.order_by(ExpertDriftRow.rank)).all()
        return [
            DriftGroup(
                expert_id=row.expert_id,
                group_id=row.group_id,
                post_id=row.post_id,
                topic=row.topic,
                keywords=list(row.keywords),
                comment_ids=list(row.comment_ids),
                date=_aware(row.date),
            )
            for row in rows
        ]


def _check_owner(expected: str, actual: str) -> None:
    if actual != expected:
        raise ValueError(f"a record of expert {actual!r} was written as expert {expected!r}")


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _BATCH):
        yield unique[start : start + _BATCH]


def _to_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; we always store UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def stored_author(name: str, is_expert: bool, policy: AuthorPolicy) -> str:
    """The ``author`` column for a comment: the expert's name, ``Deleted Account``, the name
    itself when opted in, else ``member-<salted hash>``."""
    if is_expert or policy.keep_usernames or name == DELETED_ACCOUNT:
        return name
    if name.startswith(PSEUDONYM_PREFIX):  # already one (a row read back and written again)
        return name
    pseudonym = policy.hash(name)
    return name if pseudonym is None else f"{PSEUDONYM_PREFIX}{pseudonym}"


def _utc_row(record: ExpertPost | ExpertComment | DriftGroup) -> dict[str, Any]:
    row = record.model_dump()
    row["date"] = _to_utc(record.date)
    return row


def _expert(row: Any) -> Expert:
    return Expert(
        expert_id=row.expert_id, name=row.name, channel=row.channel, language=row.language
    )


def _post(row: Any) -> ExpertPost:
    return ExpertPost(
        expert_id=row.expert_id,
        post_id=row.post_id,
        text=row.text,
        date=_aware(row.date),
        url=row.url,
        views=row.views,
        forwarded_from=row.forwarded_from,
    )


def _comment(row: Any) -> ExpertComment:
    return ExpertComment(
        expert_id=row.expert_id,
        comment_id=row.comment_id,
        post_id=row.post_id,
        author=row.author,
        author_is_expert=bool(row.author_is_expert),
        text=row.text,
        date=_aware(row.date),
        reply_to_comment_id=row.reply_to_comment_id,
    )


if TYPE_CHECKING:  # mypy proves SqlExpertStore satisfies the protocol the phases are given

    def _conforms(store: SqlExpertStore) -> ExpertStore:
        return store
