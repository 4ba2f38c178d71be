"""Which communities a question searches, and what they hold (blocking I/O, run on the branch's
source pool).

- An archive holds its own history: a topic's window counts back from its newest post
  (``newest_held``).
- A live source answers from the user's directory of real subreddits: the communities closest
  to the question, by meaning and by name (``closest_communities``). The directory is loaded,
  or built the first time (``sources.reddit.directory_fetch.load_or_build``), only when a
  question names no community.
- A live source that lists by date shows, in one request per community, what its recent threads
  say (``recent_profiles``: where its window ends, which words it uses all the time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.core.source import HoldsHistory, ListsRecent, RedditSource, SearchesByMeaning
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.reddit.recent import RecentProfile, recent_profile
from crowdsift.pipeline.reddit.topicality import SubredditProfile
from crowdsift.sources.reddit.community_posts import RECENT_POSTS
from crowdsift.sources.reddit.directory import SubredditDirectory
from crowdsift.sources.reddit.directory_match import closest

log = get_logger(__name__)

DirectoryLoader = Callable[[], SubredditDirectory]
"""The user's directory, read (or first built) when called: blocking I/O, run on the pool."""
DIRECTORY_CANDIDATES = 8
"""Communities of the directory the formulation chooses among for one question."""
UNRELATED_MEANING = 0.2
"""A community sharing no word with the question and below this cosine is unrelated to it: in
a directory of thousands the 8 closest all relate, but in a small or partial one they include
communities with nothing on the question (a bread forum for a Home Assistant question), and a
search there spends requests on noise. MiniLM puts unrelated short texts under about 0.15."""


def closest_communities(
    question: str,
    directory: DirectoryLoader,
    embedder: Embedder,
    *,
    cache_dir: Path | None = None,
) -> list[SubredditProfile]:
    """The directory's communities closest to ``question``, best first, as the formulation's
    candidates (their descriptions are what an engine reads about them). Unrelated ones
    (``UNRELATED_MEANING``) are left out unless nothing else is left; none from an empty
    directory."""
    matches = closest(
        question, directory(), embedder, limit=DIRECTORY_CANDIDATES, cache_dir=cache_dir
    )
    related = [m for m in matches if m.words or m.name or m.meaning >= UNRELATED_MEANING]
    matches = related or matches[:1]
    log.info("directory_candidates", candidates=[(m.info.name, m.score) for m in matches])
    return [
        SubredditProfile(name=m.info.name, description=f"{m.info.title}. {m.info.description}")
        for m in matches
    ]


def recent_profiles(source: RedditSource, subreddits: Sequence[str]) -> list[RecentProfile]:
    """What the searched communities' newest posts say (one request each), for a live source
    that lists them; none for any other source, and none for a community whose listing fails
    (the plan then counts its window back from now and orders words as the question does)."""
    if not isinstance(source, ListsRecent):
        return []
    profiles: list[RecentProfile] = []
    for name in subreddits:
        try:
            posts = source.recent_posts(name, limit=RECENT_POSTS)
        except CrowdsiftError as exc:
            log.info("recent_posts_failed", subreddit=name, error=str(exc))
            continue
        profiles.append(recent_profile(name, posts))
    return profiles


def newest_held(source: RedditSource, subreddits: Sequence[str]) -> datetime | None:
    """The newest post ``source`` holds in ``subreddits``, when it is a store that knows (an
    archive); None for a live source, whose windows count back from now."""
    if not isinstance(source, HoldsHistory):
        return None
    return source.newest_post(subreddits)


def searches_meaning(source: RedditSource) -> bool:
    """Whether ``source`` can rank its threads by meaning now (an archive with vectors of the
    engine's model); a failure to read them leaves the searches by words to do the work."""
    if not isinstance(source, SearchesByMeaning):
        return False
    try:
        return source.searches_meaning()
    except CrowdsiftError as exc:
        log.warning("meaning_search_unavailable", error=str(exc))
        return False
