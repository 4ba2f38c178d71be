"""The plain baseline crowdsift must beat (``crowdsift eval --baseline``), measured in the same run.

SQLite FTS5 BM25 over every thread of the archive: a thread's document is its title, its body
and its ``INDEXED_REPLIES`` best-voted direct replies; no subreddit choice, no time window, no
model. The query is the question's words (lower-cased alphanumeric tokens minus ``STOP_WORDS``)
OR'd, each quoted so no word is FTS5 syntax. Its answer is what a person skimming would read:
the ``ANSWER_REPLIES`` best-voted replies of the ``ANSWER_THREADS`` best threads (its lead is the
first of them), and its thread ranking is the BM25 order. It never abstains.

The archive is read through its own reading code (``db.open_readonly``, ``search.all_posts``,
``search.top_level_comments``) into an in-memory index, once per run: fine for an evaluation
archive (~1,000 threads take well under a second), not meant for a full monthly dump.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from pydantic import BaseModel

from crowdsift.sources.archive.db import open_readonly
from crowdsift.sources.archive.search import all_posts, top_level_comments

INDEXED_REPLIES = 10
ANSWER_THREADS = 2
ANSWER_REPLIES = 3
RANKED = 100
"""Threads of the ranking kept: a thread below this counts as absent (reciprocal rank 0)."""
_LUCENE_ENGLISH_STOP = """
    a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with
"""
STOP_WORDS = frozenset(_LUCENE_ENGLISH_STOP.split())
"""Lucene's classic English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``): the plain
list a plain baseline uses, not crowdsift's own tuned one."""
_GONE = frozenset({"[deleted]", "[removed]"})
_WORD = re.compile(r"[a-z0-9]+")


class BaselineAnswer(BaseModel):
    """The baseline's answer to one question: its thread ranking and the replies it shows."""

    threads: list[str]
    replies: list[str]

    @property
    def text(self) -> str:
        return "\n\n".join(self.replies)

    @property
    def lead(self) -> str:
        return self.replies[0] if self.replies else ""


def fts_query(question: str) -> str:
    """The question's words, minus stop words, each quoted, OR'd ("" when none is left)."""
    words = dict.fromkeys(w for w in _WORD.findall(question.lower()) if w not in STOP_WORDS)
    return " OR ".join(f'"{word}"' for word in words)


class Bm25Baseline:
    """An in-memory FTS5 index of an archive's threads, ranked by ``bm25()``."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE threads USING fts5(id UNINDEXED, title, body, replies)"
        )
        self._replies: dict[str, list[str]] = {}

    @classmethod
    def from_archive(cls, path: Path) -> Bm25Baseline:
        """Index every thread of the archive at ``path`` (read-only; never modified)."""
        baseline = cls()
        archive = open_readonly(path)
        try:
            for post in all_posts(archive):
                found = top_level_comments(archive, post["id"], limit=INDEXED_REPLIES)
                replies = [str(c["body"]) for c in found if str(c["body"]).strip() not in _GONE]
                baseline.add(str(post["id"]), str(post["title"]), str(post["selftext"]), replies)
        finally:
            archive.close()
        return baseline

    def add(self, post_id: str, title: str, body: str, replies: list[str]) -> None:
        """One thread: ``replies`` are its direct replies, best-voted first."""
        self._db.execute(
            "INSERT INTO threads (id, title, body, replies) VALUES (?, ?, ?, ?)",
            (post_id, title, body, "\n".join(replies)),
        )
        self._replies[post_id] = replies

    def answer(self, question: str) -> BaselineAnswer:
        """The BM25 ranking for ``question`` and the replies its best threads show."""
        query = fts_query(question)
        rows = self._db.execute(
            "SELECT id FROM threads WHERE threads MATCH ? ORDER BY bm25(threads) LIMIT ?",
            (query, RANKED),
        ).fetchall() if query else []  # fmt: skip
        threads = [str(post_id) for (post_id,) in rows]
        replies = [
            reply for post_id in threads[:ANSWER_THREADS]
            for reply in self._replies[post_id][:ANSWER_REPLIES]
        ]  # fmt: skip
        return BaselineAnswer(threads=threads, replies=replies)

    def close(self) -> None:
        self._db.close()
