"""The shapes of the hand-written text pools the demo generator draws from.

A *topic* is one kind of thread people keep starting ("DeWalt or Milwaukee?"). Its pools are
written so any sentence can stand alone in a comment, which lets the generator combine them
into many different, still coherent comments without templates showing through.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Topic:
    """One recurring thread subject and everything people say in those threads.

    ``side_a``/``side_b`` hold the two camps of an X-vs-Y comparison; when ``shift`` is set the
    share of ``side_b`` voices grows with the year (the Airflow → Dagster pivot). Titles holding
    ``{year}`` are posted once per year of ``years``. ``gems`` are used once each, deep in a
    thread; ``dissent`` are the well-argued minority reports that still collect upvotes.
    ``questions`` maps a follow-up question to answers the person asked might give.
    """

    key: str
    subreddits: tuple[str, ...]
    titles: tuple[str, ...]
    contexts: tuple[str, ...]
    asks: tuple[str, ...]
    facts: tuple[str, ...]
    questions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    years: tuple[int, int] = (2023, 2026)
    side_a: tuple[str, ...] = ()
    side_b: tuple[str, ...] = ()
    shift: bool = False
    counters: tuple[str, ...] = ()
    gems: tuple[str, ...] = ()
    dissent: tuple[str, ...] = ()


@dataclass(frozen=True)
class Theme:
    """A family of topics that share subreddits, vocabulary and a cast of regular posters.

    Its ``questions`` are the generic follow-ups that fit any of its topics.
    """

    key: str
    topics: tuple[Topic, ...]
    questions: dict[str, tuple[str, ...]]
    frames: tuple[str, ...]
    name_parts: tuple[str, ...]
    flairs: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Special:
    """A hand-placed post that exercises one of the cases the filters must handle.

    ``kind`` names the case (nsfw, ad, link, short, non_english, injection, ...). Its thread is
    ``comments`` (top level) plus ``replies`` (a chain under the first comment), then
    ``extra_comments`` more drawn from ``topic``'s pools. ``fields`` overrides dump fields.
    """

    kind: str
    subreddit: str
    title: str
    selftext: str
    year: int
    topic: str = ""
    author: str = ""
    comments: tuple[str, ...] = ()
    replies: tuple[str, ...] = ()
    extra_comments: int = 0
    fields: dict[str, object] = field(default_factory=dict)
