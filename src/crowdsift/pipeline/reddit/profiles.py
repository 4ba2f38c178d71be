"""What each archived subreddit is about: its best-scored titles, for the local planner."""

from __future__ import annotations

from pathlib import Path

from crowdsift.core.text import clean_text
from crowdsift.pipeline.reddit.planner import SubredditProfile
from crowdsift.sources.archive.db import open_readonly


def subreddit_profiles(path: Path, *, per_subreddit: int = 30) -> list[SubredditProfile]:
    """One profile per subreddit: its name and its ``per_subreddit`` highest-scored titles."""
    conn = open_readonly(path)
    try:
        rows = conn.execute(
            """
            SELECT subreddit, title FROM (
                SELECT subreddit, title,
                       ROW_NUMBER() OVER (PARTITION BY subreddit ORDER BY score DESC, id) AS n
                FROM posts
            ) WHERE n <= ? ORDER BY subreddit, n
            """,
            (per_subreddit,),
        ).fetchall()
    finally:
        conn.close()
    titles: dict[str, list[str]] = {}
    for subreddit, title in rows:
        titles.setdefault(subreddit, []).append(clean_text(title))
    return [
        SubredditProfile(name=name, description="; ".join(t for t in items if t))
        for name, items in titles.items()
    ]
