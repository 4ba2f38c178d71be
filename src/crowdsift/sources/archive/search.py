"""Searching an archive the way Reddit's ``/r/{sub}/search?restrict_sr=1`` does.

- **Query**: the user's term becomes a *safe* FTS5 expression. Every word is a quoted string
  (``"`` doubled), so ``plaud.ai``, ``c++``, ``-``, ``:``, ``*`` or an unbalanced quote can never
  be FTS5 syntax; ``"quoted phrase"`` stays a phrase; whitespace-separated words are ANDed and
  a literal uppercase ``OR`` between words means OR (``a b OR c`` = ``(a AND b) OR c``).
  Uppercase ``AND`` is Reddit's explicit form of the default and is dropped. Words with no
  letter or digit (``-``, ``&``) index nothing and are dropped. Words match title or body;
  the subreddit is matched inside the index as well (a cheap intersection) and then exactly.
- **Sort**: ``relevance`` = bm25 with the title weighted 4× the body; ``new`` = newest first;
  ``top`` = highest score; ``comments`` = most comments; ``hot`` = Reddit's published hot
  formula (log10 score + age/45000 s) over the stored score, which is the score at archive
  time, so it approximates what "hot" was then, not now.
- **Time filter**: ``created_utc >= now - window`` with the caller's clock (hour, day, week,
  month = 30 days, year = 365 days, all = no bound).
- **Cursor**: ``after`` is ``t3_<id>`` of the last post of the page, like Reddit's. The next
  page is a keyset query strictly past that post's (sort key, rowid), so pages never repeat
  a post even if other posts are imported meanwhile; it is None on the last page.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.errors import ArchiveError, SubredditUnavailableError
from crowdsift.core.log import get_logger
from crowdsift.core.source import RawThing, SearchPage
from crowdsift.sources.archive.normalise import normalise_comment, normalise_post
from crowdsift.sources.archive.parse import bare_id

log = get_logger(__name__)

TITLE_WEIGHT = 4.0
TIME_WINDOWS: dict[str, int] = {
    "hour": 3600,
    "day": 86_400,
    "week": 7 * 86_400,
    "month": 30 * 86_400,
    "year": 365 * 86_400,
}
_SORT_KEYS: dict[str, tuple[str, str]] = {
    "relevance": (f"bm25(posts_fts, {TITLE_WEIGHT}, 1.0, 0.0)", "ASC"),
    "new": ("p.created_utc", "DESC"),
    "top": ("p.score", "DESC"),
    "comments": ("p.num_comments", "DESC"),
    "hot": ("crowdsift_hot(p.score, p.created_utc)", "DESC"),
}
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_NO_LOWER_BOUND = -(2**62)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_ALPHA_WORD = re.compile(r"[^\W\d_]{4,}")


def _loose(word: str) -> str:
    """A plain word of 4+ letters as a prefix of its stem, so "tapcon" finds "Tapcons" and
    "anchors" finds "anchor" (the index has no stemmer); anything else exactly."""
    if not _ALPHA_WORD.fullmatch(word):
        return _quote(word)
    lowered = word.lower()
    if len(lowered) >= 5 and lowered.endswith("s") and not lowered.endswith("ss"):
        word = word[:-1]
    return _quote(word) + "*"


def _phrase(text: str) -> str:
    """A quoted phrase of plain words as those words within one token of each other, each
    loose; a phrase with other tokens ("plaud.ai app", "WH-1000XM5") exactly as written."""
    words = text.split()
    if len(words) < 2 or not all(_ALPHA_WORD.fullmatch(w) or w.isalpha() for w in words):
        return _loose(text) if len(words) == 1 else _quote(text)
    return "NEAR(" + " ".join(_loose(w) for w in words) + ", 1)"


def build_match(term: str) -> str | None:
    """The user's search term as a safe FTS5 expression over title and body; None if empty.

    Words are ANDed, a literal upper-case ``OR`` separates alternatives, and plain words match
    loosely (``_loose``: plural or singular); punctuated words (versions, model numbers,
    domains) match exactly."""
    groups: list[list[str]] = [[]]
    # FTS5's parser ends a string at NUL ("unterminated string"): NUL separates words instead.
    for match in _TOKEN.finditer(term.replace("\x00", " ")):
        phrase, word = match.group(1), match.group(2)
        if word == "OR":
            groups.append([])
            continue
        if word == "AND":
            continue
        text = phrase if phrase is not None else word
        if not any(ch.isalnum() for ch in text):
            continue
        groups[-1].append(_phrase(text) if phrase is not None else _loose(text))
    clauses = [" AND ".join(group) for group in groups if group]
    if not clauses:
        return None
    return "{title selftext} : (" + " OR ".join(f"({clause})" for clause in clauses) + ")"


def normalise_subreddit_name(name: str) -> str:
    """'/r/HomeImprovement/' → 'homeimprovement' (archives store subreddits lowercased)."""
    cleaned = name.strip().strip("/")
    if cleaned[:2].lower() == "r/":
        cleaned = cleaned[2:]
    return cleaned.strip().lower()


def lower_bound(time_filter: TimeFilter, now: datetime) -> int:
    """The oldest ``created_utc`` a ``time_filter`` admits, relative to ``now``."""
    window = TIME_WINDOWS.get(time_filter)
    if window is None:
        return _NO_LOWER_BOUND
    aware = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    return int(aware.timestamp()) - window


def search_posts(
    conn: sqlite3.Connection,
    subreddit: str,
    term: str,
    *,
    sort: SearchSort,
    time_filter: TimeFilter,
    limit: int,
    after: str | None,
    now: datetime,
    archive: str = "the archive",
) -> SearchPage:
    """One page of posts in ``subreddit`` matching ``term``; raw t3 dicts, normalised."""
    sub = normalise_subreddit_name(subreddit)
    if conn.execute("SELECT 1 FROM posts WHERE subreddit = ? LIMIT 1", (sub,)).fetchone() is None:
        raise SubredditUnavailableError(
            sub, f"not in {archive}; `crowdsift archive stats` lists the subreddits it holds"
        )
    limit = max(1, min(int(limit), 100))
    words = build_match(term)
    if words is None:
        log.info("archive_search_empty_query", subreddit=sub, term=term)
        return SearchPage(posts=[], after=None)
    if sort not in _SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r}; use one of {sorted(_SORT_KEYS)}")
    key, direction = _SORT_KEYS[sort]
    params: dict[str, object] = {
        "match": f"subreddit : {_quote(sub)} AND {words}",
        "sub": sub,
        "since": lower_bound(time_filter, now),
        "limit": limit + 1,
    }
    # Only fixed fragments (sort keys, directions) are formatted in; values are parameters.
    base = (
        f"SELECT p.id AS id, p.raw AS raw, {key} AS sort_key, p.rowid AS rid "  # noqa: S608
        "FROM posts_fts JOIN posts AS p ON p.rowid = posts_fts.rowid "
        "WHERE posts_fts MATCH :match AND p.subreddit = :sub AND p.created_utc >= :since"
    )
    keyset = ""
    if after is not None:
        position = conn.execute(
            f"SELECT sort_key, rid FROM ({base}) WHERE id = :after_id",  # noqa: S608
            {**params, "after_id": _cursor_id(after)},
        ).fetchone()
        if position is None:
            log.warning("archive_cursor_not_in_results", subreddit=sub, term=term, after=after)
            return SearchPage(posts=[], after=None)
        params["key"], params["rid"] = position
        keyset = f"WHERE (sort_key, rid) {'>' if direction == 'ASC' else '<'} (:key, :rid) "
    rows = conn.execute(
        f"SELECT id, raw FROM ({base}) {keyset}"  # noqa: S608
        f"ORDER BY sort_key {direction}, rid {direction} LIMIT :limit",
        params,
    ).fetchall()
    page = rows[:limit]
    next_after = f"t3_{page[-1][0]}" if len(rows) > limit else None
    return SearchPage(posts=[normalise_post(json.loads(raw)) for _, raw in page], after=next_after)


def _cursor_id(after: str) -> str:
    if not after.startswith("t3_") or len(after) <= 3:
        raise ArchiveError(
            f"after={after!r} is not a cursor this archive hands out (expected t3_<id>); "
            "pass the `after` of the previous page unchanged"
        )
    return after[3:]


def top_level_comments(conn: sqlite3.Connection, post_id: str, *, limit: int) -> list[RawThing]:
    """Direct replies to one post (parent is the post), highest score first, as raw t1 dicts."""
    if limit <= 0:
        return []
    link = bare_id(post_id)
    rows = conn.execute(
        "SELECT raw FROM comments WHERE link_id = ? AND parent_id = ? "
        "ORDER BY score DESC, created_utc ASC, rowid ASC LIMIT ?",
        (link, f"t3_{link}", int(limit)),
    ).fetchall()
    return [normalise_comment(json.loads(raw)) for (raw,) in rows]


def thread_comments(conn: sqlite3.Connection, post_id: str) -> list[RawThing]:
    """Every stored comment of one post, any depth, as raw t1 dicts in import order.

    For comment trees (``crowdsift.sources.reddit.threads.comment_tree`` orders and cuts them); the
    ``(link_id, parent_id)`` index serves the lookup.
    """
    rows = conn.execute(
        "SELECT raw FROM comments WHERE link_id = ? ORDER BY rowid ASC", (bare_id(post_id),)
    ).fetchall()
    return [normalise_comment(json.loads(raw)) for (raw,) in rows]
