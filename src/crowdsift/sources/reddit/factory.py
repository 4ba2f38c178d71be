"""Choose and build a RedditSource from settings and CLI flags, in one place.

The default is keyless: ``reddit-api`` only when Reddit credentials are set, else the local
archive (the bundled demo when the user has imported none, flagged ``sample_data`` so every
output can say so). Heavy modules load lazily so ``crowdsift --help`` stays instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.source import RedditSource


@dataclass(frozen=True)
class BuiltSource:
    """The source, and what the user should be told about it (e.g. that it is sample data)."""

    source: RedditSource
    notice: str | None = None
    sample_data: bool = False
    """True when the source is the bundled demo archive (made-up posts, not real Reddit)."""


def default_source_name(settings: Settings) -> SourceName:
    """CROWDSIFT_SOURCE if set, else reddit-api with credentials, else the local archive."""
    if settings.source is not None:
        return settings.source
    return "reddit-api" if settings.has_reddit_credentials else "archive"


def build_source(
    settings: Settings, name: SourceName | None = None, *, archive: Path | None = None
) -> BuiltSource:
    """Build the named source (or the default one) from settings."""
    chosen = name or default_source_name(settings)
    if chosen == "reddit-api":
        from crowdsift.sources.reddit.reddit_api import RedditApiSource

        return BuiltSource(RedditApiSource.from_settings(settings))
    if chosen == "arctic-shift":
        from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource

        return BuiltSource(ArcticShiftSource.from_settings(settings))
    from crowdsift.sources.archive.paths import resolve_archive_path
    from crowdsift.sources.archive.source import ArchiveSource

    path, is_demo = resolve_archive_path(settings, archive)
    is_demo = is_demo or _is_demo_archive(path)
    notice = (
        "Using the bundled demo archive: SAMPLE DATA written by the crowdsift project, not "
        "real Reddit content. Import real dumps with `crowdsift archive import`, or set "
        "REDDIT_CLIENT_ID/REDDIT_CLIENT_SECRET, or use --source arctic-shift."
        if is_demo
        else None
    )
    return BuiltSource(ArchiveSource(path), notice, sample_data=is_demo)


def _is_demo_archive(path: Path) -> bool:
    """The demo archive named explicitly (--archive, CROWDSIFT_ARCHIVE) is still sample data:
    only the demo builder records a content hash in an archive. Unreadable means no."""
    import sqlite3

    from crowdsift.sources.archive.demo import stored_hash

    try:
        return stored_hash(path) is not None
    except sqlite3.Error:
        return False
