"""An archive searched across several subreddits at once (``r/a+b``), and how far it reaches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import structlog

from crowdsift.core.errors import SubredditUnavailableError
from crowdsift.sources.archive.search import MATCHED_SUBREDDITS
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.reddit.chain import Link, SourceChain
from tests.sources.archive.conftest import NOW_TS


@pytest.fixture
def source(small_archive: Path, kit: Any) -> Any:
    src = ArchiveSource(small_archive, clock=kit.clock)
    yield src
    src.close()


def test_a_multireddit_search_finds_posts_of_every_subreddit_in_one_ranking(
    source: ArchiveSource,
) -> None:
    """One search over r/headphones+audiophile ranks both subreddits' posts together."""
    page = source.search_subreddit("headphones+audiophile", "sony battery", limit=10)
    found = {p["id"]: p["subreddit"].lower() for p in page.posts}
    assert found["q1"] == "audiophile" and found["p3"] == "headphones"
    single = source.search_subreddit("headphones", "sony battery", limit=10)
    assert "q1" not in {p["id"] for p in single.posts}
    assert {p["id"] for p in single.posts} | {"q1"} == set(found)


def test_a_multireddit_search_beyond_the_index_match_is_filtered_exactly(
    source: ArchiveSource,
) -> None:
    """More subreddits than the index matches are filtered by name only: the same results."""
    padding = [f"absent{n}" for n in range(MATCHED_SUBREDDITS)]
    wide = "+".join(["headphones", "audiophile", *padding])
    page = source.search_subreddit(wide, "sony battery", limit=10)
    narrow = source.search_subreddit("headphones+audiophile", "sony battery", limit=10)
    assert [p["id"] for p in page.posts] == [p["id"] for p in narrow.posts]


def test_subreddits_the_archive_lacks_are_named_and_the_rest_searched(
    source: ArchiveSource,
) -> None:
    with structlog.testing.capture_logs() as logs:
        page = source.search_subreddit("headphones+nosuchplace", "sony", limit=10)
    assert page.posts
    [warning] = [e for e in logs if e["event"] == "archive_subreddits_not_held"]
    assert warning["missing"] == ["nosuchplace"]
    with pytest.raises(SubredditUnavailableError, match="archive stats"):
        source.search_subreddit("nosuchplace+elsewhere", "sony", limit=10)


def test_the_newest_post_is_known_per_subreddit_and_overall(source: ArchiveSource) -> None:
    newest = source.newest_post(["headphones"])
    assert newest == datetime.fromtimestamp(NOW_TS - 30 * 60, UTC)  # p1, half an hour old
    assert source.newest_post([]) == max(newest, source.newest_post(["audiophile"]) or newest)
    assert source.newest_post(["nosuchplace"]) is None


def test_a_chain_reports_the_newest_post_of_its_archive(small_archive: Path) -> None:
    chain = SourceChain([Link("archive", "your archive", lambda: ArchiveSource(small_archive))])
    try:
        assert chain.newest_post(["headphones"]) == datetime.fromtimestamp(NOW_TS - 30 * 60, UTC)
    finally:
        chain.close()
