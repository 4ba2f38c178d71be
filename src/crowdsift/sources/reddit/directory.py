"""A directory of real subreddits: names, descriptions and sizes, fetched keyless, kept per user.

Live sources must choose which subreddits to search. The directory holds every sizeable SFW
community Arctic Shift's keyless ``/api/subreddits/search`` returns for the prefixes a-z and
0-9 (up to 1,000 each): name, title, public description and subscribers. ``refresh_directory``
builds it with an injected ``fetch(prefix)``, one call per prefix; a prefix that fails is
recorded and the others still count. It lives in ``<data dir>/subreddits.json``
(``directory_path``), written atomically, refreshed by ``crowdsift subreddits update``;
after ``DIRECTORY_MAX_AGE`` it is stale (still used; the CLI says so).
``sources.reddit.directory_match`` matches a question to it.

A description says what a community is for, not the products and words its members use, so
the biggest entries (``PROFILE_LIMIT``) also carry a *profile* of what the source holds for
them: ``profile_directory`` reads each one's newest posts with an injected
``fetch_recent(name)`` (one request each) and keeps, compactly, the best-scored recent titles
(``recent_titles``) and the words its recent posts keep using (``recent_terms``), with how
many posts were read (``profile_posts``) and when (``profiled_at``). A failing fetch is
recorded (``failed_profiles``) and the entry keeps the profile it had; a refresh carries every
profile over from the previous directory, so nothing is lost between updates. Files written
before profiles existed read as entries without one.

A damaged file raises ``SubredditDirectoryError`` naming the fix (``crowdsift subreddits
update``) rather than reading as absent: a silent absence would quietly send every question
back to the planner's built-in handful of communities and nobody would learn why. A caller
that prefers to carry on catches the one error class.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.core.models import HISTORIC_SUBREDDITS, AwareDatetime, normalise_subreddit
from crowdsift.core.text import utc_now
from crowdsift.sources.reddit.community_posts import (
    as_count,
    clean_field,
    summarise_posts,
)

log = get_logger(__name__)

Fetch = Callable[[str], list[dict[str, Any]]]
Progress = Callable[[int, int, int], None]
FetchRecent = Callable[[str], list[dict[str, Any]]]
"""``fetch_recent(display_name)``: the community's newest posts, raw t3 dicts."""
ProfileProgress = Callable[[int, int, str, int], None]
"""``progress(done, total, display_name, failed_so_far)`` after each profile fetch."""

DIRECTORY_FILE = "subreddits.json"
DEFAULT_PREFIXES: tuple[str, ...] = tuple("abcdefghijklmnopqrstuvwxyz0123456789")
PREFIX_LIMIT = 1000
"""Subreddits asked for per prefix (the most ``/api/subreddits/search`` returns at once)."""
MIN_SUBSCRIBERS = 1_000
"""Smaller communities rarely hold enough threads for a search to find an answer, they are
most of Reddit's 100,000+ (so most of the embedding cost), and their descriptions are often
empty; a question naming one can still be searched with ``--subreddit``."""
DIRECTORY_MAX_AGE = timedelta(days=30)
"""Communities change slowly; a month-old directory is still right about nearly all of them."""
DESCRIPTION_CHARS = 500
"""Reddit's own limit for ``public_description``; a sidebar fallback is cut to it."""
PROFILE_LIMIT = 1000
"""Entries profiled by default, biggest first: one request each, and Arctic Shift sustains
about 0.8 a second, so this is ~20 minutes; smaller communities rarely decide a search."""


class SubredditDirectoryError(CrowdsiftError):
    """The directory cannot be built or read; the message says what to run."""


# --- entries ---------------------------------------------------------------------------------


class SubredditInfo(BaseModel):
    """One community: its name (lower case), how Reddit writes it, what it says it is about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    display_name: str
    title: str = ""
    description: str = ""
    subscribers: int = Field(0, ge=0)
    over18: bool = False
    profiled_at: AwareDatetime | None = None
    """When the profile below was read; None: never profiled (the rest is then empty)."""
    profile_posts: int = Field(0, ge=0)
    """Recent posts the profile read; 0 with ``profiled_at`` set: the source held none."""
    recent_titles: list[str] = Field(default_factory=list)
    """Up to ``RECENT_TITLES`` titles of those posts, best-scored first, each cut to
    ``TITLE_CHARS``."""
    recent_terms: dict[str, int] = Field(default_factory=dict)
    """Word (``profile_words``) → posts read using it (title or body): up to
    ``RECENT_TERMS``, the most used, each in at least ``MIN_TERM_POSTS``."""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        name = normalise_subreddit(value)
        if name in HISTORIC_SUBREDDITS:
            raise ValueError(f"{value!r} is not a community one can search")
        return name

    @model_validator(mode="after")
    def _same_name(self) -> SubredditInfo:
        if self.display_name.lower() != self.name:
            raise ValueError(f"display_name {self.display_name!r} is not r/{self.name}")
        return self

    @classmethod
    def from_about(cls, raw: object) -> SubredditInfo | None:
        """A Reddit ``about`` dict as an entry; None when it cannot be one: no or an invalid
        name, a user profile (``u_…``), a quarantined community."""
        if not isinstance(raw, Mapping):
            return None
        display = raw.get("display_name")
        if not isinstance(display, str) or not display.strip():
            return None
        display = re.sub(r"^/?r/", "", display.strip(), flags=re.IGNORECASE).strip("/")
        if raw.get("subreddit_type") == "user" or display.lower().startswith("u_"):
            return None
        if raw.get("quarantine") is True:
            return None
        try:
            return cls(
                name=display,
                display_name=display,
                title=clean_field(raw.get("title")),
                description=_description(raw),
                subscribers=as_count(raw.get("subscribers")),
                over18=raw.get("over18") is True or raw.get("over_18") is True,
            )
        except ValidationError:
            return None

    def __hash__(self) -> int:  # the profile's list and dict are not hashable; equal is equal
        return hash((self.name, self.subscribers, self.profiled_at))

    @property
    def profiled(self) -> bool:
        return self.profiled_at is not None

    def with_profile(self, posts: Sequence[Mapping[str, Any]], when: datetime) -> SubredditInfo:
        """This entry profiled from its newest ``posts`` (raw t3 dicts, any order) at ``when``
        (``community_posts.summarise_posts``)."""
        titles, terms = summarise_posts(posts)
        return self.model_copy(
            update={
                "profiled_at": when,
                "profile_posts": len(posts),
                "recent_titles": titles,
                "recent_terms": terms,
            }
        )

    def with_profile_of(self, other: SubredditInfo) -> SubredditInfo:
        """This entry with ``other``'s profile (a refresh keeps what the last profiling read)."""
        return self.model_copy(update={field: getattr(other, field) for field in PROFILE_FIELDS})


PROFILE_FIELDS = ("profiled_at", "profile_posts", "recent_titles", "recent_terms")


def _description(raw: Mapping[str, Any]) -> str:
    text = clean_field(raw.get("public_description")) or clean_field(raw.get("description"))
    return text[:DESCRIPTION_CHARS].rstrip()


# --- the directory ---------------------------------------------------------------------------


class RefreshCounts(BaseModel):
    """What a refresh read and left out, so nothing disappears unexplained."""

    records: int = 0
    skipped: int = 0
    """Unusable records: no name, an invalid one, a user profile, a quarantined community."""
    over18: int = 0
    small: int = 0
    """Under ``MIN_SUBSCRIBERS``."""
    duplicates: int = 0


class SubredditDirectory(BaseModel):
    """Communities biggest first, when and where they were fetched, and which prefixes failed.

    Built once and then only read: the name index, vectors and size prior are cached."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    source: str = "arctic-shift"
    fetched_at: AwareDatetime
    entries: list[SubredditInfo] = Field(default_factory=list)
    prefixes: list[str] = Field(default_factory=list)
    failed_prefixes: dict[str, str] = Field(default_factory=dict)
    """Prefix → why its fetch failed (their entries, if any, come from the previous build)."""
    counts: RefreshCounts = Field(default_factory=RefreshCounts)
    failed_profiles: dict[str, str] = Field(default_factory=dict)
    """Entry name → why its last profile fetch failed (it keeps the profile it had)."""

    @classmethod
    def load(cls, path: Path) -> SubredditDirectory | None:
        """The directory saved at ``path``; None when there is none. A damaged file raises."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SubredditDirectoryError(f"cannot read {path}: {exc}") from exc
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise SubredditDirectoryError(
                f"{path} is damaged ({where}: {first['msg']}); "
                "run `crowdsift subreddits update` to build it again"
            ) from None

    def save(self, path: Path) -> None:
        """Write to ``path`` atomically: readers see the old file or the new, never half."""
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, self.model_dump_json().encode("utf-8"))

    def replaced(self, **update: Any) -> SubredditDirectory:
        """A new directory with ``update`` applied (``model_copy`` would carry the cached
        index and hash of this one)."""
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self)(**{**fields, **update})

    def get(self, name: str) -> SubredditInfo | None:
        """The entry of ``name`` ("r/HomeAssistant", "homeassistant"), if present."""
        try:
            return self._by_name.get(normalise_subreddit(name))
        except ValueError:
            return None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self.entries)

    def age(self, now: datetime) -> timedelta:
        return now - self.fetched_at

    def is_stale(self, now: datetime) -> bool:
        """Older than ``DIRECTORY_MAX_AGE``: time for ``crowdsift subreddits update``."""
        return self.age(now) > DIRECTORY_MAX_AGE

    @cached_property
    def _by_name(self) -> dict[str, SubredditInfo]:
        return {entry.name: entry for entry in self.entries}

    @cached_property
    def compact_index(self) -> dict[str, list[int]]:
        """Entry positions by name without underscores ("home_assistant" → homeassistant)."""
        index: dict[str, list[int]] = {}
        for position, entry in enumerate(self.entries):
            index.setdefault(entry.name.replace("_", ""), []).append(position)
        return index

    @cached_property
    def content_hash(self) -> str:
        """A hash of the entries: directories with the same entries share their vectors."""
        digest = hashlib.sha256()
        for entry in self.entries:
            digest.update(entry.model_dump_json().encode("utf-8", "surrogatepass") + b"\0")
        return digest.hexdigest()


def directory_path(settings: Settings) -> Path:
    """Where the user's directory lives: ``<data dir>/subreddits.json`` (``CROWDSIFT_HOME``)."""
    return settings.data_dir / DIRECTORY_FILE


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- refresh ---------------------------------------------------------------------------------


def refresh_directory(
    fetch: Fetch,
    *,
    prefixes: Sequence[str] = DEFAULT_PREFIXES,
    progress: Progress | None = None,
    clock: Callable[[], datetime] = utc_now,
    previous: SubredditDirectory | None = None,
    source: str = "arctic-shift",
    min_subscribers: int = MIN_SUBSCRIBERS,
    fatal: tuple[type[CrowdsiftError], ...] = (),
) -> SubredditDirectory:
    """One ``fetch(prefix)`` per prefix; SFW communities of at least ``min_subscribers``,
    each once (its biggest record), biggest first.

    A fetch raising a ``CrowdsiftError`` (a source failure) is recorded in
    ``failed_prefixes`` and the rest go on; only when every prefix failed does this raise
    (``SubredditDirectoryError`` with the first reason). ``progress(done, total, entries)``
    follows each prefix. With ``previous``, its entries under prefixes not fetched
    successfully now are kept, so a partial update (``--prefixes ab``, a failing prefix)
    never shrinks the directory. An error of a ``fatal`` class propagates at once (a source
    that cannot be reached at all fails the first prefix, not all 36 one by one).
    """
    if not prefixes:
        raise ValueError("prefixes must not be empty")
    wanted = list(dict.fromkeys(p.lower() for p in prefixes))
    best: dict[str, SubredditInfo] = {}
    failed: dict[str, str] = {}
    counts = Counter[str]()
    for done, prefix in enumerate(wanted, 1):
        try:
            records = fetch(prefix)
        except fatal:
            raise
        except CrowdsiftError as exc:
            failed[prefix] = str(exc) or type(exc).__name__
            log.warning("subreddit_prefix_failed", prefix=prefix, error=failed[prefix])
            records = []
        for raw in records:
            _add(best, raw, counts, min_subscribers)
        if progress is not None:
            progress(done, len(wanted), len(best))
    if len(failed) == len(wanted):
        first = next(iter(failed.items()))
        raise SubredditDirectoryError(
            f"no subreddit could be fetched: all {len(wanted)} prefixes failed; "
            f"the first ({first[0]!r}): {first[1]}"
        )
    fetched = [p for p in wanted if p not in failed]
    return _refreshed(best, fetched, failed, counts, previous, source=source, now=clock())


def _refreshed(
    best: dict[str, SubredditInfo],
    fetched: list[str],
    failed: dict[str, str],
    counts: Counter[str],
    previous: SubredditDirectory | None,
    *,
    source: str,
    now: datetime,
) -> SubredditDirectory:
    """The new directory: what was fetched now, plus the entries (and failed profiles) of
    ``previous`` under the prefixes not fetched now."""
    if previous is not None:
        _keep_previous(best, previous, fetched)
    entries = sorted(best.values(), key=lambda e: (-e.subscribers, e.name))
    known = {*(previous.prefixes if previous is not None else ()), *fetched}
    failed_profiles = {
        name: reason
        for name, reason in (previous.failed_profiles if previous is not None else {}).items()
        if name in best
    }
    return SubredditDirectory(
        source=source,
        fetched_at=now,
        entries=entries,
        prefixes=sorted(known),
        failed_prefixes=failed,
        counts=RefreshCounts(**counts),
        failed_profiles=failed_profiles,
    )


def _add(
    best: dict[str, SubredditInfo], raw: object, counts: Counter[str], min_subscribers: int
) -> None:
    counts["records"] += 1
    info = SubredditInfo.from_about(raw)
    if info is None:
        counts["skipped"] += 1
    elif info.over18:
        counts["over18"] += 1
    elif info.subscribers < min_subscribers:
        counts["small"] += 1
    elif (seen := best.get(info.name)) is not None:
        counts["duplicates"] += 1
        if info.subscribers > seen.subscribers:
            best[info.name] = info
    else:
        best[info.name] = info


def _keep_previous(
    best: dict[str, SubredditInfo], previous: SubredditDirectory, fetched: list[str]
) -> None:
    """Entries under prefixes not fetched now stay; entries fetched again keep their profile."""
    for entry in previous.entries:
        if (found := best.get(entry.name)) is not None:
            if entry.profiled and not found.profiled:
                best[entry.name] = found.with_profile_of(entry)
        elif not entry.name.startswith(tuple(fetched)):
            best[entry.name] = entry


# --- profiles --------------------------------------------------------------------------------


def profile_targets(directory: SubredditDirectory, limit: int = PROFILE_LIMIT) -> list[str]:
    """Display names of the ``limit`` biggest SFW entries, biggest first: whom to profile."""
    entries = sorted(
        (e for e in directory.entries if not e.over18), key=lambda e: (-e.subscribers, e.name)
    )
    return [e.display_name for e in entries[: max(limit, 0)]]


def profile_directory(
    directory: SubredditDirectory,
    fetch_recent: FetchRecent,
    *,
    names: Sequence[str] | None = None,
    progress: ProfileProgress | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> SubredditDirectory:
    """``directory`` with the entries ``names`` (default ``profile_targets``) profiled from
    ``fetch_recent(display_name)``, one call each, in the order given (pure apart from it).

    A fetch raising a ``CrowdsiftError`` (a source failure) is recorded in
    ``failed_profiles`` and the rest go on; that entry keeps the profile it had. A name
    profiled now leaves ``failed_profiles``; failures of names not asked for now stay.
    ``progress(done, total, display_name, failed)`` follows each fetch. A name the directory
    does not hold is a ``ValueError`` (before any fetch)."""
    wanted = profile_targets(directory) if names is None else list(names)
    where = {entry.name: position for position, entry in enumerate(directory.entries)}
    positions: dict[str, int] = {}
    for name in wanted:
        entry = directory.get(name)
        if entry is None:
            raise ValueError(f"r/{name} is not in the directory")
        positions.setdefault(entry.name, where[entry.name])
    entries = list(directory.entries)
    failed = dict(directory.failed_profiles)
    failures = 0
    for done, (name, position) in enumerate(positions.items(), 1):
        entry = entries[position]
        try:
            posts = fetch_recent(entry.display_name)
        except CrowdsiftError as exc:
            failures += 1
            failed[name] = str(exc) or type(exc).__name__
            log.warning("subreddit_profile_failed", subreddit=name, error=failed[name])
        else:
            entries[position] = entry.with_profile(posts, clock())
            failed.pop(name, None)
        if progress is not None:
            progress(done, len(positions), entry.display_name, failures)
    return directory.replaced(entries=entries, failed_profiles=failed)


def describe(directory: SubredditDirectory, now: datetime) -> dict[str, object]:
    """What ``crowdsift subreddits stats`` shows: size, source, age, gaps."""
    return {
        "subreddits": len(directory),
        "source": directory.source,
        "fetched_at": directory.fetched_at.isoformat(),
        "age_days": round(directory.age(now).total_seconds() / 86400, 1),
        "stale": directory.is_stale(now),
        "prefixes": "".join(directory.prefixes),
        "failed_prefixes": dict(directory.failed_prefixes),
        "counts": directory.counts.model_dump(),
        "profiled": sum(1 for e in directory.entries if e.profiled),
        "profiled_without_posts": sum(
            1 for e in directory.entries if e.profiled and e.profile_posts == 0
        ),
        "failed_profiles": dict(directory.failed_profiles),
    }
