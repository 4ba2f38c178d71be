"""``crowdsift archive purge-deleted``: forget posts their authors deleted or moderators removed.

Every stored post is looked up again at a source (``crowdsift.sources.reddit.lookup``), 100 ids per
request. A post comes out as:

- ``removed``: ``removed_by_category`` set, or ``[removed]`` text;
- ``deleted``: ``[deleted]`` author or text;
- ``missing``: not in the answer. Gone for ``reddit-api`` (Reddit answers every post that
  exists); only unknown for ``arctic-shift`` (it may never have archived it), so kept;
- ``live``: anything else.

Removed, deleted and gone-missing posts are deleted with their comments from the three places
posts are kept: the archive (posts and comments; the FTS index follows by trigger), the comment
store and the feed index (Chroma). Which posts are checked: every post of the archive, plus the
posts the comment store and the feed index got from live sources (``reddit-api``,
``arctic-shift``). Posts those two got from an archive are checked through that archive: the
bundled demo's made-up ids must never be "missing" from Reddit.

Re-running is safe. Each batch is deleted from the feed index and the comment store first and
from the archive last, in its own transaction: the archive is the list of what to check, so a
post whose deletion was interrupted is still listed there and is found again next time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.errors import ArchiveError
from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.core.source import DELETED_MARKERS, RawThing
from crowdsift.core.store import CommentStore
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.sources.archive import db
from crowdsift.sources.archive.demo import HASH_KEY
from crowdsift.sources.archive.paths import default_archive_path
from crowdsift.sources.archive.scrub import scrub_existing
from crowdsift.sources.reddit.lookup import BATCH, PostLookup, build_lookup
from crowdsift.sources.reddit.validation import is_deleted_or_removed

log = get_logger(__name__)

LIVE_SOURCES: tuple[SourceName, ...] = ("reddit-api", "arctic-shift")
_REMOVED_TEXT = frozenset({"[removed]", "[removed by reddit]"})


class Verdict(StrEnum):
    LIVE = "live"
    DELETED = "deleted"
    REMOVED = "removed"
    MISSING = "missing"


def verdict(current: RawThing | None) -> Verdict:
    """What the source's current copy of a post (None: not answered) says about it. A
    ``[deleted]`` author counts as deleted here, unlike in the fetch veto: whoever closed their
    account asked to be forgotten, and purging is the user's choice to honour that."""
    if current is None:
        return Verdict.MISSING
    texts = {str(current.get(key) or "").strip().lower() for key in ("selftext", "title")}
    if current.get("removed_by_category") or texts & _REMOVED_TEXT:
        return Verdict.REMOVED
    author = str(current.get("author") or "").strip().lower()
    if is_deleted_or_removed(current) or author in DELETED_MARKERS:
        return Verdict.DELETED
    return Verdict.LIVE


class PurgedPost(BaseModel):
    """One post found deleted or removed (purged, or listed by ``--dry-run``)."""

    id: str
    subreddit: str | None = None
    verdict: Verdict


class PurgeReport(BaseModel):
    """What one purge did (or, with ``dry_run``, would do)."""

    source: SourceName
    archive: str | None = None
    dry_run: bool = False
    checked: int = 0
    verdicts: dict[Verdict, int] = Field(default_factory=dict)
    missing_kept: int = Field(0, description="missing at a source that may never have had them")
    posts: list[PurgedPost] = Field(default_factory=list)
    archive_posts: int = 0
    archive_comments: int = 0
    comment_store_rows: int = 0
    index_posts: int = 0
    rehashed: int = Field(0, description="archive rows whose usernames were hashed on the way")


@dataclass
class PurgeTargets:
    """Where posts are kept; any may be absent (nothing there to purge)."""

    archive: sqlite3.Connection | None = None
    comment_store: CommentStore | None = None
    index: FeedRetriever | None = None


def purge_deleted(
    lookup: PostLookup,
    targets: PurgeTargets,
    *,
    dry_run: bool = False,
    report: PurgeReport | None = None,
) -> PurgeReport:
    """Check every stored post at ``lookup`` and purge the deleted and removed ones."""
    result = report or PurgeReport(source=lookup.name, dry_run=dry_run)
    live_ids = _live_source_ids(targets)
    for batch in _chunks(live_ids):
        _check(batch, {}, lookup, targets, result, dry_run)
    if targets.archive is not None:
        seen = set(live_ids)
        for rows in _archive_batches(targets.archive):
            subreddits = {post_id: sub for post_id, sub in rows if post_id not in seen}
            if subreddits:
                _check(list(subreddits), subreddits, lookup, targets, result, dry_run)
    log.info(
        "archive_purge_done",
        **result.model_dump(exclude={"posts"}),
        purged=len(result.posts),
    )
    return result


def _live_source_ids(targets: PurgeTargets) -> list[str]:
    """Posts the comment store and the feed index got from Reddit or Arctic Shift directly."""
    ids: list[str] = []
    if targets.index is not None:
        ids += targets.index.post_ids(sources=LIVE_SOURCES)
    if targets.comment_store is not None:
        ids += targets.comment_store.post_ids(sources=LIVE_SOURCES)
    return list(dict.fromkeys(ids))


def _archive_batches(conn: sqlite3.Connection) -> Iterator[list[tuple[str, str]]]:
    """(id, subreddit) of every archive post, ``BATCH`` at a time, by rowid (so deleting the
    rows already read never shifts the next batch)."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT rowid, id, subreddit FROM posts WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (last, BATCH),
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [(str(post_id), str(sub)) for _, post_id, sub in rows]


def _check(
    post_ids: list[str],
    subreddits: dict[str, str],
    lookup: PostLookup,
    targets: PurgeTargets,
    report: PurgeReport,
    dry_run: bool,
) -> None:
    current = lookup.posts(post_ids)
    gone: list[PurgedPost] = []
    for post_id in post_ids:
        found = current.get(post_id)
        outcome = verdict(found)
        report.checked += 1
        report.verdicts[outcome] = report.verdicts.get(outcome, 0) + 1
        if outcome is Verdict.LIVE:
            continue
        if outcome is Verdict.MISSING and not lookup.missing_means_gone:
            report.missing_kept += 1
            continue
        sub = subreddits.get(post_id) or (str(found.get("subreddit") or "") if found else "")
        gone.append(PurgedPost(id=post_id, subreddit=sub or None, verdict=outcome))
    report.posts += gone
    if gone and not dry_run:
        _remove([post.id for post in gone], targets, report)


def _remove(post_ids: list[str], targets: PurgeTargets, report: PurgeReport) -> None:
    """Feed index, then comment store, then archive (see the module docstring for why)."""
    if targets.index is not None:
        report.index_posts += targets.index.remove_posts(post_ids)
    if targets.comment_store is not None:
        report.comment_store_rows += targets.comment_store.delete_posts(post_ids)
    if targets.archive is not None:
        posts, comments = delete_from_archive(targets.archive, post_ids)
        report.archive_posts += posts
        report.archive_comments += comments
    log.info("archive_purged_batch", posts=len(post_ids))


def delete_from_archive(conn: sqlite3.Connection, post_ids: Sequence[str]) -> tuple[int, int]:
    """Delete posts and all their comments in one transaction: (posts, comments) deleted."""
    marks = ",".join("?" * len(post_ids))
    conn.execute("BEGIN IMMEDIATE")
    try:
        comments = conn.execute(
            f"DELETE FROM comments WHERE link_id IN ({marks})",  # noqa: S608
            list(post_ids),
        ).rowcount
        posts = conn.execute(
            f"DELETE FROM posts WHERE id IN ({marks})",  # noqa: S608
            list(post_ids),
        ).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return posts, comments


def _chunks(ids: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), BATCH):
        yield list(ids[start : start + BATCH])


# --- running it from settings (the CLI) -------------------------------------------------------


def default_lookup_source(settings: Settings) -> SourceName:
    """``reddit-api`` when Reddit credentials are set (it knows every deletion), else
    ``arctic-shift`` (keyless, knows removals made within about a day)."""
    return "reddit-api" if settings.has_reddit_credentials else "arctic-shift"


def run_purge(
    settings: Settings,
    *,
    archive: Path | None,
    source: SourceName | None = None,
    dry_run: bool = False,
    lookup: PostLookup | None = None,
) -> PurgeReport:
    """Open what exists (archive, comment store, feed index), purge, close everything.

    ``--archive`` must exist; the default archive, the comment store and the feed index are
    simply skipped when there is none. A dry run opens the archive read-only.
    """
    chosen = lookup or build_lookup(settings, source or default_lookup_source(settings))
    report = PurgeReport(source=chosen.name, dry_run=dry_run)
    with ExitStack() as stack:
        stack.callback(chosen.close)
        targets = PurgeTargets()
        targets.archive = _open_archive(settings, archive, dry_run, report)
        if targets.archive is not None:
            stack.callback(targets.archive.close)
            if not dry_run:  # runs before close: the WAL's copies of purged pages go too
                stack.callback(targets.archive.execute, "PRAGMA wal_checkpoint(TRUNCATE)")
        targets.comment_store = _open_comment_store(settings)
        if targets.comment_store is not None:
            stack.callback(targets.comment_store.close)
        targets.index = _open_index(settings, stack)
        return purge_deleted(chosen, targets, dry_run=dry_run, report=report)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack does not swallow


def _open_archive(
    settings: Settings, explicit: Path | None, dry_run: bool, report: PurgeReport
) -> sqlite3.Connection | None:
    path = explicit if explicit is not None else default_archive_path(settings)
    if not path.is_file():
        if explicit is not None:
            raise ArchiveError(f"archive {path} does not exist; pass the archive to purge")
        return None
    conn = db.open_readonly(path) if dry_run else db.connect(path)
    try:
        if db.get_meta(conn, HASH_KEY) is not None:
            raise ArchiveError(
                f"{path} is the bundled demo archive: its posts are made up, there is nothing "
                "to check at Reddit; pass --archive with an archive you imported"
            )
        if not dry_run:
            conn.execute("PRAGMA secure_delete = ON")  # purged text is zeroed, not just freed
            report.rehashed = scrub_existing(conn, AuthorPolicy.from_settings(settings))
    except BaseException:
        conn.close()
        raise
    report.archive = str(path)
    return conn


def _open_comment_store(settings: Settings) -> CommentStore | None:
    url = settings.resolved_database_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return None
    return CommentStore.from_url(url)


def _open_index(settings: Settings, stack: ExitStack) -> FeedRetriever | None:
    """The feed index's retriever, if an index exists (opening one never creates it)."""
    if not settings.chroma_url and not settings.chroma_dir.is_dir():
        return None
    from crowdsift.feed.slots import SUFFIX
    from crowdsift.feed.store import close_client, open_client

    client = open_client(settings)
    stack.callback(close_client, client)
    names = {getattr(c, "name", c) for c in client.list_collections()}
    name = settings.chroma_collection
    if name not in names:
        return None
    # Reopened without an embedding function: Chroma rebuilds the one the collection was
    # indexed with from its stored config, so a purge works whatever CROWDSIFT_FEED_EMBEDDER says.
    main = client.get_collection(name)
    slots = client.get_collection(f"{name}{SUFFIX}") if f"{name}{SUFFIX}" in names else None
    return FeedRetriever(main, slots=slots)
