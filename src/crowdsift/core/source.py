"""The one interface every Reddit source implements.

Sources differ in where content comes from (OAuth API, Arctic Shift, a local archive) but all
hand back Reddit's own raw ``data`` dicts for submissions (t3) and comments (t1), so a single
pure filtering layer serves them all. Nothing here performs I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from crowdsift.core.config import SearchSort, SourceName, TimeFilter

RawThing = dict[str, Any]
"""A Reddit t3 (submission) or t1 (comment) ``data`` dict, exactly as Reddit shapes it."""

DELETED_MARKERS = frozenset({"[deleted]", "[removed]", "[deleted by user]", "[removed by reddit]"})
"""What Reddit writes in place of a deleted or removed author or body."""
AUTOMODERATOR = "automoderator"
"""The moderation bot's name, lower-cased: nobody's identity, and never evidence."""
ENGAGEMENT_PENDING = "crowdsift_engagement_pending"
"""Set to True on a raw t3 whose ``score``/``num_comments`` are placeholders (Arctic Shift
before its second retrieval): rankers treat its engagement as unknown, not as final."""


LISTS_BY_DATE: frozenset[SourceName] = frozenset({"arctic-shift"})
"""Sources whose search answers newest first and cannot rank by relevance or votes: the plan
for them is different (``strategies.dated_queries``), and their requests are few and slow
(Arctic Shift sustains about 0.8 a second), so a question keeps to a request budget."""


@dataclass(frozen=True)
class SearchPage:
    """One page of search results and the cursor for the next (None when there is none)."""

    posts: list[RawThing]
    after: str | None = None


@dataclass
class SourceStats:
    """Counters a source keeps about its own traffic, for the fetch report."""

    requests: int = 0  # sent upstream (cache hits are not requests)
    retries: int = 0
    pages: int = 0
    cache_hits: int = 0  # GETs answered by the shared response cache
    extra: dict[str, int] = field(default_factory=dict)


@runtime_checkable
class RedditSource(Protocol):
    """What the fetcher needs from a source of Reddit content.

    Implementations must be safe to call from several threads at once: the fetcher runs
    searches and comment fetches with bounded concurrency.
    """

    name: SourceName
    stats: SourceStats

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",
        time_filter: TimeFilter = "all",
        limit: int = 25,
        after: str | None = None,
        since: datetime | None = None,
    ) -> SearchPage:
        """One page of submissions in ``subreddit`` matching ``term`` (restrict_sr semantics).

        ``since`` (``--since``) is a lower bound on ``created_utc`` that a source narrows its
        search with where it can (Arctic Shift's ``after``, the archive's query); the fetcher
        drops anything older that still comes back, so a source may also ignore it.

        Raises SubredditUnavailableError for a private/banned/missing subreddit, TransportError or
        ResponseError when the request fails for good.
        """
        ...

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        """Top-level comments of one submission only, ``more`` stubs skipped, in thread order."""
        ...

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        """The thread's comments ``depth`` levels deep (1 = top-level only), at most ``limit``.

        For the Reddit branch's deep drill, where replies carry the specifics. Pre-order (a comment,
        then its replies), siblings best first ("top"); ``more`` stubs, other threads' comments
        and orphans (parent not returned) skipped. Every dict carries an int ``depth`` (0 =
        top-level) and a prefixed ``parent_id`` (``t3_<post>``/``t1_<comment>``). ``post_id``
        may carry ``t3_``; ``limit < 1`` or ``depth < 1`` gives ``[]``. Raises as
        ``fetch_post_comments`` does. Built by ``crowdsift.sources.reddit.threads``.
        """
        ...

    def close(self) -> None:
        """Release connections or files the source owns (not injected ones)."""
        ...


@runtime_checkable
class HoldsHistory(Protocol):
    """A source that stores what it serves (an archive) and so knows how far its posts reach.

    Live sources do not implement it: their newest post is now."""

    def newest_post(self, subreddits: Sequence[str]) -> datetime | None:
        """When the newest post of ``subreddits`` (all it holds when empty) was created;
        None when it holds none."""
        ...


@runtime_checkable
class SearchesByMeaning(Protocol):
    """A source that can rank its threads by closeness in meaning to a text (an archive with
    stored vectors): one more ranked list beside the searches by words."""

    def searches_meaning(self) -> bool:
        """Whether it can now (its vectors exist and match its embedder)."""
        ...

    def search_meaning(
        self,
        subreddit: str,
        text: str,
        *,
        time_filter: TimeFilter = "all",
        limit: int = 25,
        since: datetime | None = None,
    ) -> SearchPage:
        """The threads of ``subreddit`` (or ``a+b``) closest in meaning to ``text``, best first."""
        ...


@runtime_checkable
class ListsRecent(Protocol):
    """A live source that lists a subreddit's newest posts in one request (Arctic Shift): what
    a community's recent threads say about it (``crowdsift.pipeline.reddit.recent``)."""

    def recent_posts(self, subreddit: str, *, limit: int = 100) -> list[RawThing]:
        """The newest ``limit`` posts of ``subreddit`` (raw t3 dicts, newest first)."""
        ...
