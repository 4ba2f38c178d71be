"""The demo archive is built once per process and copied to every other data directory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from crowdsift.sources.archive import demo
from crowdsift.sources.archive.demo import ensure_demo_archive, stored_hash


def _posts(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, subreddit FROM posts ORDER BY id").fetchall()


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo, "_built", {})


def test_a_second_data_dir_gets_a_copy_that_stands_on_its_own(tmp_path: Path) -> None:
    first = ensure_demo_archive(tmp_path / "one")
    built = dict(demo._built)
    assert list(built.values()) == [first]
    second = ensure_demo_archive(tmp_path / "two")
    assert demo._built == built  # no second import: the first build is still the one known
    assert second != first and stored_hash(second) == stored_hash(first) is not None
    expected = _posts(first)
    assert expected and _posts(second) == expected
    first.unlink()  # the copy is a file of its own
    assert _posts(second) == expected


def test_a_damaged_first_build_is_not_copied(tmp_path: Path) -> None:
    first = ensure_demo_archive(tmp_path / "one")
    first.write_bytes(b"not a database")
    second = ensure_demo_archive(tmp_path / "two")
    assert stored_hash(second) is not None and _posts(second)  # built again, not copied
    assert list(demo._built.values()) == [second]
