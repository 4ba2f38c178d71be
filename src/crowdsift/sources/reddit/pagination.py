"""Walking pages by their cursor, like praw's ListingGenerator: one mechanism for every source.

``cursor_pages`` asks for page after page until a page is empty, has no next cursor, or hands
back a cursor already followed (how a misbehaving server, or an archive at its end, would
otherwise loop forever). ``paginate_search`` walks any ``RedditSource``'s search with it (the
``after`` of reddit-api, the archive and Arctic Shift alike), and Arctic Shift pages a thread's
comments by date with it (``TimeCursor``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.log import get_logger
from crowdsift.core.source import RawThing, RedditSource

log = get_logger(__name__)

Cursor = TypeVar("Cursor", bound=Hashable)
Item = TypeVar("Item")


@dataclass(frozen=True)
class Page(Generic[Item, Cursor]):
    """One page: its items, the cursor past it, and whether the walk ends with it."""

    items: Sequence[Item]
    following: Cursor | None
    last: bool


def cursor_pages(
    fetch: Callable[[Cursor | None], tuple[Sequence[Item], Cursor | None]],
    *,
    start: Cursor | None = None,
    on_repeat: Callable[[Cursor], None] = lambda _cursor: None,
) -> Iterator[Page[Item, Cursor]]:
    """``fetch(cursor)`` from ``start`` on, each page as it comes; the one that ends the walk
    (empty, no next cursor, or a cursor already followed: ``on_repeat`` hears of it) says so.
    A caller that has enough stops asking, and no further page is fetched."""
    followed: set[Cursor] = {start} if start is not None else set()
    cursor = start
    while True:
        items, following = fetch(cursor)
        if following and following in followed:
            on_repeat(following)
            yield Page(items, following, last=True)
            return
        if not items or not following:
            yield Page(items, following, last=True)
            return
        yield Page(items, following, last=False)
        followed.add(following)
        cursor = following


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
    """Yield raw posts page after page (``cursor_pages``) until the listing ends or ``cap`` is
    reached. ``after`` starts past a cursor an earlier walk left in its ``walk``, which records
    where this one stops."""
    walk = walk if walk is not None else Walk()
    walk.after, walk.complete = None, False
    yielded = 0
    asked: list[str | None] = []  # the cursor of each page asked for, for its log line

    def fetch(cursor: str | None) -> tuple[Sequence[RawThing], str | None]:
        asked.append(cursor)
        page = source.search_subreddit(
            subreddit, term, sort=sort, time_filter=time_filter,
            limit=min(page_size, cap - yielded, 100), after=cursor, since=since,
        )  # fmt: skip
        log.info(
            "search_page", source=source.name, subreddit=subreddit, term=term, page=len(asked),
            after=cursor, next_after=page.after, items=len(page.posts),
        )  # fmt: skip
        return page.posts, page.after

    def repeated(cursor: str) -> None:
        log.warning("pagination_cursor_repeated", subreddit=subreddit, after=cursor)

    if cap <= 0:
        return
    for page in cursor_pages(fetch, start=after, on_repeat=repeated):
        whole = len(page.items) <= cap - yielded
        for raw in page.items[: cap - yielded]:
            yield raw
            yielded += 1
        if page.last:
            walk.complete = True
            return
        walk.after = page.following if whole else None
        if yielded >= cap:
            return
