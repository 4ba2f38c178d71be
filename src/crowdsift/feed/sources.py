"""Where ``crowdsift index`` gets posts: a saved FetchResult, or a whole local archive.

A FetchResult's posts are already approved and scored; they are indexed as they are. An
archive holds everything that was imported, so its posts go through the same veto and
cleaning as a fetch (deleted, removed, NSFW and ad posts never reach a feed) and keep their
approved top-level comments. There is no question when indexing an archive, so those posts
carry ``relevance_score`` 0 and no matched keywords.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from crowdsift.core.errors import ConfigError
from crowdsift.core.models import FetchResult, Post
from crowdsift.core.source import RawThing
from crowdsift.core.text import clean_text
from crowdsift.pipeline.fetch.filtering import (
    FilterConfig,
    ScreenedPost,
    author_pseudonym,
    build_post_model,
    filter_comments,
    raw_id,
)
from crowdsift.pipeline.fetch.relevance import RelevanceResult
from crowdsift.sources.archive.db import open_readonly
from crowdsift.sources.archive.search import all_posts, top_level_comments
from crowdsift.sources.reddit.validation import veto_post


def posts_from_fetch_result(path: Path) -> list[Post]:
    """The posts of a FetchResult JSON file (``crowdsift fetch --json`` output)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist; pass a FetchResult JSON file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        return FetchResult.model_validate_json(text).posts
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise ConfigError(
            f"{path} is not a FetchResult ({where}: {first['msg']}); produce one with "
            "`crowdsift fetch --plan PLAN.json --json > result.json`, or index an archive "
            "with --archive"
        ) from exc


def count_archive_posts(path: Path) -> int:
    conn = open_readonly(path)
    try:
        (total,) = conn.execute("SELECT COUNT(*) FROM posts").fetchone()
        return int(total)
    finally:
        conn.close()


def iter_archive_posts(
    path: Path,
    config: FilterConfig,
    *,
    max_comments: int = 20,
    fetched_at: datetime | None = None,
    rejected: list[str] | None = None,
) -> Iterator[Post]:
    """Every archive post that passes the veto, cleaned, with its approved top comments.

    Ids of posts that were dropped are appended to ``rejected`` (when given) with the reason.
    """
    stamp = fetched_at or datetime.now(UTC)
    conn = open_readonly(path)
    try:
        for raw in all_posts(conn):  # ArchiveError for a record that cannot be read back
            post = _archive_post(conn, raw, config, max_comments, stamp, rejected)
            if post is not None:
                yield post
    finally:
        conn.close()


def _archive_post(
    conn: sqlite3.Connection,
    raw: RawThing,
    config: FilterConfig,
    max_comments: int,
    stamp: datetime,
    rejected: list[str] | None,
) -> Post | None:
    post_id = raw_id(raw)
    vetoed = veto_post(raw)
    if vetoed is not None:
        if rejected is not None:
            rejected.append(f"{post_id}: {vetoed.value}")
        return None
    title = clean_text(_string(raw.get("title")))
    body = clean_text(_string(raw.get("selftext")))
    comments, _ = filter_comments(
        post_id,
        top_level_comments(conn, post_id, limit=max_comments),
        config=config,
        source="archive",
        fetched_at=stamp,
    )
    no_question = RelevanceResult(0.0, [], [], passed=True)
    screened = ScreenedPost(raw, post_id, title, body, no_question, author_pseudonym(raw, config))
    try:
        return build_post_model(screened, comments, source="archive", fetched_at=stamp)
    except (ValidationError, ValueError) as exc:
        if rejected is not None:
            rejected.append(f"{post_id}: invalid ({str(exc).splitlines()[0]})")
        return None


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""
