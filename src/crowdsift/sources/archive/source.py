"""``archive``: a RedditSource over a local SQLite archive of Pushshift / Arctic Shift dumps.

Keyless and offline. Search emulates ``/r/{sub}/search?restrict_sr=1`` with FTS5, and finds a
thread through its comments as well as its post (see ``crowdsift.sources.archive.search`` for
the query, sort and cursor rules); an archive in an old format is refused with the command
that converts it (``crowdsift archive migrate``). Comments come from the
stored thread (``fetch_comment_tree`` reads all of it, so its tree is never a sample). Each
OS thread gets its own read-only connection, because sqlite3 connections must not be shared
by threads running queries at the same time.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from crowdsift.core.config import SearchSort, SourceName, TimeFilter
from crowdsift.core.errors import ArchiveError
from crowdsift.core.log import get_logger
from crowdsift.core.source import RawThing, SearchPage, SourceStats
from crowdsift.core.text import utc_now
from crowdsift.engines.embedding import Embedder
from crowdsift.sources.archive import db
from crowdsift.sources.archive.search import (
    Positions,
    newest_created,
    search_by_meaning,
    search_posts,
    thread_comments,
    top_level_comments,
)
from crowdsift.sources.archive.vectors import VectorIndex, model_of, version_of
from crowdsift.sources.reddit.threads import comment_tree

log = get_logger(__name__)


class ArchiveSource:
    """Search and comments from a local archive file; safe to call from several threads."""

    name: SourceName = "archive"

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], datetime] = utc_now,
        embedder: Embedder | None = None,
    ) -> None:
        self.path = Path(path)
        self._embedder = embedder
        self._index: VectorIndex | None = None
        self.stats = SourceStats()
        self._clock = clock
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._positions = Positions()
        self._connection()  # fail now, with the path and what to do, not mid-fetch

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",
        time_filter: TimeFilter = "all",
        limit: int = 25,
        after: str | None = None,
        since: datetime | None = None,
    ) -> SearchPage:
        """One page of matching submissions (see ``crowdsift.sources.archive.search``)."""
        self._count(pages=1)
        try:
            page = search_posts(
                self._connection(),
                subreddit,
                term,
                sort=sort,
                time_filter=time_filter,
                limit=limit,
                after=after,
                now=self._clock(),
                archive=f"archive {self.path}",
                since=since,
                positions=self._positions,
            )
        except sqlite3.Error as exc:
            raise ArchiveError(f"searching archive {self.path} failed: {exc}") from exc
        log.debug(
            "archive_search",
            subreddit=subreddit,
            term=term,
            sort=sort,
            time_filter=time_filter,
            items=len(page.posts),
            after=page.after,
        )
        return page

    def searches_meaning(self) -> bool:
        """Whether a search by meaning can run: an embedder was given and the archive holds
        vectors of its model (``crowdsift archive embed`` makes them)."""
        return self._usable_index() is not None

    def search_meaning(
        self,
        subreddit: str,
        text: str,
        *,
        time_filter: TimeFilter = "all",
        limit: int = 25,
        since: datetime | None = None,
    ) -> SearchPage:
        """The threads closest in meaning to ``text`` (see ``crowdsift.sources.archive.vectors``);
        an empty page when the archive has no vectors of the embedder's model."""
        index = self._usable_index()
        if index is None or self._embedder is None:
            return SearchPage(posts=[])
        self._count(pages=1)
        vector = self._embedder.embed([text])[0]
        try:
            return search_by_meaning(
                self._connection(), index, subreddit, vector, time_filter=time_filter,
                limit=limit, now=self._clock(), archive=f"archive {self.path}", since=since,
            )  # fmt: skip
        except sqlite3.Error as exc:
            raise ArchiveError(f"searching archive {self.path} failed: {exc}") from exc

    def _usable_index(self) -> VectorIndex | None:
        """The archive's vectors when the embedder's model made them; None otherwise (no
        embedder, no vectors, or another model's, which a warning names)."""
        if self._embedder is None:
            return None
        index = self._vector_index()
        if index is None or index.model == model_of(self._embedder):
            return index
        log.warning(
            "archive_vectors_other_model", archive=str(self.path), stored=index.model,
            note="searching by words only; `crowdsift archive embed` re-embeds the archive",
        )  # fmt: skip
        return None

    def _vector_index(self) -> VectorIndex | None:
        """The archive's vectors, read once and again only when they changed."""
        try:
            conn = self._connection()
            with self._lock:
                if self._index is None or self._index.version != version_of(conn):
                    self._index = VectorIndex.load(conn)
                return self._index
        except sqlite3.Error as exc:
            raise ArchiveError(f"reading vectors from archive {self.path} failed: {exc}") from exc

    def newest_post(self, subreddits: Sequence[str]) -> datetime | None:
        """When the newest post of ``subreddits`` (every one held when empty) was created."""
        try:
            stamp = newest_created(self._connection(), subreddits)
        except sqlite3.Error as exc:
            raise ArchiveError(f"reading archive {self.path} failed: {exc}") from exc
        return None if stamp is None else datetime.fromtimestamp(stamp, UTC)

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        """Top-level comments of one post, highest score first; ``more`` never occurs here."""
        self._count(pages=0)
        try:
            return top_level_comments(self._connection(), post_id, limit=limit)
        except sqlite3.Error as exc:
            raise ArchiveError(f"reading comments from archive {self.path} failed: {exc}") from exc

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        """Every stored comment of the post, built into a top-first tree and cut (no sample)."""
        if limit < 1 or depth < 1:
            return []
        self._count(pages=0)
        try:
            comments = thread_comments(self._connection(), post_id)
        except sqlite3.Error as exc:
            raise ArchiveError(f"reading comments from archive {self.path} failed: {exc}") from exc
        return comment_tree(comments, post_id, limit=limit, depth=depth)

    def close(self) -> None:
        """Close every per-thread connection; later calls raise ArchiveError."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()

    def __enter__(self) -> ArchiveSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
        with self._lock:
            if self._closed:
                raise ArchiveError(f"the archive source for {self.path} is closed")
            conn = db.open_readonly(self.path)
            self._connections.append(conn)
        self._local.conn = conn
        return conn

    def _count(self, *, pages: int) -> None:
        with self._lock:
            self.stats.requests += 1
            self.stats.pages += pages
