"""A RedditSource that asks its sources in turn, falls through when one fails, and says so.

``--source auto`` (the default) is a chain of four (built by ``factory``): ``reddit-api`` when
credentials are set; else ``arctic-shift`` when a probe shows it answers; else the user's own
imported archive; else the bundled sample archive (``sample_data``). A named source is a
chain of one, so every run reports its sources the same way.

- The first usable link is opened when the chain is built: a link that is not configured or
  fails to open (or whose probe fails) is recorded and the next one is tried. So a run whose
  Arctic Shift is down plans for the archive's subreddits from the start (``path``).
- A link that fails during the run (``failures.source_failure``: unreachable, refused, 429
  beyond the wait cap, bad credentials) hands the call that failed, and every later one, to
  the next link. A query that fails on its own (a 400, a private subreddit) is raised as
  before, and a link that answers with nothing is ``empty``, never a failure.
- Search cursors are tagged with their link (``"<index>~<cursor>"``): a query whose pages
  began on a link that has since failed starts over on the next one, never handing it a
  cursor it cannot read.
- When the last link fails too, ``AllSourcesFailedError`` lists every source, one line each;
  a chain of one raises its source's own error unchanged (and keeps using the source, so one
  failed query does not end the fetch).

``statuses()`` is the run's ``source_status``; ``name`` is the link in use (so posts and
reports name the real source); ``stats`` adds up every link's counters, probes included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from crowdsift.core.config import SearchSort, SourceName, TimeFilter
from crowdsift.core.errors import CrowdsiftError, SourceUnreachableError, SubredditUnavailableError
from crowdsift.core.log import get_logger
from crowdsift.core.models import SourceStatus
from crowdsift.core.source import (
    HoldsHistory,
    ListsRecent,
    RawThing,
    RedditSource,
    SearchesByMeaning,
    SearchPage,
    SourceStats,
)
from crowdsift.sources.reddit.failures import SourceFailure, source_failure

log = get_logger(__name__)

T = TypeVar("T")
_CURSOR_SEP = "~"


@dataclass(frozen=True)
class Link:
    """One source the chain may use: how to open it, and what to tell the user about it."""

    name: SourceName
    label: str
    """What it is, for ``detail``: "the Arctic Shift API", "your archive …"."""
    build: Callable[[], RedditSource] | None
    """Opens the source (may raise); None when it is not configured."""
    not_configured: str = ""
    """Why it cannot be used and what to set (when ``build`` is None)."""
    probe: Callable[[RedditSource], SourceStatus] | None = None
    """Asked once after opening; anything but ``ok`` skips the link."""
    sample: bool = False
    """The bundled demo archive: results from it are ``sample_data``."""
    notice: str | None = None
    """What the user should be told when this link is the one in use."""


class AllSourcesFailedError(SourceUnreachableError):
    """No source of the chain answered: one line per source, saying what each did."""

    def __init__(self, statuses: Sequence[SourceStatus]) -> None:
        lines = "\n".join(f"  {status.line()}" for status in statuses)
        super().__init__(
            f"no Reddit source answered; each one failed or is not set up:\n{lines}",
            source="auto",
            host="",
            cause="all_failed",
        )
        self.statuses = list(statuses)


@dataclass
class _State:
    link: Link
    source: RedditSource | None = None
    failure: SourceFailure | None = None
    answers: int = 0
    posts: int = 0
    probe_requests: int = 0


class SourceChain:
    """Delegates every call to the link in use; thread-safe like the sources it wraps."""

    def __init__(self, links: Sequence[Link]) -> None:
        """Opens the first usable link now: a named source's own errors (no credentials,
        a missing archive) surface here, before any work; AllSourcesFailedError if none."""
        if not links:
            raise ValueError("a source chain needs at least one link")
        self._states = [_State(link) for link in links]
        self._single = len(links) == 1
        self._lock = threading.RLock()
        self._current = 0
        self.name: SourceName = links[0].name
        self.stats = SourceStats()
        self._active()

    # --- what the run reports -------------------------------------------------------------

    def statuses(self) -> list[SourceStatus]:
        """One entry per source, in chain order (the run's ``source_status``): two links of
        one source (your archive, then the bundled sample) are one entry (``one_per_source``)."""
        with self._lock:
            links = [self._status(index, state) for index, state in enumerate(self._states)]
        return one_per_source(links)

    @property
    def sample_data(self) -> bool:
        """True when the link in use is the bundled sample archive."""
        state = self._states[self._current]
        return state.link.sample and state.source is not None

    @property
    def notice(self) -> str | None:
        """What to tell the user about the link in use (e.g. that it is sample data)."""
        return self._states[self._current].link.notice

    @property
    def path(self) -> Path | None:
        """The archive file of the link in use, None for an API (so an archive's own
        subreddits are what a plan may choose)."""
        path = getattr(self._states[self._current].source, "path", None)
        return path if isinstance(path, Path) else None

    def newest_post(self, subreddits: Sequence[str]) -> datetime | None:
        """The newest post the link in use holds (an archive's); None for a live API."""
        source = self._states[self._current].source
        return source.newest_post(subreddits) if isinstance(source, HoldsHistory) else None

    def searches_meaning(self) -> bool:
        """Whether the link in use can rank its threads by meaning (an archive with vectors)."""
        source = self._states[self._current].source
        return isinstance(source, SearchesByMeaning) and source.searches_meaning()

    def search_meaning(
        self,
        subreddit: str,
        text: str,
        *,
        time_filter: TimeFilter = "all",
        limit: int = 25,
        since: datetime | None = None,
    ) -> SearchPage:
        """The link in use's threads closest in meaning to ``text``; none from a link that
        cannot rank by meaning."""

        def by_meaning(source: RedditSource, _: int) -> SearchPage:
            if not isinstance(source, SearchesByMeaning):
                return SearchPage(posts=[])
            return source.search_meaning(
                subreddit, text, time_filter=time_filter, limit=limit, since=since
            )

        return self._call(by_meaning)

    def recent_posts(self, subreddit: str, *, limit: int = 100) -> list[RawThing]:
        """The newest posts of ``subreddit`` from the link in use, when it lists them (Arctic
        Shift); none from a link that does not."""

        def recent(source: RedditSource, _: int) -> list[RawThing]:
            if not isinstance(source, ListsRecent):
                return []
            return source.recent_posts(subreddit, limit=limit)

        return self._call(recent)

    # --- RedditSource ---------------------------------------------------------------------

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
        """One page from the link in use; its cursor carries the link's index."""

        def search(source: RedditSource, index: int) -> SearchPage:
            page = source.search_subreddit(
                subreddit, term, sort=sort, time_filter=time_filter, limit=limit,
                after=_cursor_for(after, index), since=since,
            )  # fmt: skip
            tagged = f"{index}{_CURSOR_SEP}{page.after}" if page.after else None
            return SearchPage(posts=page.posts, after=tagged)

        return self._call(search, count=lambda page: len(page.posts))

    def fetch_post_comments(self, post_id: str, *, limit: int = 100) -> list[RawThing]:
        return self._call(lambda source, _: source.fetch_post_comments(post_id, limit=limit))

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        return self._call(
            lambda source, _: source.fetch_comment_tree(post_id, limit=limit, depth=depth)
        )

    def close(self) -> None:
        """Close every link that was opened."""
        with self._lock:
            opened = [state.source for state in self._states if state.source is not None]
        for source in opened:
            source.close()

    # --- delegation -----------------------------------------------------------------------

    def _call(
        self,
        run: Callable[[RedditSource, int], T],
        *,
        count: Callable[[T], int] = lambda _: 0,
    ) -> T:
        """``run`` on the link in use; on a failure of that source, again on the next."""
        while True:
            index, source = self._active()
            try:
                result = run(source, index)
            except SubredditUnavailableError as exc:
                if source_failure(exc) is None:  # the source answered about one subreddit
                    self._answered(index, 0)
                    raise
                self._failed(index, exc)
                continue
            except CrowdsiftError as exc:
                if source_failure(exc) is None:
                    self._sync()
                    raise
                self._failed(index, exc)
                continue
            self._answered(index, count(result))
            return result

    def _active(self) -> tuple[int, RedditSource]:
        """The link in use, opening (and probing) links until one is usable."""
        with self._lock:
            while True:
                state = self._states[self._current]
                if state.source is None and state.failure is None:
                    self._open(state)
                if state.source is not None and (state.failure is None or self._single):
                    self.name = state.link.name
                    return self._current, state.source
                if self._current + 1 == len(self._states):
                    raise AllSourcesFailedError(self.statuses())
                self._current += 1

    def _open(self, state: _State) -> None:
        """Build the link's source and probe it; a failure is recorded, not raised (except
        for a chain of one, whose errors are the user's to read as they are)."""
        link = state.link
        if link.build is None:
            if self._single:
                raise ValueError(f"the only source of a chain cannot be unconfigured: {link}")
            state.failure = SourceFailure("not_configured", link.not_configured)
            return
        try:
            state.source = link.build()
        except CrowdsiftError as exc:
            if self._single:
                raise
            found = source_failure(exc)
            state.failure = found or SourceFailure("unreachable", str(exc))
            if state.failure.state == "not_configured":
                # set up, but not usable as set up (keys without a user agent): the chain goes
                # on, and the person who set the keys hears why they are not used
                log.warning("source_not_usable", source=link.name, detail=state.failure.detail)
            else:
                log.info("source_failed", source=link.name, status=state.failure.state)
            return
        if link.probe is not None:
            probed = link.probe(state.source)
            state.probe_requests += probed.requests
            if probed.status != "ok":
                state.failure = SourceFailure(probed.status, probed.detail)
                log.info("source_failed", source=link.name, status=probed.status)
        self._sync()

    def _failed(self, index: int, exc: CrowdsiftError) -> None:
        """Record how link ``index`` failed; re-raise for a chain of one, else move on (the
        next ``_active`` raises AllSourcesFailedError when nothing is left)."""
        failure = source_failure(exc)
        assert failure is not None
        with self._lock:
            state = self._states[index]
            if state.failure is None:
                state.failure = failure
                log.info(  # the run's source_status is what the user reads (one line each)
                    "source_failed_over", source=state.link.name, status=failure.state,
                    next=self._next_name(index),
                )  # fmt: skip
            self._sync()
        if self._single:
            raise exc

    def _answered(self, index: int, posts: int) -> None:
        with self._lock:
            state = self._states[index]
            state.answers += 1
            state.posts += posts
            self._sync()

    def _next_name(self, index: int) -> str | None:
        later = self._states[index + 1 :]
        return later[0].link.name if later else None

    def _sync(self) -> None:
        """Add up every link's counters into ``stats`` (the fetcher reads them)."""
        with self._lock:
            total = SourceStats()
            for state in self._states:
                total.requests += state.probe_requests
                if state.source is None:
                    continue
                counted = state.source.stats
                total.requests += counted.requests
                total.retries += counted.retries
                total.pages += counted.pages
                total.cache_hits += counted.cache_hits
                for key, value in counted.extra.items():
                    total.extra[key] = total.extra.get(key, 0) + value
            self.stats.requests, self.stats.retries = total.requests, total.retries
            self.stats.pages, self.stats.cache_hits = total.pages, total.cache_hits
            self.stats.extra.clear()
            self.stats.extra.update(total.extra)

    def _status(self, index: int, state: _State) -> SourceStatus:
        link = state.link
        requests = state.probe_requests + (state.source.stats.requests if state.source else 0)
        failure = state.failure
        if failure is None and link.build is None:  # known before anything was asked
            failure = SourceFailure("not_configured", link.not_configured)
        if failure is not None:
            return SourceStatus(
                source=link.name, status=failure.state, detail=failure.detail, requests=requests
            )
        if state.answers:
            found = f"{state.posts} posts found" if state.posts else "answered, found nothing"
            return SourceStatus(
                source=link.name, status="ok" if state.posts else "empty",
                detail=f"{link.label}: {found}", requests=requests,
            )  # fmt: skip
        if index == self._current:
            detail = f"{link.label}: in use, nothing asked of it yet"
        else:
            in_use = self._states[self._current].link.name
            detail = f"{link.label}: not needed, {in_use} answered"
        return SourceStatus(source=link.name, status="skipped", detail=detail, requests=requests)


def _telling(status: SourceStatus) -> int:
    """How much an entry says about its source, most first: it answered; it failed; it was
    not needed; it is not set up."""
    if status.status in ("ok", "empty"):
        return 0
    if status.status == "skipped":
        return 2
    return 3 if status.status == "not_configured" else 1


def one_per_source(statuses: Sequence[SourceStatus]) -> list[SourceStatus]:
    """The entries merged by source, where each source first appears: the most telling entry
    (a later link's on a tie: it came after), with the requests of all of them. When none of
    them was usable, every detail is kept (what failed and what was not set up)."""
    merged: dict[str, SourceStatus] = {}
    for status in statuses:
        kept = merged.get(status.source)
        if kept is None:
            merged[status.source] = status
            continue
        chosen = status if _telling(status) <= _telling(kept) else kept
        update: dict[str, object] = {"requests": kept.requests + status.requests}
        unusable = _telling(kept) in (1, 3) and _telling(status) in (1, 3)
        if unusable and status.detail not in kept.detail:
            update["detail"] = "; ".join(d for d in (kept.detail, status.detail) if d)
        merged[status.source] = chosen.model_copy(update=update)
    return list(merged.values())


def _cursor_for(after: str | None, index: int) -> str | None:
    """The cursor for link ``index``: its own (untagged), or None to start a query over on a
    link that did not make the cursor."""
    if after is None:
        return None
    tag, sep, cursor = after.partition(_CURSOR_SEP)
    if not sep or not tag.isdigit():
        return after  # not ours: a caller's own cursor, passed through
    return cursor if int(tag) == index else None


def source_status(source: RedditSource | None) -> list[SourceStatus]:
    """A run's ``source_status``: the chain's entries, none for another kind of source."""
    return source.statuses() if isinstance(source, SourceChain) else []


def answered_by_sample(source: RedditSource | None) -> bool:
    """True when the bundled sample archive is the source in use (``sample_data``)."""
    return isinstance(source, SourceChain) and source.sample_data
