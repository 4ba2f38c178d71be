"""The shapes of the hand-written expert channels the demo generator turns into exports.

Post and comment texts use a small markup the generator renders as Telegram text entities:
``**bold**``, ``__italic__``, `` `code` ``, ``#hashtag``, bare ``https://...`` URLs (a ``link``
entity), ``[label](https://...)`` (a ``text_link``), ``[label](post:KEY)`` (a ``text_link``
to the channel's post KEY) and ``{post:KEY}`` (a visible ``https://t.me/<channel>/<id>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Reply:
    """One comment in a post's thread.

    ``who`` is ``"expert"`` (the channel's author), a community member's display name, or
    ``""`` for any member. ``to`` is the index of an earlier reply in the same thread that
    this one answers; ``None`` answers the post itself. ``empty`` makes a sticker (no text).
    """

    text: str
    who: str = ""
    to: int | None = None
    empty: bool = False


@dataclass(frozen=True)
class Post:
    """One channel post, in publication order.

    ``reply_to`` / ``forward_of`` name earlier posts by key (a forward repeats the original's
    text, as Telegram does); ``forwarded_from`` is another channel's name; ``photo`` with no
    text makes a media-only post. ``filler`` is how many generic comments follow ``thread``
    (``None``: the generator picks 0-3).
    """

    key: str
    text: str = ""
    reply_to: str | None = None
    forward_of: str | None = None
    forwarded_from: str | None = None
    photo: bool = False
    edited: bool = False
    thread: tuple[Reply, ...] = ()
    filler: int | None = None


@dataclass(frozen=True)
class Channel:
    """A fictional expert's channel, its discussion group and the people who comment there.

    ``expert_as`` says how the author comments: ``"channel"`` (as the channel itself) or
    ``"user"`` (from ``author_user``, a personal account: display name and ``from_id``).
    ``signature`` is the ``author`` field of signed posts (``None``: the channel does not sign).
    """

    username: str
    name: str
    chat_id: int
    group_name: str
    group_id: int
    tz_hours: int
    start: datetime
    end: datetime
    expert_as: str
    members: tuple[str, ...]
    filler: tuple[str, ...]
    posts: tuple[Post, ...]
    signature: str | None = None
    author_user: tuple[str, str] | None = None
    chatter: tuple[str, ...] = ()
