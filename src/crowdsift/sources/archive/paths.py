"""Which archive a command uses: an explicit path, the configured one, the default, or the demo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crowdsift.core.config import Settings
from crowdsift.sources.archive.demo import ensure_demo_archive

DEFAULT_FILENAME = "archive.sqlite"


def default_archive_path(settings: Settings) -> Path:
    """Where ``crowdsift archive import`` writes: CROWDSIFT_ARCHIVE, else the data directory."""
    if settings.archive_path is not None:
        return settings.archive_path
    return settings.data_dir / DEFAULT_FILENAME


def resolve_archive_path(
    settings: Settings,
    explicit: Path | None,
    *,
    demo_builder: Callable[[Path], Path] = ensure_demo_archive,
) -> tuple[Path, bool]:
    """(path, is_demo): ``--archive``, else CROWDSIFT_ARCHIVE, else an imported
    ``<data dir>/archive.sqlite`` if one exists, else the bundled demo archive (built on
    first use by ``demo_builder``)."""
    if explicit is not None:
        return explicit, False
    if settings.archive_path is not None:
        return settings.archive_path, False
    imported = settings.data_dir / DEFAULT_FILENAME
    if imported.is_file():
        return imported, False
    return demo_builder(settings.data_dir), True
