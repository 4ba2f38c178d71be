"""Where the subreddit directory's data comes from: Arctic Shift, keyless, and a first build
when a live question needs the directory and the user never ran ``crowdsift subreddits update``.

A live source must choose communities from somewhere; a hand-written list of a dozen is a guess
that fails every question outside it. So the first live question that names no community
builds the directory itself (``load_or_build``): one request per prefix (36), saying so before
it starts, about a minute at the live API's pace, once per user. Profiles (a request per
community) are left to ``crowdsift subreddits update``, which the build's message names. When
Arctic Shift cannot be reached at all the build raises ``SubredditDirectoryError`` saying what
to do, and an unreachable Arctic Shift fails the first request with the transport's own
message: a question is never answered from communities nobody chose for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from crowdsift.core.config import Settings
from crowdsift.core.errors import SourceUnreachableError
from crowdsift.sources.reddit.directory import (
    DEFAULT_PREFIXES,
    PREFIX_LIMIT,
    Fetch,
    FetchRecent,
    SubredditDirectory,
    SubredditDirectoryError,
    directory_path,
    refresh_directory,
)

Notice = Callable[[str], None]
"""Says one line of progress to the user."""
NOTICE_EVERY = 6
"""Prefixes between progress notices of a first build (six notices for 36 prefixes)."""


@contextmanager
def prefix_fetch(settings: Settings) -> Iterator[Fetch]:
    """``fetch(prefix)`` over Arctic Shift (ARCTIC_SHIFT_BASE_URL), closed afterwards."""
    from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource

    source = ArcticShiftSource.from_settings(settings)
    try:
        yield lambda prefix: source.search_subreddits(prefix=prefix, limit=PREFIX_LIMIT)
    finally:
        source.close()


@contextmanager
def recent_fetch(settings: Settings) -> Iterator[FetchRecent]:
    """``fetch_recent(name)`` over Arctic Shift: the community's newest posts, one request."""
    from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
    from crowdsift.sources.reddit.community_posts import RECENT_POSTS

    source = ArcticShiftSource.from_settings(settings)
    try:
        yield lambda name: source.recent_posts(name, limit=RECENT_POSTS)
    finally:
        source.close()


def load_or_build(settings: Settings, notice: Notice) -> SubredditDirectory:
    """The user's directory; built, saved and returned when there is none yet.

    ``notice`` hears that the build starts, how far it got every ``NOTICE_EVERY`` prefixes,
    and what it saved. A build that reaches nothing raises ``SubredditDirectoryError`` naming
    the URL tried, ``-r`` and ``crowdsift subreddits update``; a partial one is saved and used
    (the next ``subreddits update`` fills it in)."""
    path = directory_path(settings)
    found = SubredditDirectory.load(path)
    if found is not None:
        return found
    notice(
        f"no subreddit directory yet: building it from Arctic Shift once ({len(DEFAULT_PREFIXES)} "
        "requests, about a minute); later questions reuse it"
    )

    def on_progress(done: int, total: int, entries: int) -> None:
        if done % NOTICE_EVERY == 0 and done < total:
            notice(f"subreddit directory: {done}/{total} prefixes, {entries:,} communities")

    try:
        with prefix_fetch(settings) as fetch:
            built = refresh_directory(fetch, progress=on_progress, fatal=(SourceUnreachableError,))
    except SubredditDirectoryError as exc:
        raise _unbuilt(settings, str(exc)) from None
    if not len(built):  # saved, it would leave every later question nothing to choose from
        raise _unbuilt(settings, "Arctic Shift listed no subreddit for any prefix")
    built.save(path)
    failed = "".join(built.failed_prefixes)
    notice(
        f"saved {len(built):,} subreddits to {path}"
        + (f"; prefixes {failed} failed (`crowdsift subreddits update --prefixes {failed}`)"
           if failed else "")
        + "; `crowdsift subreddits update` adds what their recent threads talk about"
    )  # fmt: skip
    return built


def _unbuilt(settings: Settings, reason: str) -> SubredditDirectoryError:
    return SubredditDirectoryError(
        f"{reason.rstrip('.')}. A live question without -r needs the directory of subreddits "
        f"to choose from: check ARCTIC_SHIFT_BASE_URL ({settings.arctic_shift_base_url}) and "
        "the network and run `crowdsift subreddits update`, or name the communities to search "
        "with -r NAME"
    )
