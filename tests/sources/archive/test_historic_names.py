"""Historic subreddit names the dumps really contain (r/reddit.com) work from plan to answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.models import SearchPlan, normalise_subreddit
from crowdsift.pipeline.fetch.filtering import FilterConfig, build_post_model, post_url, screen_post
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.reddit.permalink import post_permalink
from tests.sources.archive.conftest import NOW, NOW_TS, post

Dump = Callable[[str, list[Any]], Path]
OLD = 1_200_000_000  # 2008, when r/reddit.com was the front page's subreddit


@pytest.mark.parametrize("name", ["reddit.com", "r/reddit.com", "/r/Reddit.com/"])
def test_plans_accept_the_historic_name(name: str) -> None:
    assert normalise_subreddit(name) == "reddit.com"
    plan = SearchPlan(search_terms=["firefox"], subreddits=[name, "firefox"])
    assert plan.subreddits == ["reddit.com", "firefox"]


@pytest.mark.parametrize(
    "name", ["no spaces!", "reddit.org", "x.com", "r/", "a", "reddit.com.evil"]
)
def test_a_truly_invalid_name_is_still_refused(name: str) -> None:
    with pytest.raises(ValueError, match="is not a subreddit name"):
        normalise_subreddit(name)


@pytest.mark.parametrize("sub", ["reddit.com", "home_improvement"])  # both: several tokens
def test_an_archive_of_reddit_com_is_searched_and_cited(
    dump: Dump, archive_path: Path, kit: Any, sub: str
) -> None:
    record = post(
        "6b2mz",
        subreddit=sub,
        title="Firefox 3 is out",
        selftext="the firefox release notes are worth reading",
        created=OLD,
        num_comments=2,
    )
    import_files([dump("RS_2008-01.zst", [record])], archive_path)
    source = ArchiveSource(archive_path, clock=kit.clock)
    try:
        (found,) = source.search_subreddit(sub, "firefox").posts
    finally:
        source.close()

    assert found["subreddit"] == sub
    url = f"https://www.reddit.com/r/{sub}/comments/6b2mz/slug/"
    assert post_permalink(found) == url
    assert post_url(found) == url  # the filtering layer no longer rejects it as broken
    screened = screen_post(
        found, search_terms=["firefox"], config=FilterConfig(), seen_post_ids=set()
    )
    model = build_post_model(screened, [], source="archive", fetched_at=NOW)  # type: ignore[arg-type]
    assert model.url == url and model.subreddit == sub
    assert NOW_TS > OLD
    assert datetime.fromtimestamp(OLD, tz=UTC).year == 2008
