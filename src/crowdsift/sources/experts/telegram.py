"""Telegram Desktop JSON exports → typed messages, links between posts, comment threads. Pure.

What an export holds (Telegram Desktop → channel menu → *Export chat history*, format JSON,
one chat; the file is ``result.json``): ``name``, ``type`` (``public_channel``,
``private_channel``, ``public_supergroup``, ``private_supergroup`` ...), ``id`` and
``messages``. A message has ``id``, ``type`` (``message``, ``service``, or ``unsupported``),
``date`` (the exporting machine's *local* time, no offset), usually ``date_unixtime`` (epoch
seconds as a string; preferred), ``from`` / ``from_id`` (``channel123`` / ``user456``; very
old exports wrote a bare number), ``author`` (the post signature, when the channel signs
posts), ``forwarded_from`` (a *name* only), ``reply_to_message_id`` (plus
``reply_to_peer_id`` when the reply points into another chat), and ``text``: a string, or a
list mixing strings and entity objects (``{"type": "text_link", "text": "here", "href":
...}``). ``text_entities`` is the same text as a list of objects only.

What the export does not say, and how we cope:

- **The channel's username** (needed for ``https://t.me/<channel>/<id>``) is not exported.
  ``infer_username`` takes the username the channel's own t.me post links use most (a link
  counts when its message id exists in the export). Callers let the user override it.
- **Forwards of the channel's own posts** carry the channel's name, never the original
  message id. ``channel_links`` finds the original as the earliest earlier, non-forwarded
  post with the same text; forwards of media-only posts or of posts older than the export
  cannot be resolved and are counted.
- **Discussion groups** receive every channel post as an automatic forward sent by the
  channel itself (``from_id`` = ``channel<id>``, ``forwarded_from`` set, not a reply). The
  copy has its own group message id and does not carry the original id, so
  ``thread_discussion`` matches copies to posts: identical text within a day after the post
  wins (closest in time); otherwise the closest post within ten minutes (media-only and
  edited posts). Each post matches at most one copy. Comments are group messages whose reply
  chain (``reply_to_message_id``, followed through other comments) reaches a matched copy.
- **Who is the expert** in the comments: the channel itself (``from_id`` equal to the
  channel's peer id, i.e. an admin commenting *as the channel*), a user id the caller names,
  or a user whose display name equals a signature (``author``) seen on the channel's posts.
  Display names are not unique, so naming the author's user id is the reliable way.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeGuard, TypeVar

from pydantic import BaseModel

from crowdsift.core.errors import ArchiveError

CHANNEL_TYPES = frozenset({"public_channel", "private_channel"})
GROUP_TYPES = frozenset({"public_supergroup", "private_supergroup", "private_group"})
TEXT_MATCH_WINDOW = timedelta(days=1)
TIME_MATCH_WINDOW = timedelta(minutes=10)
CLOCK_SKEW = timedelta(minutes=1)
MAX_REPLY_DEPTH = 10_000
EARLIEST_DATE = datetime(1, 1, 2, tzinfo=UTC) + TEXT_MATCH_WINDOW
LATEST_DATE = datetime(9999, 12, 30, tzinfo=UTC) - TEXT_MATCH_WINDOW
"""Messages dated outside these are malformed: matching copies to posts shifts dates by its
windows, which must not leave the calendar (OverflowError)."""
T = TypeVar("T")

_TME_POST = re.compile(
    r"(?:https?://)?(?:www\.)?(?:t|telegram)\.me/(?:s/)?([A-Za-z][A-Za-z0-9_]{3,31})/(\d{1,10})\b",
    re.IGNORECASE,
)
_TME_PRIVATE = re.compile(
    r"(?:https?://)?(?:t|telegram)\.me/c/(\d{1,16})/(?:\d{1,10}/)?(\d{1,10})\b", re.IGNORECASE
)
_SPACES = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_ID = 2**63 - 1
"""Ids, reply ids and view counts past 64 bits are malformed: no store can hold them."""


class TelegramExportError(ArchiveError):
    """A file is not a Telegram Desktop JSON export of the kind we need."""


class MalformedMessage(BaseModel):
    """A message that could not be used: where it is and why."""

    where: str
    reason: str


@dataclass(frozen=True, slots=True)
class TgMessage:
    """One ordinary message, types checked; ``date`` is aware UTC."""

    id: int
    date: datetime
    text: str
    from_name: str | None = None
    from_id: str | None = None
    reply_to: int | None = None
    reply_to_peer: str | None = None
    forwarded_from: str | None = None
    signature: str | None = None
    views: int | None = None
    hrefs: tuple[str, ...] = ()
    naive_date: bool = False


@dataclass
class TgChat:
    """A parsed export: its header, usable messages and what was skipped."""

    name: str
    type: str
    chat_id: int | None
    messages: list[TgMessage] = field(default_factory=list)
    service: int = 0
    unsupported: int = 0
    malformed: list[MalformedMessage] = field(default_factory=list)

    @property
    def peer_id(self) -> str | None:
        """How this chat appears in ``from_id`` when it sends a message (channels only)."""
        return f"channel{self.chat_id}" if self.chat_id is not None else None

    @property
    def naive_dates(self) -> int:
        return sum(m.naive_date for m in self.messages)


def plain_text(text: object) -> str:
    """A message's text as a reader sees it: strings and entity texts joined in order."""
    if isinstance(text, str):
        return text
    if not isinstance(text, list):
        raise ValueError(f"'text' must be a string or a list, not {type(text).__name__}")
    parts = []
    for part in text:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text", ""), str):
            parts.append(part.get("text", ""))
        else:
            raise ValueError(f"'text' holds a {type(part).__name__} that is not an entity")
    return "".join(parts)


def _hrefs(text: object) -> tuple[str, ...]:
    """Hidden link targets (``text_link`` hrefs): the only URLs not visible in the text."""
    parts = text if isinstance(text, list) else []
    return tuple(p["href"] for p in parts if isinstance(p, dict) and isinstance(p.get("href"), str))


def parse_chat(data: object, *, label: str) -> TgChat:
    """Check the export's header and parse every message; bad messages are counted, not fatal."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        hint = ""
        if isinstance(data, dict) and isinstance(data.get("chats"), dict):
            hint = " This looks like a whole-account export; export the one chat instead."
        raise TelegramExportError(
            f"{label} is not a Telegram Desktop chat export: expected a JSON object with "
            "'name', 'type', 'id' and a 'messages' list (Telegram Desktop → chat menu → "
            f"Export chat history → format JSON).{hint}"
        )
    chat_id = data.get("id")
    chat = TgChat(
        name=_clean(data.get("name")),
        type=_clean(data.get("type")),
        chat_id=chat_id if _is_int(chat_id) and abs(chat_id) <= MAX_ID else None,
    )
    for index, raw in enumerate(data["messages"]):
        kind = raw.get("type", "message") if isinstance(raw, dict) else None
        try:
            if kind == "service":
                chat.service += 1
            elif kind == "message":
                chat.messages.append(parse_message(raw))
            elif isinstance(kind, str):
                chat.unsupported += 1
            else:
                raise ValueError("not a JSON object" if kind is None else "'type' is not a string")
        except ValueError as exc:
            where = _where(label, index, raw)
            chat.malformed.append(MalformedMessage(where=where, reason=str(exc)))
    return chat


def _where(label: str, index: int, raw: object) -> str:
    msg_id = raw.get("id") if isinstance(raw, dict) else None
    suffix = f" (id {msg_id})" if isinstance(msg_id, int | str) else ""
    return f"{label} messages[{index}]{suffix}"


def parse_message(raw: dict[str, Any]) -> TgMessage:
    """One ``type: message`` object → TgMessage; ValueError names the field that is wrong."""
    msg_id = raw.get("id")
    if not _is_int(msg_id) or not 1 <= msg_id <= MAX_ID:
        raise ValueError("missing or invalid 'id' (expected a positive integer)")
    date, naive = _date(raw)
    text = raw.get("text")
    if text is None:
        text = raw.get("text_entities", "")
    from_id = raw.get("from_id")
    if _is_int(from_id):  # very old exports: a bare user id
        raw = {**raw, "from_id": f"user{from_id}"}
    return TgMessage(
        id=msg_id,
        date=date,
        text=_clean(plain_text(text)),
        from_name=_opt(raw, "from", str),
        from_id=_opt(raw, "from_id", str),
        reply_to=_opt(raw, "reply_to_message_id", int),
        reply_to_peer=_opt(raw, "reply_to_peer_id", str),
        forwarded_from=_opt(raw, "forwarded_from", str),
        signature=_opt(raw, "author", str),
        views=_opt(raw, "views", int),
        hrefs=tuple(_clean(href) for href in _hrefs(text)),
        naive_date=naive,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt(raw: dict[str, Any], key: str, kind: type[T]) -> T | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"'{key}' must be {kind.__name__}, not {type(value).__name__}")
    if isinstance(value, int) and not 0 <= value <= MAX_ID:
        raise ValueError(f"'{key}' is out of range")
    if isinstance(value, str):
        return _clean(value)  # type: ignore[return-value]  # T is str here
    return value


def _clean(value: object) -> str:
    """A string field; lone surrogates (a broken emoji escape) become U+FFFD, since no store,
    encoder or terminal takes them. Anything but a string is ""."""
    return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else ""


def _date(raw: dict[str, Any]) -> tuple[datetime, bool]:
    """``date_unixtime`` when usable; else ``date`` (local time, taken as UTC: flagged naive)."""
    unix = raw.get("date_unixtime")
    if isinstance(unix, int | str) and not isinstance(unix, bool) and str(unix).isdigit():
        try:
            return _in_range(datetime.fromtimestamp(int(unix), UTC), "date_unixtime"), False
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"'date_unixtime' {str(unix)[:20]!r} is out of range") from None
    value = raw.get("date")
    if not isinstance(value, str):
        raise ValueError("missing 'date' and 'date_unixtime'")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'date' {value[:40]!r} is not an ISO date") from None
    naive = parsed.tzinfo is None
    try:
        date = parsed.replace(tzinfo=UTC) if naive else parsed.astimezone(UTC)
        return _in_range(date, "date"), naive
    except (OverflowError, ValueError):  # astimezone past year 1 or 9999
        raise ValueError(f"'date' {value[:40]!r} is out of range") from None


def _in_range(date: datetime, field: str) -> datetime:
    """``date``, if copy matching can shift it by its windows without leaving the calendar."""
    if not EARLIEST_DATE <= date <= LATEST_DATE:
        raise ValueError(f"'{field}' is out of range")
    return date


def post_refs(message: TgMessage, username: str, chat_id: int | None) -> list[int]:
    """Ids of this channel's posts that ``message`` links to (visible URLs and hidden hrefs)."""
    found: list[int] = []
    for chunk in (message.text, *message.hrefs):
        for name, post_id in _TME_POST.findall(chunk):
            if name.lower() == username.lower():
                found.append(int(post_id))
        if chat_id is not None:
            for private_id, post_id in _TME_PRIVATE.findall(chunk):
                if int(private_id) == chat_id:
                    found.append(int(post_id))
    return [post_id for post_id in dict.fromkeys(found) if post_id != message.id]


def infer_username(chat: TgChat) -> tuple[str | None, int]:
    """The username most of the channel's t.me post links use, and how many links agree."""
    ids = {m.id for m in chat.messages}
    votes: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    for message in chat.messages:
        for chunk in (message.text, *message.hrefs):
            for name, post_id in _TME_POST.findall(chunk):
                if int(post_id) in ids and int(post_id) != message.id:
                    votes[name.lower()] += 1
                    spelling.setdefault(name.lower(), name)
    if not votes:
        return None, 0
    (best, count), *rest = votes.most_common()
    if rest and rest[0][1] == count:
        return None, 0  # a tie: refuse to guess
    return spelling[best], count


def normalise_text(text: str) -> str:
    """Text compared for forwards and copies: whitespace collapsed, case kept."""
    return _SPACES.sub(" ", text).strip()


@dataclass
class ChannelLinks:
    """Edges found in a channel: (source_id, target_id, kind), plus unresolved forwards."""

    edges: list[tuple[int, int, str]] = field(default_factory=list)
    unresolved_forwards: int = 0


def channel_links(chat: TgChat, username: str) -> ChannelLinks:
    """Replies, mentions of own posts and forwards of own posts, in message order, deduplicated."""
    result = ChannelLinks()
    seen: set[tuple[int, int, str]] = set()
    originals: dict[str, int] = {}

    def add(source: int, target: int, kind: str) -> None:
        if source != target and (source, target, kind) not in seen:
            seen.add((source, target, kind))
            result.edges.append((source, target, kind))

    for message in sorted(chat.messages, key=lambda m: m.id):
        own_peer = message.reply_to_peer in (None, chat.peer_id)
        if message.reply_to is not None and own_peer:
            add(message.id, message.reply_to, "reply")
        for target in post_refs(message, username, chat.chat_id):
            add(message.id, target, "mention")
        key = normalise_text(message.text)
        if message.forwarded_from is not None and message.forwarded_from == chat.name:
            original = originals.get(key) if key else None
            if original is None:
                result.unresolved_forwards += 1
            else:
                add(message.id, original, "forward")
        elif key:
            originals.setdefault(key, message.id)
    return result


@dataclass(frozen=True, slots=True)
class ThreadedComment:
    """A discussion-group message placed under the channel post its thread belongs to."""

    message: TgMessage
    post_id: int
    reply_to_comment_id: int | None
    author_is_expert: bool


@dataclass
class Discussion:
    """Comments of a discussion group, with the counts of what could not be placed."""

    comments: list[ThreadedComment] = field(default_factory=list)
    copies: int = 0
    unmatched_copies: int = 0
    orphans: int = 0
    unthreaded: int = 0


def thread_discussion(
    channel: TgChat, group: TgChat, *, expert_user_ids: Collection[str] = ()
) -> Discussion:
    """Map group copies back to channel posts, then every reply chain to its post."""
    result = Discussion()
    copies = [m for m in group.messages if _is_copy(m, channel)]
    result.copies = len(copies)
    copy_to_post = match_copies(channel.messages, copies)
    result.unmatched_copies = len(copies) - len(copy_to_post)
    copy_ids = {m.id for m in copies}
    by_id = {m.id: m for m in group.messages}
    roots: dict[int, int | None] = dict(copy_to_post)
    signatures = {m.signature for m in channel.messages if m.signature}
    experts = set(expert_user_ids)
    if channel.peer_id:
        experts.add(channel.peer_id)
    for message in group.messages:
        if message.id in copy_ids:
            continue
        if message.reply_to is None:
            result.unthreaded += 1
            continue
        post_id = _thread_root(message.reply_to, by_id, roots)
        if post_id is None:
            result.orphans += 1
            continue
        parent = message.reply_to if message.reply_to not in copy_ids else None
        is_expert = message.from_id in experts or (
            message.from_name is not None and message.from_name in signatures
        )
        result.comments.append(ThreadedComment(message, post_id, parent, is_expert))
    return result


def _is_copy(message: TgMessage, channel: TgChat) -> bool:
    """An automatic forward of a channel post: sent by the channel itself, not a reply.

    ``forwarded_from`` is not required when the sender is known: a message the channel
    posted in the group itself simply finds no post to match and is counted as unmatched.
    """
    if message.reply_to is not None:
        return False
    if message.from_id is not None and channel.peer_id is not None:
        return message.from_id == channel.peer_id
    return message.forwarded_from == channel.name


def _thread_root(
    start: int, by_id: dict[int, TgMessage], roots: dict[int, int | None]
) -> int | None:
    """The post a reply chain ends at (memoised in ``roots``), or None if the chain breaks."""
    path: list[int] = []
    current: int | None = start
    answer: int | None = None
    while current is not None and len(path) < MAX_REPLY_DEPTH:
        if current in roots:
            answer = roots[current]
            break
        message = by_id.get(current)
        if message is None or current in path:
            break
        path.append(current)
        current = message.reply_to
    for message_id in path:
        roots[message_id] = answer
    return answer


def match_copies(posts: Sequence[TgMessage], copies: Sequence[TgMessage]) -> dict[int, int]:
    """Group copy id → channel post id (see the module docstring for the rule)."""
    ordered = sorted(posts, key=lambda m: (m.date, m.id))
    dates = [m.date for m in ordered]
    by_text: dict[str, list[TgMessage]] = {}
    for post in ordered:
        key = normalise_text(post.text)
        if key:
            by_text.setdefault(key, []).append(post)
    taken: set[int] = set()
    matched: dict[int, int] = {}
    for copy in sorted(copies, key=lambda m: (m.date, m.id)):
        key = normalise_text(copy.text)
        same_text = [p for p in by_text.get(key, []) if _within(p, copy, TEXT_MATCH_WINDOW)]
        candidates = [p for p in same_text if p.id not in taken]
        if not candidates:
            low = bisect.bisect_left(dates, copy.date - TIME_MATCH_WINDOW)
            high = bisect.bisect_right(dates, copy.date + CLOCK_SKEW)
            candidates = [p for p in ordered[low:high] if p.id not in taken]
        if candidates:
            best = min(candidates, key=lambda p: (abs(copy.date - p.date), p.id))
            taken.add(best.id)
            matched[copy.id] = best.id
    return matched


def _within(post: TgMessage, copy: TgMessage, window: timedelta) -> bool:
    return -CLOCK_SKEW <= copy.date - post.date <= window
