"""Fixtures for the archive tests: dump writers, records of several eras, a small archive."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import structlog
import zstandard

from crowdsift.core.config import get_settings
from crowdsift.core.log import configure_logging
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
NOW_TS = int(NOW.timestamp())
HOUR = 3600
DAY = 86_400


@pytest.fixture(autouse=True)
def _logs_to_stderr() -> Iterator[None]:
    """As the main CLI does: structured logs on stderr, so ``--json`` stdout stays pure JSON.

    The previous structlog configuration is restored, so other test directories are unaffected.
    """
    saved = structlog.get_config()
    configure_logging("INFO", stream=sys.stderr)
    yield
    structlog.configure(**saved)


def post(
    post_id: str,
    *,
    subreddit: str = "Headphones",
    title: str = "a title",
    selftext: str = "",
    score: int = 1,
    created: Any = None,
    num_comments: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A submission as a modern dump line shapes it."""
    record: dict[str, Any] = {
        "id": post_id,
        "subreddit": subreddit,
        "author": "someone",
        "title": title,
        "selftext": selftext,
        "score": score,
        "num_comments": num_comments,
        "created_utc": NOW_TS - DAY if created is None else created,
        "permalink": f"/r/{subreddit}/comments/{post_id}/slug/",
        "over_18": False,
        "is_self": True,
    }
    record.update(extra)
    return record


def comment(
    comment_id: str,
    link: str,
    *,
    parent: str | None = None,
    subreddit: str = "Headphones",
    body: str = "a comment body",
    score: int = 1,
    created: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    """A comment as a dump line shapes it (link_id/parent_id prefixed by default)."""
    record: dict[str, Any] = {
        "id": comment_id,
        "link_id": f"t3_{link}",
        "parent_id": parent if parent is not None else f"t3_{link}",
        "subreddit": subreddit,
        "author": "someone",
        "body": body,
        "score": score,
        "created_utc": NOW_TS - HOUR if created is None else created,
    }
    record.update(extra)
    return record


def to_lines(records: list[Any]) -> list[str]:
    """Records as NDJSON lines; strings pass through verbatim (for broken lines)."""
    return [r if isinstance(r, str) else json.dumps(r) for r in records]


def write_dump(path: Path, records: list[Any]) -> Path:
    """Write NDJSON, zstd-compressed when the name ends in .zst."""
    data = ("\n".join(to_lines(records)) + "\n").encode("utf-8", "surrogatepass")
    if path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor(level=3).compress(data)
    path.write_bytes(data)
    return path


@pytest.fixture
def dump(tmp_path: Path) -> Callable[[str, list[Any]], Path]:
    """``dump(name, records)`` writes a dump file into the test's directory."""

    def make(name: str, records: list[Any]) -> Path:
        return write_dump(tmp_path / name, records)

    return make


@pytest.fixture
def archive_path(tmp_path: Path) -> Path:
    return tmp_path / "archive.sqlite"


# The small archive: exact sort orders and time windows are asserted on it.
SMALL_POSTS = [
    post(
        "p1",
        title="Sony WH-1000XM5 review",
        selftext="battery lasts long",
        score=50,
        created=NOW_TS - 30 * 60,
        num_comments=3,
    ),
    post(
        "p2",
        title="Cheap headphones",
        selftext="the sony sounds fine, battery ok",
        score=200,
        created=NOW_TS - 2 * DAY,
        num_comments=10,
    ),
    post(
        "p3",
        title="Battery question",
        selftext="sony battery drain",
        score=5,
        created=NOW_TS - 20 * DAY,
        num_comments=40,
    ),
    post(
        "p4",
        title="Sony or Bose?",
        selftext="comparing both",
        score=-3,
        created=NOW_TS - 200 * DAY,
        num_comments=1,
    ),
    post(
        "p5",
        title="Old sony thread",
        selftext="battery died",
        score=80,
        created=NOW_TS - 800 * DAY,
        num_comments=0,
    ),
    post("q1", subreddit="audiophile", title="Sony battery", selftext="other sub", score=999),
]
SMALL_COMMENTS = [
    comment("c1", "p1", body="top level, low score", score=1),
    comment("c2", "p1", body="top level, high score", score=30),
    comment("c3", "p1", parent="t1_c2", body="a reply to c2", score=100),
    comment("c4", "p2", body="comment on another post", score=500),
    comment("c5", "p1", parent="p1", body="bare parent id, top level", score=10),
]


@pytest.fixture
def small_archive(tmp_path: Path) -> Path:
    """Five r/headphones posts at known ages and scores, one elsewhere, a few comments."""
    target = tmp_path / "small.sqlite"
    report = import_files(
        [
            write_dump(tmp_path / "RS_small.ndjson", SMALL_POSTS),
            write_dump(tmp_path / "RC_small.zst", SMALL_COMMENTS),
        ],
        target,
    )
    assert report.ok and report.posts == 6 and report.comments == 5
    return target


@pytest.fixture
def settings_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """CROWDSIFT_HOME in the test's directory, no CROWDSIFT_ARCHIVE; settings re-read."""
    home = tmp_path / "home"
    monkeypatch.setenv("CROWDSIFT_HOME", str(home))
    monkeypatch.delenv("CROWDSIFT_ARCHIVE", raising=False)
    get_settings.cache_clear()
    yield home
    get_settings.cache_clear()


class Kit:
    """The helpers above, handed to tests as a fixture (importlib mode cannot import conftest)."""

    NOW = NOW
    NOW_TS = NOW_TS
    HOUR = HOUR
    DAY = DAY
    post = staticmethod(post)
    comment = staticmethod(comment)
    write_dump = staticmethod(write_dump)
    to_lines = staticmethod(to_lines)

    @staticmethod
    def clock() -> datetime:
        return NOW


@pytest.fixture
def kit() -> type[Kit]:
    return Kit


def stored_records(archive: Path, table: str) -> dict[str, dict[str, Any]]:
    """Every record of ``posts`` or ``comments`` as the archive gives it back, by id."""
    conn = db.open_readonly(archive)
    try:
        decode = db.codec_of(conn).decode
        rows = conn.execute(f"SELECT id, doc FROM {table}").fetchall()
        return {str(row_id): decode(doc) for row_id, doc in rows}
    finally:
        conn.close()
