"""Walk search pages by their ``after`` cursor, like praw's ListingGenerator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.log import get_logger
from crowdsift.core.source import RawThing, RedditSource

log = get_logger(__name__)


@dataclass
class Walk:
    """Where a page walk stopped, so a larger walk can go on from there instead of starting
    over: ``complete`` when the listing ended, else ``after``, the cursor past the last page
    read whole (None when the cap cut a page short and there is no clean place to resume)."""

    after: str | None = None
    complete: bool = False


def paginate_search(
    source: RedditSource,
    subreddit: str,
    term: str,
    *,
    sort: SearchSort = "relevance",
    time_filter: TimeFilter = "all",
    page_size: int = 25,
    cap: int = 50,
    since: datetime | None = None,
    after: str | None = None,
    walk: Walk | None = None,
) -> Iterator[RawThing]:
    """Yield raw posts page after page until ``after`` is empty or repeats, or ``cap`` is reached.

    A repeating cursor is how a misbehaving server (or an archive at its end) would otherwise
    loop forever; an empty page ends the walk as well. ``after`` starts past a cursor an
    earlier walk left in its ``walk``, which records where this one stops.
    """
    walk = walk if walk is not None else Walk()
    walk.after, walk.complete = None, False
    seen_cursors: set[str] = {after} if after else set()
    yielded = 0
    page_no = 0
    while yielded < cap:
        limit = min(page_size, cap - yielded, 100)
        page = source.search_subreddit(
            subreddit, term, sort=sort, time_filter=time_filter, limit=limit, after=after,
            since=since,
        )  # fmt: skip
        page_no += 1
        log.info(
            "search_page",
            source=source.name,
            subreddit=subreddit,
            term=term,
            page=page_no,
            after=after,
            next_after=page.after,
            items=len(page.posts),
        )
        whole = len(page.posts) <= cap - yielded
        for raw in page.posts[: cap - yielded]:
            yield raw
            yielded += 1
        if not page.posts or not page.after or page.after in seen_cursors:
            if page.after and page.after in seen_cursors:
                log.warning("pagination_cursor_repeated", subreddit=subreddit, after=page.after)
            walk.complete = True
            return
        seen_cursors.add(page.after)
        after = page.after
        walk.after = after if whole else None
