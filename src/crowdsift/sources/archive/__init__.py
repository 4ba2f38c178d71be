"""The local archive: Pushshift / Arctic Shift dumps and saved Reddit API JSON in SQLite + FTS5.

``import_files`` builds or extends an archive, ``archive_stats`` summarises one, and
``crowdsift.sources.archive.source.ArchiveSource`` searches it like Reddit's own search.

The names below load their modules on first use (PEP 562): a parsing worker process of the
import (``crowdsift.sources.archive.parallel``) then imports what parsing needs, not the importer,
the demo and their dependencies, which halves its start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crowdsift.sources.archive.demo import ensure_demo_archive
    from crowdsift.sources.archive.importer import ImportProgress, import_files
    from crowdsift.sources.archive.paths import default_archive_path, resolve_archive_path
    from crowdsift.sources.archive.report import BadLine, FileReport, ImportReport
    from crowdsift.sources.archive.stats import SubredditStats, archive_stats

_HOMES = {
    "BadLine": "report",
    "FileReport": "report",
    "ImportProgress": "importer",
    "ImportReport": "report",
    "import_files": "importer",
    "SubredditStats": "stats",
    "archive_stats": "stats",
    "default_archive_path": "paths",
    "resolve_archive_path": "paths",
    "ensure_demo_archive": "demo",
}

__all__ = [
    "BadLine",
    "FileReport",
    "ImportProgress",
    "ImportReport",
    "SubredditStats",
    "archive_stats",
    "default_archive_path",
    "ensure_demo_archive",
    "import_files",
    "resolve_archive_path",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
