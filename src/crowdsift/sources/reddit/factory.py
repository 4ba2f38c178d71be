"""Choose and build a RedditSource from settings and CLI flags, in one place.

The default is ``auto`` (``CROWDSIFT_SOURCE``): ``reddit-api`` when Reddit credentials are
set; else ``arctic-shift`` when a probe shows it answers; else the user's own imported archive;
else the bundled demo archive, flagged ``sample_data`` so every output can say so. A source that
fails during the run hands over to the next (``chain``). A named source is a chain of one, so
every run reports ``source_status`` the same way. ``--archive`` without a named source means
that archive. Heavy modules load lazily so ``crowdsift --help`` stays instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.models import SourceStatus
from crowdsift.core.source import RedditSource
from crowdsift.sources.reddit.chain import Link, SourceChain

if TYPE_CHECKING:
    from crowdsift.engines.embedding import Embedder

SAMPLE_NOTICE = (
    "Using the bundled demo archive: SAMPLE DATA written by the crowdsift project, not real "
    "Reddit content. For real posts: let Arctic Shift answer (the default tries it first; "
    "`crowdsift doctor` says why it did not), import dumps with `crowdsift archive import`, or "
    "set REDDIT_CLIENT_ID/REDDIT_CLIENT_SECRET."
)
NO_CREDENTIALS = (
    "REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET are not set (Reddit approves API keys case by "
    "case; the keyless sources follow)"
)
NO_ARCHIVE = (
    "no archive imported: `crowdsift archive import RS_….zst RC_….zst` builds one, or set "
    "CROWDSIFT_ARCHIVE"
)


@dataclass(frozen=True)
class BuiltSource:
    """The source (a chain), and what the user should be told about it."""

    source: SourceChain

    @property
    def notice(self) -> str | None:
        """What to say about the source in use (e.g. that it is sample data), if anything."""
        return self.source.notice

    @property
    def sample_data(self) -> bool:
        """True when the source in use is the bundled demo archive (made-up posts)."""
        return self.source.sample_data

    def statuses(self) -> list[SourceStatus]:
        """``source_status``: one entry per source of the chain."""
        return self.source.statuses()


def default_source_name(settings: Settings) -> SourceName:
    """CROWDSIFT_SOURCE: ``auto`` unless set."""
    return settings.source


def build_source(
    settings: Settings, name: SourceName | None = None, *, archive: Path | None = None
) -> BuiltSource:
    """Build the named source (or the default one) from settings, as a chain.

    Raises what a named source raises when it cannot be built (``UsageError`` for reddit-api
    without credentials, ``ArchiveError`` for a missing archive); ``auto`` records such
    failures in ``source_status`` and raises ``AllSourcesFailedError`` only when none is left.
    """
    chosen = name or default_source_name(settings)
    if name is None and archive is not None and chosen == "auto":
        chosen = "archive"  # --archive alone names the archive to use
    if chosen == "auto":
        return BuiltSource(SourceChain(auto_links(settings, archive)))
    if chosen == "reddit-api":
        return BuiltSource(SourceChain([_reddit_api(settings)]))
    if chosen == "arctic-shift":
        return BuiltSource(SourceChain([_arctic_shift(settings, probe=False)]))
    from crowdsift.sources.archive.paths import resolve_archive_path

    path, is_demo = resolve_archive_path(settings, archive)
    sample = is_demo or _is_demo_archive(path)
    return BuiltSource(SourceChain([_archive(path, sample=sample, settings=settings)]))


def auto_links(settings: Settings, archive: Path | None = None) -> list[Link]:
    """``auto``'s order: reddit-api, arctic-shift (probed), the user's archive, the sample."""
    reddit = (
        _reddit_api(settings)
        if settings.has_reddit_credentials
        else Link("reddit-api", "Reddit's OAuth API", None, not_configured=NO_CREDENTIALS)
    )
    own = _own_archive(settings, archive)
    own_link = (
        _archive(own, sample=_is_demo_archive(own), settings=settings)
        if own is not None
        else Link("archive", "your archive", None, not_configured=NO_ARCHIVE)
    )
    return [reddit, _arctic_shift(settings, probe=True), own_link, _sample(settings)]


def _reddit_api(settings: Settings) -> Link:
    def build() -> RedditSource:
        from crowdsift.sources.reddit.reddit_api import RedditApiSource

        return RedditApiSource.from_settings(settings)

    return Link("reddit-api", "Reddit's OAuth API", build)


def _arctic_shift(settings: Settings, *, probe: bool) -> Link:
    def build() -> RedditSource:
        from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource

        return ArcticShiftSource.from_settings(settings)

    label = f"the Arctic Shift API at {settings.arctic_shift_base_url}"
    return Link("arctic-shift", label, build, probe=_probe_arctic_shift if probe else None)


def _probe_arctic_shift(source: RedditSource) -> SourceStatus:
    from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
    from crowdsift.sources.reddit.probe import probe_client

    if not isinstance(source, ArcticShiftSource):  # pragma: no cover - built just above
        raise TypeError(f"expected the arctic-shift source, got {type(source).__name__}")
    return probe_client(source.transport.client)


def _archive(path: Path, *, sample: bool, settings: Settings) -> Link:
    def build() -> RedditSource:
        from crowdsift.sources.archive.source import ArchiveSource

        return ArchiveSource(path, embedder=_embedder(settings))

    if sample:
        label = "the bundled sample archive (SAMPLE DATA, not real Reddit posts)"
        return Link("archive", label, build, sample=True, notice=SAMPLE_NOTICE)
    return Link("archive", f"your archive {path}", build)


def _sample(settings: Settings) -> Link:
    def build() -> RedditSource:
        from crowdsift.sources.archive.demo import ensure_demo_archive
        from crowdsift.sources.archive.source import ArchiveSource

        return ArchiveSource(ensure_demo_archive(settings.data_dir), embedder=_embedder(settings))

    label = "the bundled sample archive (SAMPLE DATA, not real Reddit posts)"
    return Link("archive", label, build, sample=True, notice=SAMPLE_NOTICE)


def _embedder(settings: Settings) -> Embedder:
    """The embedder an archive's search by meaning compares the question with: the local
    engine's model (built lazily: nothing loads unless the archive holds vectors)."""
    from crowdsift.engines.embedding import MiniLMEmbedder

    return MiniLMEmbedder.from_settings(settings)


def _own_archive(settings: Settings, explicit: Path | None) -> Path | None:
    """The user's own archive: ``--archive``, CROWDSIFT_ARCHIVE, or an imported
    ``<data dir>/archive.sqlite``; None when there is none."""
    from crowdsift.sources.archive.paths import DEFAULT_FILENAME

    if explicit is not None:
        return explicit
    if settings.archive_path is not None:
        return settings.archive_path
    imported = settings.data_dir / DEFAULT_FILENAME
    return imported if imported.is_file() else None


def _is_demo_archive(path: Path) -> bool:
    """The demo archive named explicitly (--archive, CROWDSIFT_ARCHIVE) is still sample data:
    only the demo builder records a content hash in an archive. Unreadable means no."""
    import sqlite3

    from crowdsift.sources.archive.demo import stored_hash

    try:
        return stored_hash(path) is not None
    except sqlite3.Error:
        return False
