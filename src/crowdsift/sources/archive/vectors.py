"""Search by meaning in an archive: a vector for each thread's title and opening.

A question is often phrased unlike the thread that answers it ("why does the same prompt
sometimes give much worse output" against "Inconsistent quality between runs"), and a search by
words then misses the thread. Each post gets one sentence embedding of its title and the first
``OPENING_CHARS`` of its body (``thread_text``), stored in ``post_vectors`` beside the post's
row (half precision: 768 bytes a thread). The question's vector is compared with all of them,
and the best matches are one more ranked list the fetcher fuses with the searches by words
(``crowdsift.pipeline.fetch.queries.RRF_K``).

- **When vectors are made**: ``crowdsift archive import`` embeds the threads it added when they
  are few enough to take a minute or two (``AUTO_EMBED_LIMIT``), and says how to add them
  otherwise; ``crowdsift archive embed`` embeds every thread that has no vector yet
  (incremental: each batch is committed, so an interrupted run keeps what it made).
- **Which model made them** is kept in ``meta`` (``MODEL_KEY``). Vectors from another model are
  not comparable: the archive is searched by words alone until ``crowdsift archive embed``
  re-embeds it with the configured one.
- **A deleted post** loses its vector with it (a trigger).
- **Scale**: the search reads every vector once per process (``VectorIndex``) and compares
  them all (a matrix product: about 40 ms for 100,000 threads on this machine's 2 cores);
  ``MIN_SIMILARITY`` keeps a thread about nothing the question asks out of the list.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from crowdsift.core.errors import ArchiveError
from crowdsift.core.log import get_logger
from crowdsift.engines.embedding import Embedder
from crowdsift.sources.archive import db
from crowdsift.sources.archive.db import codec_of, get_meta, set_meta

log = get_logger(__name__)

OPENING_CHARS = 300
"""How much of a post's body its vector reads besides the title: the question a thread asks is
in its first lines, and MiniLM reads at most 256 word pieces anyway (a longer text costs time
and says less)."""
EMBED_BATCH = 128
"""Threads embedded and committed together: an interrupted run loses at most one batch."""
AUTO_EMBED_LIMIT = 20_000
"""An import embeds the threads it added itself when there are at most this many (about three
minutes on 2 cores); a larger import says to run ``crowdsift archive embed``."""
MIN_SIMILARITY = 0.25
"""Cosine below which a thread shares no meaning with the question worth reading (MiniLM puts
unrelated texts near 0.0–0.2)."""
CANDIDATE_SPAN = 1000
"""Best matches checked against a search's subreddits and window at once."""
MODEL_KEY = "vectors_model"

SCHEMA = """
CREATE TABLE IF NOT EXISTS post_vectors (
    rid INTEGER PRIMARY KEY,
    vec BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS post_vectors_delete AFTER DELETE ON posts BEGIN
    DELETE FROM post_vectors WHERE rid = old.rowid;
END;
"""

Progress = Callable[[int, int], None]
"""Called with (threads embedded so far, threads to embed) after each batch."""


class EmbedReport(BaseModel):
    """What ``embed_missing`` did."""

    embedded: int = Field(description="threads given a vector in this run")
    total: int = Field(description="threads the archive holds")
    seconds: float = Field(description="wall time of the run")
    model: str = Field(description="the model the vectors are from")
    rebuilt: bool = Field(False, description="vectors of another model were replaced")


def thread_text(post: dict[str, Any]) -> str:
    """The text a post's vector is made from: its title and the opening of its body."""
    title = post.get("title") if isinstance(post.get("title"), str) else ""
    body = post.get("selftext") if isinstance(post.get("selftext"), str) else ""
    if body in ("[deleted]", "[removed]"):
        body = ""
    return " ".join(f"{title}\n{str(body)[:OPENING_CHARS]}".split())


def model_of(embedder: Embedder) -> str:
    """Which model an embedder's vectors come from (its ``identity`` when it has one)."""
    identity = getattr(embedder, "identity", None)
    return identity if isinstance(identity, str) else embedder.name


def has_vectors(conn: sqlite3.Connection) -> bool:
    """Whether the archive has a vector table at all (an archive never embedded has none)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'post_vectors'"
    ).fetchone()
    return row is not None


def missing_count(conn: sqlite3.Connection) -> int:
    """Threads without a vector."""
    if not has_vectors(conn):
        return int(conn.execute("SELECT count(*) FROM posts").fetchone()[0])
    row = conn.execute(
        "SELECT count(*) FROM posts WHERE rowid NOT IN (SELECT rid FROM post_vectors)"
    ).fetchone()
    return int(row[0])


def embed_missing(
    conn: sqlite3.Connection, embedder: Embedder, *, progress: Progress | None = None
) -> EmbedReport:
    """Give every thread without a vector one (``conn`` writable, autocommit), batch by batch.

    Vectors another model made are dropped first: they cannot be compared with this one's."""
    started = time.perf_counter()
    model = model_of(embedder)
    conn.executescript(SCHEMA)
    rebuilt = False
    stored_model = get_meta(conn, MODEL_KEY)
    if stored_model is not None and stored_model != model:
        log.warning("archive_vectors_rebuilt", old=stored_model, new=model)
        conn.execute("DELETE FROM post_vectors")
        rebuilt = True
    set_meta(conn, MODEL_KEY, model)
    todo = [
        rid
        for (rid,) in conn.execute(
            "SELECT rowid FROM posts WHERE rowid NOT IN (SELECT rid FROM post_vectors) "
            "ORDER BY rowid"
        )
    ]
    decode = codec_of(conn).decode
    done = 0
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        marks = ",".join("?" * len(batch))
        docs = conn.execute(
            f"SELECT rowid, doc FROM posts WHERE rowid IN ({marks})",  # noqa: S608
            batch,
        ).fetchall()
        texts = [thread_text(decode(doc)) for _, doc in docs]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float16)
        with conn:
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT OR REPLACE INTO post_vectors (rid, vec) VALUES (?, ?)",
                [(rid, vector.tobytes()) for (rid, _), vector in zip(docs, vectors, strict=True)],
            )
        done += len(batch)
        if progress is not None:
            progress(done, len(todo))
    total = int(conn.execute("SELECT count(*) FROM posts").fetchone()[0])
    seconds = round(time.perf_counter() - started, 3)
    return EmbedReport(embedded=done, total=total, seconds=seconds, model=model, rebuilt=rebuilt)


def archive_missing_vectors(path: Path) -> int:
    """Threads of the archive at ``path`` without a vector."""
    conn = db.open_readonly(path)
    try:
        return missing_count(conn)
    except sqlite3.Error as exc:
        raise ArchiveError(f"reading archive {path} failed: {exc}") from exc
    finally:
        conn.close()


def embed_archive(
    path: Path, embedder: Embedder, *, progress: Progress | None = None
) -> EmbedReport:
    """``embed_missing`` on the archive at ``path``, opened for writing."""
    if not path.is_file():
        raise ArchiveError(f"archive {path} does not exist; {db.HINT}")
    conn = db.connect(path)
    try:
        return embed_missing(conn, embedder, progress=progress)
    except sqlite3.Error as exc:
        raise ArchiveError(f"storing vectors in archive {path} failed: {exc}") from exc
    finally:
        conn.close()


@dataclass(frozen=True)
class VectorIndex:
    """Every stored vector of an archive, read once: row ids and a float32 matrix."""

    rids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    model: str
    version: tuple[int, int]

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> VectorIndex | None:
        """The archive's vectors; None when it has none."""
        if not has_vectors(conn):
            return None
        model = get_meta(conn, MODEL_KEY)
        rows = conn.execute("SELECT rid, vec FROM post_vectors ORDER BY rid").fetchall()
        if model is None or not rows:
            return None
        rids = np.fromiter((rid for rid, _ in rows), dtype=np.int64, count=len(rows))
        half = np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float16)
        matrix: npt.NDArray[np.float32] = half.reshape(len(rows), -1).astype(np.float32)
        return cls(rids=rids, matrix=matrix, model=model, version=version_of(conn))


def version_of(conn: sqlite3.Connection) -> tuple[int, int]:
    """What changes when vectors are added or removed: their count and highest row id."""
    if not has_vectors(conn):
        return (0, 0)
    count, top = conn.execute("SELECT count(*), coalesce(max(rid), 0) FROM post_vectors").fetchone()
    return (int(count), int(top))


def nearest(
    conn: sqlite3.Connection,
    index: VectorIndex,
    vector: npt.NDArray[np.float32],
    *,
    subreddits: Sequence[str],
    since: int,
    limit: int,
) -> list[int]:
    """Row ids of the posts of ``subreddits`` created at or after ``since`` whose vectors are
    closest to ``vector`` (at least ``MIN_SIMILARITY``), best first, at most ``limit``."""
    scores = index.matrix @ np.asarray(vector, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] >= MIN_SIMILARITY]
    marks = ",".join("?" * len(subreddits))
    found: list[int] = []
    for start in range(0, len(order), CANDIDATE_SPAN):
        span = [int(rid) for rid in index.rids[order[start : start + CANDIDATE_SPAN]]]
        rows = conn.execute(
            f"SELECT rowid FROM posts WHERE rowid IN ({','.join('?' * len(span))}) "  # noqa: S608
            f"AND subreddit IN ({marks}) AND created_utc >= ?",
            [*span, *subreddits, since],
        ).fetchall()
        kept = {rid for (rid,) in rows}
        found += [rid for rid in span if rid in kept]
        if len(found) >= limit:
            break
    return found[:limit]
