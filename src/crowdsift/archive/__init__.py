"""The local archive: Pushshift / Arctic Shift dumps and saved Reddit API JSON in SQLite + FTS5.

``import_files`` builds or extends an archive, ``archive_stats`` summarises one, and
``crowdsift.reddit.sources.archive.ArchiveSource`` searches it like Reddit's own search.
"""

from crowdsift.archive.demo import ensure_demo_archive
from crowdsift.archive.importer import (
    BadLine,
    FileReport,
    ImportProgress,
    ImportReport,
    import_files,
)
from crowdsift.archive.paths import default_archive_path, resolve_archive_path
from crowdsift.archive.stats import SubredditStats, archive_stats

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
