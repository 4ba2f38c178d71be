"""What an archive holds, per subreddit: so users know what ``--source archive`` can answer."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from crowdsift.sources.archive import db

_STATS_SQL = """
SELECT subreddit, sum(n_posts), sum(n_comments), min(first), max(last) FROM (
    SELECT subreddit, count(*) AS n_posts, 0 AS n_comments,
           min(nullif(created_utc, 0)) AS first, max(created_utc) AS last
    FROM posts GROUP BY subreddit
    UNION ALL
    SELECT subreddit, 0, count(*), min(nullif(created_utc, 0)), max(created_utc)
    FROM comments GROUP BY subreddit
)
GROUP BY subreddit
ORDER BY sum(n_posts) DESC, sum(n_comments) DESC, subreddit
"""


class SubredditStats(BaseModel):
    """Counts for one subreddit; dates span its posts and comments (UTC)."""

    subreddit: str
    posts: int
    comments: int
    first_created: datetime | None
    last_created: datetime | None


def _when(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def archive_stats(path: Path) -> list[SubredditStats]:
    """Per-subreddit counts of an archive, most posts first. Raises ArchiveError if unusable."""
    conn = db.open_readonly(path)
    try:
        rows = conn.execute(_STATS_SQL).fetchall()
    finally:
        conn.close()
    return [
        SubredditStats(
            subreddit=sub,
            posts=int(posts),
            comments=int(comments),
            first_created=_when(first),
            last_created=_when(last),
        )
        for sub, posts, comments, first, last in rows
    ]
