"""``--since`` on the local archive: ``created_utc >=`` the bound, inclusive, in the query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crowdsift.core.since import parse_since
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.reddit.pagination import paginate_search


def test_since_bounds_the_archive_search(small_archive: Path, kit: Any) -> None:
    source = ArchiveSource(small_archive, clock=kit.clock)
    try:
        since = parse_since("30d", kit.NOW)  # p1 (30 min), p2 (2 d), p3 (20 d) are newer
        page = source.search_subreddit("headphones", "sony", sort="new", since=since)
        assert [p["id"] for p in page.posts] == ["p1", "p2", "p3"]
        # a wider time filter does not widen the bound; --since wins where it is later
        page = source.search_subreddit(
            "headphones", "sony", sort="new", time_filter="year", since=since
        )
        assert [p["id"] for p in page.posts] == ["p1", "p2", "p3"]
        # the time filter still applies where it is the later bound
        page = source.search_subreddit(
            "headphones", "sony", sort="new", time_filter="day", since=since
        )
        assert [p["id"] for p in page.posts] == ["p1"]
    finally:
        source.close()


def test_since_is_inclusive_to_the_second_and_pages_keep_it(tmp_path: Path, kit: Any) -> None:
    bound = datetime(2024, 5, 1, tzinfo=UTC)
    at = int(bound.timestamp())
    posts = [
        kit.post(f"k{i}", title=f"Sony battery {i}", selftext="sony", created=at + i)
        for i in range(5)
    ] + [kit.post("old", title="Sony battery old", selftext="sony", created=at - 1)]
    target = tmp_path / "edge.sqlite"
    assert import_files([kit.write_dump(tmp_path / "RS_edge.ndjson", posts)], target).ok
    source = ArchiveSource(target, clock=kit.clock)
    try:
        got = list(
            paginate_search(source, "headphones", "sony", sort="new", page_size=2, since=bound)
        )
        assert sorted(p["id"] for p in got) == ["k0", "k1", "k2", "k3", "k4"]
        just_after = bound + timedelta(microseconds=1)  # the next whole second is the bound
        page = source.search_subreddit("headphones", "sony", sort="new", since=just_after)
        assert "k0" not in [p["id"] for p in page.posts]
    finally:
        source.close()
