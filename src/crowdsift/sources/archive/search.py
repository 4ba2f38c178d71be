"""Searching an archive the way Reddit's ``/r/{sub}/search?restrict_sr=1`` does.

- **Query**: the user's term becomes a *safe* FTS5 expression. Every word is a quoted string
  (``"`` doubled), so ``plaud.ai``, ``c++``, ``-``, ``:``, ``*`` or an unbalanced quote can never
  be FTS5 syntax; ``"quoted phrase"`` stays a phrase; whitespace-separated words are ANDed and
  a literal uppercase ``OR`` between words means OR (``a b OR c`` = ``(a AND b) OR c``).
  Uppercase ``AND`` is Reddit's explicit form of the default and is dropped. Words with no
  letter or digit (``-``, ``&``) index nothing and are dropped. Words match title or body;
  the subreddit is matched inside the index as well (a cheap intersection) and then exactly.
- **Comments**: a thread is found through its comments too (answers on Reddit live there):
  the ``COMMENT_HITS`` best-matching of the subreddit's ``COMMENT_WINDOW`` newest matching
  comments bring their threads in, whether or not the post's own text matches (bounded, so
  a common word in millions of comments costs one short index walk). Ranked by relevance, a
  thread counts its best match, a comment's at ``COMMENT_WEIGHT`` of a post's.
- **Sort**: ``relevance`` = bm25 with the title weighted 4× the body, among the last
  ``POST_WINDOW`` matches imported; ``new`` = newest first;
  ``top`` = highest score; ``comments`` = most comments; ``hot`` = Reddit's published hot
  formula (log10 score + age/45000 s) over the stored score, which is the score at archive
  time, so it approximates what "hot" was then, not now.
- **Time filter**: ``created_utc >= now - window`` with the caller's clock (hour, day, week,
  month = 30 days, year = 365 days, all = no bound); ``since`` (``--since``) raises that bound
  to its first whole second.
- **Cursor**: ``after`` is ``t3_<id>`` of the last post of the page, like Reddit's. The next
  page is a keyset query strictly past that post's (sort key, rowid) — remembered from the page
  that ended there (``Positions``), else looked up — so pages never repeat
  a post even if other posts are imported meanwhile; it is None on the last page.
- **Read-ahead**: a search reads up to ``READ_AHEAD`` results, not one page: ranking them is the
  cost, reading a few more is nearly free. The next pages of that walk (a fetch's second page,
  the relevance gate's refetch) are served from what was read, without searching again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.errors import ArchiveError, SubredditUnavailableError
from crowdsift.core.log import get_logger
from crowdsift.core.since import since_epoch
from crowdsift.core.source import RawThing, SearchPage
from crowdsift.sources.archive.db import codec_of
from crowdsift.sources.archive.fts_query import build_match, build_terms, subreddit_tokens
from crowdsift.sources.archive.normalise import normalise_comment, normalise_post
from crowdsift.sources.archive.parse import bare_id, subreddit_key
from crowdsift.sources.archive.vectors import VectorIndex, nearest

log = get_logger(__name__)

TITLE_WEIGHT = 4.0
COMMENT_WEIGHT = 0.5
"""A comment's bm25 counts half a post's: the thread whose own post matches ranks first."""
COMMENT_HITS = 300
"""Best-matching comments per search whose threads join the results."""
COMMENT_WINDOW = 5000
"""How many of the newest matching comments are ranked for that: bounded, so a common word in
a subreddit of millions of comments costs one short index walk, not a ranking of them all."""
POST_WINDOW = 5000
"""The same bound for ranking posts by relevance: the best of the ``POST_WINDOW`` matching
posts imported last (the newest, for dumps written in time order). A specific search
("tapcon") matches fewer and is ranked exactly; a common one ("worth it": 19,000 of one
subreddit's 40,000 posts in a 2M-record archive) costs a bounded bm25 instead of one over
every match, which grew with the archive (75 ms of 260 there)."""
READ_AHEAD = 100
"""Results a search reads at once (ids, sort keys and rowids only; the records of a page are
read when it is served). The gate's refetch continues every walk by a page of 25 or 50: on a
2M-record archive each of those pages cost a whole search again (115–190 ms)."""
AHEAD_SLACK_SECONDS = 60
"""How far a time window may have moved since results were read ahead for it and still have
them served: a walk's next page comes seconds later; an hour later, it is searched again."""
TIME_WINDOWS: dict[str, int] = {
    "hour": 3600,
    "day": 86_400,
    "week": 7 * 86_400,
    "month": 30 * 86_400,
    "year": 365 * 86_400,
}
_SORT_KEYS: dict[str, tuple[str, str]] = {
    "relevance": ("b.rank", "ASC"),
    "new": ("p.created_utc", "DESC"),
    "top": ("p.score", "DESC"),
    "comments": ("p.num_comments", "DESC"),
    "hot": ("crowdsift_hot(p.score, p.created_utc)", "DESC"),
}
_NO_LOWER_BOUND = -(2**62)


MATCHED_SUBREDDITS = 8
"""Up to this many subreddits in one search are also matched inside the index (a cheap
intersection that keeps a common word's walk short); more are only filtered exactly."""


def held_subreddits(conn: sqlite3.Connection, subreddit: str, archive: str) -> list[str]:
    """The subreddits of ``subreddit`` (one name or Reddit's ``a+b+c``) that the archive holds.

    A multireddit searches those it holds and names the others in a warning; raises
    ``SubredditUnavailableError`` when it holds none of them."""
    parts = (subreddit_key(part) for part in subreddit.split("+"))
    names = list(dict.fromkeys(name for name in parts if name))
    held = [
        name
        for name in names
        if conn.execute("SELECT 1 FROM posts WHERE subreddit = ? LIMIT 1", (name,)).fetchone()
    ]
    if not held:
        reason = f"not in {archive}; `crowdsift archive stats` lists the subreddits it holds"
        if any(_has_comments(conn, name) for name in names):
            reason = (
                f"{archive} holds comments of it but none of their posts, and the search finds "
                "threads by their posts: import the posts too (a dump of its submissions, the "
                "threads' saved API JSON or a posts CSV)"
            )
        raise SubredditUnavailableError("+".join(names) or subreddit, reason)
    if len(held) < len(names):
        log.warning("archive_subreddits_not_held", missing=[n for n in names if n not in held])
    return held


def _has_comments(conn: sqlite3.Connection, name: str) -> bool:
    """Whether comments of ``name`` are indexed (asked of the index: the table has no
    subreddit index, and this is only asked when a search found no posts there)."""
    query = f"subreddit : {subreddit_tokens(name)}"
    sql = "SELECT EXISTS (SELECT 1 FROM comments_fts WHERE comments_fts MATCH ?)"
    return bool(conn.execute(sql, (query,)).fetchone()[0])


def _subreddits_match(subs: list[str]) -> str:
    """The index-side subreddit condition of a search (with its ``AND``), or nothing when the
    search covers more subreddits than are worth matching in the index."""
    if len(subs) > MATCHED_SUBREDDITS:
        return ""
    either = " OR ".join(subreddit_tokens(name) for name in subs)
    return f"subreddit : ({either}) AND "


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
    since: datetime | None = None,
    positions: Positions | None = None,
) -> SearchPage:
    """One page of posts in ``subreddit`` matching ``term``; raw t3 dicts, normalised.

    ``positions`` remembers where each page ended (its last post's sort key and rowid), so the
    next page starts there instead of running the whole search once more to find its cursor
    (a continuation page cost two searches); a cursor it does not know is looked up as before.
    """
    subs = held_subreddits(conn, subreddit, archive)
    sub = "+".join(subs)
    limit = max(1, min(int(limit), 100))
    words = build_match(term)
    if words is None:
        log.info("archive_search_empty_query", subreddit=sub, term=term)
        return SearchPage(posts=[], after=None)
    if sort not in _SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r}; use one of {sorted(_SORT_KEYS)}")
    key, direction = _SORT_KEYS[sort]
    bound = _bound(time_filter, now, since)
    params = _search_params(subs, term, words, bound)
    base = _search_sql(sort, key, len(subs))
    # A walk is its search and its window's *name*: "month" is a bound that moves every second,
    # and keying on the bound itself sent every next page of such a walk through ``_lookup``.
    search_key = (sub, term, sort, time_filter, since)
    resume = None
    if after is not None:
        resume = positions.get((*search_key, _cursor_id(after))) if positions else None
    fresh = resume is not None and abs(bound - resume.bound) <= AHEAD_SLACK_SECONDS
    if resume is not None and fresh and (resume.complete or len(resume.ahead) > limit):
        rows, complete = list(resume.ahead), resume.complete  # read with an earlier page
    else:
        position = None
        if after is not None:
            position = resume.position if resume is not None else _lookup(conn, base, params, after)
            if position is None:
                log.warning("archive_cursor_not_in_results", subreddit=sub, term=term, after=after)
                return SearchPage(posts=[], after=None)
        rows, complete = _read_rows(conn, base, params, position, direction, limit)
    page = rows[:limit]
    next_after = f"t3_{page[-1][0]}" if len(rows) > limit or not complete else None
    if next_after is not None and positions is not None:
        last_id, last_key, last_rid = page[-1]
        positions.put(
            (*search_key, last_id), Resume((last_key, last_rid), rows[limit:], complete, bound)
        )
    return SearchPage(posts=_posts_by_rowid(conn, [rid for _, _, rid in page]), after=next_after)


def _search_params(subs: list[str], term: str, words: str, bound: int) -> dict[str, object]:
    """The search's values, every one a parameter: the posts' and comments' FTS5 queries
    within the subreddits, the windows, the time bound, the subreddits."""
    within = _subreddits_match(subs)
    return {
        "match": f"{within}{words}",
        "comment_match": f"{within}body : {build_terms(term, positions=False)}",
        "comment_hits": COMMENT_HITS,
        "comment_window": COMMENT_WINDOW,
        "post_window": POST_WINDOW,
        "since": bound,
        **{f"sub{n}": name for n, name in enumerate(subs)},
    }


def _search_sql(sort: SearchSort, key: str, subreddits: int) -> str:
    """The query of every matching post with its sort key and rowid (not yet ordered or cut).

    Only fixed fragments (sort keys, directions, weights) are formatted in; values are
    parameters. Posts are ranked only when the sort needs it, and then among the newest
    ``POST_WINDOW`` matches; comments among the newest ``COMMENT_WINDOW`` matches (rowid order
    lets FTS5 stop there), the best ``COMMENT_HITS`` kept. The matches drive the join (CROSS
    JOIN fixes the order): left to itself, the planner walks the subreddit's whole
    (subreddit, score) index and probes the matches, a cost that grows with the archive
    (185 ms for a search matching nothing in a 2M-record archive, not 4 ms).
    """
    in_subs = ", ".join(f":sub{n}" for n in range(subreddits))
    if sort == "relevance":
        post_hits = (
            f"SELECT rowid, bm25(posts_fts, {TITLE_WEIGHT}, 1.0, 0.0) FROM posts_fts "  # noqa: S608
            "WHERE posts_fts MATCH :match ORDER BY rowid DESC LIMIT :post_window"
        )
    else:
        post_hits = "SELECT rowid, 0.0 FROM posts_fts WHERE posts_fts MATCH :match"
    return (
        "WITH hits (rid, rank) AS ("  # noqa: S608
        f"SELECT * FROM ({post_hits}) "
        f"UNION ALL SELECT p.rowid, hit.rank * {COMMENT_WEIGHT} FROM ("
        "SELECT rowid, rank FROM (SELECT rowid, rank FROM comments_fts "
        "WHERE comments_fts MATCH :comment_match ORDER BY rowid DESC LIMIT :comment_window) "
        "ORDER BY rank LIMIT :comment_hits) AS hit "
        "JOIN comments AS c ON c.rowid = hit.rowid JOIN posts AS p ON p.id = c.link_id), "
        "b (rid, rank) AS (SELECT rid, min(rank) FROM hits GROUP BY rid) "
        f"SELECT p.id AS id, {key} AS sort_key, p.rowid AS rid "
        "FROM b CROSS JOIN posts AS p ON p.rowid = b.rid "
        f"WHERE p.subreddit IN ({in_subs}) AND p.created_utc >= :since"
    )


def _read_rows(
    conn: sqlite3.Connection,
    base: str,
    params: dict[str, object],
    position: tuple[object, int] | None,
    direction: str,
    limit: int,
) -> tuple[list[tuple[str, object, int]], bool]:
    """The rows after ``position`` (from the start when None), ``READ_AHEAD`` of them or one
    more than the page, and whether that is all there are."""
    keyset = ""
    if position is not None:
        params["key"], params["rid"] = position
        keyset = f"WHERE (sort_key, rid) {'>' if direction == 'ASC' else '<'} (:key, :rid) "
    read = params["limit"] = max(limit + 1, READ_AHEAD)
    rows = conn.execute(
        f"SELECT id, sort_key, rid FROM ({base}) {keyset}"  # noqa: S608
        f"ORDER BY sort_key {direction}, rid {direction} LIMIT :limit",
        params,
    ).fetchall()
    return rows, len(rows) < read


def _lookup(
    conn: sqlite3.Connection, base: str, params: dict[str, object], after: str
) -> tuple[object, int] | None:
    """A cursor's (sort key, rowid), found by running the search: for a cursor no page of
    this process handed out (another process's, or one evicted from ``Positions``)."""
    return conn.execute(  # type: ignore[no-any-return]
        f"SELECT sort_key, rid FROM ({base}) WHERE id = :after_id",  # noqa: S608
        {**params, "after_id": _cursor_id(after)},
    ).fetchone()


@dataclass(frozen=True)
class Resume:
    """Where a page ended, and the results read past it (``READ_AHEAD``).

    ``complete``: ``ahead`` holds every remaining result; else the next page is served from
    ``ahead`` while it fills a page, and searched from ``position`` after that."""

    position: tuple[object, int]
    ahead: list[tuple[str, object, int]]
    complete: bool
    bound: int
    """The window's lower bound ``ahead`` was read with: rows read for a window that has moved
    on by more than ``AHEAD_SLACK_SECONDS`` are not served (the position still is)."""


class Positions:
    """Where recent pages ended, by search and cursor (bounded, thread-safe): what a next page
    starts from, and the results already read for it (``Resume``). At most ``size`` walks,
    ``READ_AHEAD`` small rows each: a few MB at the most."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._items: OrderedDict[tuple[object, ...], Resume] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> Resume | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[object, ...], resume: Resume) -> None:
        with self._lock:
            self._items[key] = resume
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def _posts_by_rowid(conn: sqlite3.Connection, rowids: list[int]) -> list[RawThing]:
    """The records of a page, in the page's order: read only once the page is known."""
    if not rowids:
        return []
    marks = ",".join("?" * len(rowids))
    docs = dict(
        conn.execute(f"SELECT rowid, doc FROM posts WHERE rowid IN ({marks})", rowids)  # noqa: S608
    )
    decode = codec_of(conn).decode  # a post deleted since its page was read is left out
    return [normalise_post(decode(docs[rid])) for rid in rowids if rid in docs]


def search_by_meaning(
    conn: sqlite3.Connection,
    index: VectorIndex,
    subreddit: str,
    vector: npt.NDArray[np.float32],
    *,
    time_filter: TimeFilter,
    limit: int,
    now: datetime,
    archive: str = "the archive",
    since: datetime | None = None,
) -> SearchPage:
    """The posts of ``subreddit`` (one name or ``a+b+c``) whose title and opening are closest
    in meaning to ``vector``, best first, within the same window a search by words has; one
    page, no cursor (see ``crowdsift.sources.archive.vectors``)."""
    subs = held_subreddits(conn, subreddit, archive)
    rids = nearest(
        conn,
        index,
        vector,
        subreddits=subs,
        since=_bound(time_filter, now, since),
        limit=max(1, min(int(limit), 100)),
    )
    return SearchPage(posts=_posts_by_rowid(conn, rids), after=None)


def _bound(time_filter: TimeFilter, now: datetime, since: datetime | None) -> int:
    """The oldest ``created_utc`` admitted: the time filter's, raised by ``since`` if given."""
    bound = lower_bound(time_filter, now)
    return bound if since is None else max(bound, since_epoch(since))


def _cursor_id(after: str) -> str:
    if not after.startswith("t3_") or len(after) <= 3:
        raise ArchiveError(
            f"after={after!r} is not a cursor this archive hands out (expected t3_<id>); "
            "pass the `after` of the previous page unchanged"
        )
    return after[3:]


def newest_created(conn: sqlite3.Connection, subreddits: Sequence[str]) -> int | None:
    """The ``created_utc`` of the newest post in ``subreddits`` (every one when empty); one
    probe of the ``(subreddit, created_utc)`` index per subreddit."""
    if not subreddits:
        row = conn.execute("SELECT max(created_utc) FROM posts").fetchone()
        return None if row is None or row[0] is None else int(row[0])
    stamps = [
        row[0]
        for name in dict.fromkeys(subreddit_key(s) for s in subreddits)
        if (row := conn.execute(
            "SELECT max(created_utc) FROM posts WHERE subreddit = ?", (name,)
        ).fetchone()) is not None and row[0] is not None
    ]  # fmt: skip
    return max(stamps) if stamps else None


def top_level_comments(conn: sqlite3.Connection, post_id: str, *, limit: int) -> list[RawThing]:
    """Direct replies to one post (parent is the post), highest score first, as raw t1 dicts."""
    if limit <= 0:
        return []
    link = bare_id(post_id)
    rows = conn.execute(
        "SELECT doc FROM comments WHERE link_id = ? AND parent_id = ? "
        "ORDER BY score DESC, created_utc ASC, rowid ASC LIMIT ?",
        (link, f"t3_{link}", int(limit)),
    ).fetchall()
    decode = codec_of(conn).decode
    return [normalise_comment(decode(doc)) for (doc,) in rows]


def thread_comments(conn: sqlite3.Connection, post_id: str) -> list[RawThing]:
    """Every stored comment of one post, any depth, as raw t1 dicts in import order.

    For comment trees (``crowdsift.sources.reddit.threads.comment_tree`` orders and cuts them); the
    ``(link_id, parent_id)`` index serves the lookup.
    """
    rows = conn.execute(
        "SELECT doc FROM comments WHERE link_id = ? ORDER BY rowid ASC", (bare_id(post_id),)
    ).fetchall()
    decode = codec_of(conn).decode
    return [normalise_comment(decode(doc)) for (doc,) in rows]


def all_posts(conn: sqlite3.Connection) -> Iterator[RawThing]:
    """Every stored post in import order, as raw t3 dicts (normalised), one at a time."""
    decode = codec_of(conn).decode
    for (doc,) in conn.execute("SELECT doc FROM posts ORDER BY rowid"):
        yield normalise_post(decode(doc))
