"""An in-memory RedditSource: scripted pages and comments, every call recorded.

For unit tests of code that consumes a source (the fetcher, the Reddit branch) where HTTP is
beside the point. Transport behaviour is tested against the real local servers instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

from crowdsift.core.config import SearchSort, SourceName, TimeFilter
from crowdsift.core.errors import SourceError, SubredditUnavailableError
from crowdsift.core.source import RawThing, SearchPage, SourceStats
from crowdsift.sources.reddit.threads import comment_tree


@dataclass
class MemorySource:
    """Serves ``posts[(subreddit, term)]`` in pages of ``limit``; cursors are ``t3_<id>``.

    ``comments`` maps a post id to its comments: ``fetch_post_comments`` serves them as given,
    ``fetch_comment_tree`` builds the tree from them (flat t1 dicts linked by ``parent_id``).
    """

    posts: dict[tuple[str, str], list[RawThing]] = field(default_factory=dict)
    comments: dict[str, list[RawThing]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    failing_comments: dict[str, str] = field(default_factory=dict)
    name: SourceName = "archive"
    stats: SourceStats = field(default_factory=SourceStats)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",  # noqa: ARG002  # RedditSource's; pages come as scripted
        time_filter: TimeFilter = "all",  # noqa: ARG002
        limit: int = 25,
        after: str | None = None,
        since: datetime | None = None,  # noqa: ARG002
    ) -> SearchPage:
        with self._lock:
            self.calls.append(("search", subreddit, term, after or ""))
            self.stats.requests += 1
        if subreddit in self.unavailable:
            raise SubredditUnavailableError(subreddit, self.unavailable[subreddit], status=403)
        items = self.posts.get((subreddit, term), [])
        start = 0
        if after:
            ids = [f"t3_{item['id']}" for item in items]
            start = ids.index(after) + 1 if after in ids else len(items)
        page = items[start : start + limit]
        more = start + limit < len(items)
        return SearchPage(posts=page, after=f"t3_{page[-1]['id']}" if page and more else None)

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        with self._lock:
            self.calls.append(("comments", post_id))
            self.stats.requests += 1
        if post_id in self.failing_comments:
            raise SourceError(self.failing_comments[post_id])
        return self.comments.get(post_id, [])[:limit]

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        """``comments[post_id]`` (flat, any depth) as ``comment_tree`` orders and cuts them.

        ``post_id`` may carry ``t3_``: the bare id is looked up first, then the id as given.
        """
        with self._lock:
            self.calls.append(("tree", post_id))
            self.stats.requests += 1
        bare = post_id.removeprefix("t3_")
        for key in (bare, post_id):
            if key in self.failing_comments:
                raise SourceError(self.failing_comments[key])
        flat = self.comments.get(bare, self.comments.get(post_id, []))
        return comment_tree(flat, bare, limit=limit, depth=depth)

    def close(self) -> None:
        """Nothing to release."""
