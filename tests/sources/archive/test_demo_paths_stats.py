"""The demo archive (build, rebuild, atomicity), archive path resolution, and stats."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.config import Settings
from crowdsift.core.errors import ArchiveError
from crowdsift.core.schema_lock import lock_path
from crowdsift.sources.archive import demo
from crowdsift.sources.archive.demo import DEMO_FILENAME, ensure_demo_archive
from crowdsift.sources.archive.paths import default_archive_path, resolve_archive_path
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.archive.stats import archive_stats

Dump = Callable[[str, list[Any]], Path]


@pytest.fixture
def demo_files(dump: Dump, kit: Any) -> list[Path]:
    return [
        dump("RS_demo.ndjson.zst", [kit.post("d1", title="demo sony"), kit.post("d2")]),
        dump("RC_demo.ndjson.zst", [kit.comment("k1", "d1")]),
    ]


def leftovers(directory: Path) -> list[str]:
    """What a build left beside the archive, but for its lock file: the lock that makes other
    processes wait for one build stays by design (``core.schema_lock``)."""
    lock = lock_path(directory / DEMO_FILENAME).name
    return sorted(p.name for p in directory.iterdir() if p.name not in (DEMO_FILENAME, lock))


def test_demo_archive_is_built_once_then_reused(tmp_path: Path, demo_files: list[Path]) -> None:
    data_dir = tmp_path / "data"
    path = ensure_demo_archive(data_dir, dump_files=demo_files)
    assert path == data_dir / DEMO_FILENAME
    inode = path.stat().st_ino
    assert ensure_demo_archive(data_dir, dump_files=demo_files).stat().st_ino == inode
    assert leftovers(data_dir) == []  # no temp file, no -wal/-shm: one self-contained file
    with ArchiveSource(path) as src:
        assert [p["id"] for p in src.search_subreddit("headphones", "sony").posts] == ["d1"]
        assert [c["id"] for c in src.fetch_post_comments("d1")] == ["k1"]


def test_demo_archive_is_rebuilt_when_the_packaged_files_change(
    tmp_path: Path, demo_files: list[Path], kit: Any
) -> None:
    path = ensure_demo_archive(tmp_path, dump_files=demo_files)
    kit.write_dump(demo_files[0], [kit.post("d9", title="fresh sony")])
    ensure_demo_archive(tmp_path, dump_files=demo_files)
    assert [s.posts for s in archive_stats(path)] == [1]


def test_a_crash_while_building_leaves_no_half_archive(
    tmp_path: Path, demo_files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = demo.import_files

    def crash(files: list[Path], target: Path, **options: Any) -> Any:
        real_import(files[:1], target, **options)
        raise RuntimeError("power cut")

    monkeypatch.setattr(demo, "import_files", crash)
    monkeypatch.setattr(demo, "_built", {})  # no earlier build in this process to copy
    with pytest.raises(RuntimeError):
        ensure_demo_archive(tmp_path, dump_files=demo_files)
    assert not (tmp_path / DEMO_FILENAME).exists()
    assert leftovers(tmp_path) == sorted(p.name for p in demo_files)


def test_concurrent_builders_never_expose_a_broken_archive(
    tmp_path: Path, demo_files: list[Path]
) -> None:
    digest = demo.content_hash(demo_files)
    target = tmp_path / DEMO_FILENAME
    errors: list[BaseException] = []

    def build() -> None:  # bypasses the in-process lock, as separate processes would
        try:
            demo._build(demo_files, target, digest)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert demo.stored_hash(target) == digest
    assert [(s.posts, s.comments) for s in archive_stats(target)] == [(2, 1)]
    assert leftovers(tmp_path) == sorted(p.name for p in demo_files)


def test_the_packaged_demo_builds_and_answers(tmp_path: Path) -> None:
    path = ensure_demo_archive(tmp_path)
    stats = archive_stats(path)
    assert stats and stats[0].posts > 0 and sum(s.comments for s in stats) > 0
    assert demo.stored_hash(path) == demo.content_hash(demo.packaged_demo_files())


def test_resolve_archive_path_order(tmp_path: Path) -> None:
    built: list[Path] = []

    def fake_demo(data_dir: Path) -> Path:
        built.append(data_dir)
        return data_dir / DEMO_FILENAME

    home = tmp_path / "home"
    plain = Settings(home=home)
    explicit = tmp_path / "mine.sqlite"
    assert resolve_archive_path(plain, explicit, demo_builder=fake_demo) == (explicit, False)
    configured = Settings(home=home, archive_path=tmp_path / "env.sqlite")
    assert resolve_archive_path(configured, None, demo_builder=fake_demo) == (
        tmp_path / "env.sqlite",
        False,
    )
    assert resolve_archive_path(plain, None, demo_builder=fake_demo) == (
        home / DEMO_FILENAME,
        True,
    )
    assert built == [home]
    home.mkdir()
    (home / "archive.sqlite").touch()
    assert resolve_archive_path(plain, None, demo_builder=fake_demo) == (
        home / "archive.sqlite",
        False,
    )
    assert default_archive_path(plain) == home / "archive.sqlite"
    assert default_archive_path(configured) == tmp_path / "env.sqlite"


def test_archive_stats_per_subreddit(small_archive: Path, kit: Any) -> None:
    stats = archive_stats(small_archive)
    assert [(s.subreddit, s.posts, s.comments) for s in stats] == [
        ("headphones", 5, 5),
        ("audiophile", 1, 0),
    ]
    first = datetime.fromtimestamp(kit.NOW_TS - 800 * kit.DAY, tz=UTC)
    assert stats[0].first_created == first
    assert stats[0].last_created == datetime.fromtimestamp(kit.NOW_TS - 30 * 60, tz=UTC)


def test_archive_stats_of_a_missing_or_foreign_file(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="does not exist"):
        archive_stats(tmp_path / "none.sqlite")
    foreign = tmp_path / "foreign.sqlite"
    sqlite3.connect(foreign).close()
    foreign.write_bytes(b"")
    with pytest.raises(ArchiveError, match="not a crowdsift archive"):
        archive_stats(foreign)
