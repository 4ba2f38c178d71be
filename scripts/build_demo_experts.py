#!/usr/bin/env python3
"""Build crowdsift's bundled expert archives: SAMPLE Telegram exports written by the project.

Nothing here is a real channel or a real person. The channels in ``scripts/demo_experts/``
were written for the demo; this script renders each one as Telegram Desktop would export it:
``<channel>/result.json`` (the channel) and ``<channel>/discussion.json`` (its linked
discussion group, where every post arrives as an automatic forward and people comment under
it). ``manifest.json`` lists the channels and the import options each needs.

The output is deterministic (keyed PRNG, fixed dates, stable key order), so two runs give
byte-identical files.

    python scripts/build_demo_experts.py               # write src/crowdsift/demo/experts/
    python scripts/build_demo_experts.py --check       # exit 1 if the committed files are stale
    python scripts/build_demo_experts.py --out-dir DIR # write somewhere else
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from demo_content.rng import Deck, Rng
from demo_experts import CHANNELS
from demo_experts.model import Channel, Post, Reply

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "src" / "crowdsift" / "demo" / "experts"
NOT_INCLUDED = "(File not included. Change data exporting settings to download.)"

_MARKUP = re.compile(
    r"\*\*(?P<bold>.+?)\*\*"
    r"|__(?P<italic>.+?)__"
    r"|`(?P<code>[^`]+)`"
    r"|\[(?P<label>[^\]]+)\]\((?P<target>[^)\s]+)\)"
    r"|\{post:(?P<mention>[a-z0-9_]+)\}"
    r"|(?P<url>https?://[^\s)]*[^\s).,;:!?])"
    r"|(?<![\w&/])#(?P<tag>\w+)"
)


def render(markup: str, channel: Channel, ids: dict[str, int]) -> list[str | dict[str, str]]:
    """Markup → Telegram text parts: plain strings and entity objects, in order."""
    parts: list[str | dict[str, str]] = []
    position = 0
    for match in _MARKUP.finditer(markup):
        if match.start() > position:
            parts.append(markup[position : match.start()])
        parts.append(_entity(match, channel, ids))
        position = match.end()
    if position < len(markup):
        parts.append(markup[position:])
    return parts


def _entity(match: re.Match[str], channel: Channel, ids: dict[str, int]) -> dict[str, str]:
    def post_url(key: str) -> str:
        if key not in ids:
            raise KeyError(f"{channel.username}: markup names unknown or later post {key!r}")
        return f"https://t.me/{channel.username}/{ids[key]}"

    group = match.lastgroup
    if group in ("label", "target"):
        target = match["target"]
        href = post_url(target.removeprefix("post:")) if target.startswith("post:") else target
        return {"type": "text_link", "text": match["label"], "href": href}
    if group == "mention":
        return {"type": "link", "text": post_url(match["mention"])}
    if group == "url":
        return {"type": "link", "text": match["url"]}
    if group == "tag":
        return {"type": "hashtag", "text": f"#{match['tag']}"}
    kind = {"bold": "bold", "italic": "italic", "code": "code"}[str(group)]
    return {"type": kind, "text": match[str(group)]}


def text_fields(parts: list[str | dict[str, str]]) -> dict[str, Any]:
    """``text`` (a string when plain, else the mixed list) and ``text_entities``, as exported."""
    entities = [{"type": "plain", "text": p} if isinstance(p, str) else p for p in parts]
    if not parts:
        return {"text": "", "text_entities": []}
    if len(parts) == 1 and isinstance(parts[0], str):
        return {"text": parts[0], "text_entities": entities}
    return {"text": parts, "text_entities": entities}


def stamp(moment: datetime, tz_hours: int, prefix: str = "date") -> dict[str, str]:
    """Telegram's pair: local time without offset, and epoch seconds as a string."""
    local = moment.astimezone(timezone(timedelta(hours=tz_hours))).replace(tzinfo=None)
    return {prefix: local.isoformat(), f"{prefix}_unixtime": str(int(moment.timestamp()))}


def member_id(name: str) -> str:
    return f"user{Rng.keyed('member', name).between(100_000_000, 6_999_999_999)}"


@dataclass
class Built:
    """A channel's messages plus what the discussion group needs to know about each post."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    posts: list[tuple[Post, int, datetime, dict[str, Any]]] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)


def post_dates(channel: Channel, rng: Rng) -> list[datetime]:
    """Evenly spread over start..end, at a plausible local hour; strictly increasing."""
    count = len(channel.posts)
    span = (channel.end - channel.start) / max(count - 1, 1)
    local_zone = timezone(timedelta(hours=channel.tz_hours))
    dates: list[datetime] = []
    for index in range(count):
        day = (channel.start + span * index).astimezone(local_zone)
        moment = day.replace(
            hour=rng.between(7, 21), minute=rng.below(60), second=rng.below(60), microsecond=0
        ).astimezone(UTC)
        if dates and moment <= dates[-1]:
            moment = dates[-1] + timedelta(hours=3)
        dates.append(moment)
    return dates


def build_channel(channel: Channel) -> Built:
    rng = Rng.keyed("channel", channel.username)
    built = Built()
    peer = f"channel{channel.chat_id}"
    created = channel.start - timedelta(days=3)
    built.messages.append(
        {
            "id": 1,
            "type": "service",
            **stamp(created, channel.tz_hours),
            "actor": channel.name,
            "actor_id": peer,
            "action": "create_channel",
            "title": channel.name,
            "text": "",
            "text_entities": [],
        }
    )
    ids = built.ids
    texts: dict[str, list[str | dict[str, str]]] = {}
    next_id = 2
    for post, moment in zip(channel.posts, post_dates(channel, rng), strict=True):
        next_id += rng.below(3) if rng.chance(0.25) else 0  # deleted posts leave gaps
        if post.forward_of is not None:
            parts = texts[post.forward_of]
        else:
            parts = render(post.text, channel, ids)
        ids[post.key] = next_id
        texts[post.key] = parts
        message: dict[str, Any] = {
            "id": next_id,
            "type": "message",
            **stamp(moment, channel.tz_hours),
        }
        if post.edited:
            message.update(
                stamp(moment + timedelta(hours=rng.between(1, 30)), channel.tz_hours, "edited")
            )
        message.update({"from": channel.name, "from_id": peer})
        if channel.signature:
            message["author"] = channel.signature
        if post.forward_of is not None:
            message["forwarded_from"] = channel.name
        elif post.forwarded_from is not None:
            message["forwarded_from"] = post.forwarded_from
        if post.reply_to is not None:
            message["reply_to_message_id"] = ids[post.reply_to]
        if post.photo:
            message.update({"photo": NOT_INCLUDED, "width": 1280, "height": 960})
        message.update(text_fields(parts))
        built.messages.append(message)
        built.posts.append((post, next_id, moment, message))
        next_id += 1
        if post.key == channel.posts[len(channel.posts) // 2].key:
            built.messages.append(
                {
                    "id": next_id,
                    "type": "service",
                    **stamp(moment + timedelta(minutes=2), channel.tz_hours),
                    "actor": channel.name,
                    "actor_id": peer,
                    "action": "pin_message",
                    "message_id": ids[post.key],
                    "text": "",
                    "text_entities": [],
                }
            )
            next_id += 1
    return built


@dataclass
class Event:
    """A discussion-group message before ids are assigned (replies point at other events)."""

    moment: datetime
    body: dict[str, Any]
    reply_to: Event | None = None
    id: int = 0


def build_discussion(channel: Channel, built: Built) -> list[dict[str, Any]]:
    rng = Rng.keyed("discussion", channel.username)
    members = Deck(rng, channel.members)
    filler = Deck(rng, channel.filler)
    peer = f"channel{channel.chat_id}"
    events: list[Event] = []
    opened = channel.start - timedelta(days=2)
    for offset, action in ((0, "migrate_from_group"), (90, "join_group_by_link")):
        actor = channel.members[0] if action == "join_group_by_link" else channel.name
        actor_id = member_id(actor) if action == "join_group_by_link" else peer
        body: dict[str, Any] = {"type": "service", "actor": actor, "actor_id": actor_id}
        body["action"] = action
        if action == "migrate_from_group":
            body["title"] = channel.group_name
        body.update(text_fields([]))
        events.append(Event(opened + timedelta(minutes=offset), body))
    for post, _post_id, moment, message in built.posts:
        copy_body = {"type": "message", "from": channel.name, "from_id": peer,
                     "forwarded_from": channel.name, "saved_from": channel.name}  # fmt: skip
        for key in ("photo", "width", "height", "text", "text_entities"):
            if key in message:
                copy_body[key] = message[key]
        copy = Event(moment + timedelta(seconds=rng.between(1, 4)), copy_body)
        events.append(copy)
        thread = list(post.thread)
        extra = post.filler if post.filler is not None else rng.below(4)
        thread.extend(Reply(filler.draw()) for _ in range(extra))
        events.extend(_thread_events(channel, built.ids, rng, members, copy, thread))
    for index, text in enumerate(channel.chatter):
        _post, _id, moment, _message = built.posts[(index * 7 + 3) % len(built.posts)]
        who = members.draw()
        body = _comment_body(channel, built.ids, who, text)
        events.append(Event(moment + timedelta(hours=rng.between(30, 70)), body))
    events.sort(key=lambda e: e.moment)
    next_id = 2
    for event in events:
        next_id += 1 if rng.chance(0.05) else 0  # deleted messages leave gaps
        event.id = next_id
        next_id += 1
    messages = []
    for event in events:
        body = {
            "id": event.id,
            "type": event.body.pop("type"),
            **stamp(event.moment, channel.tz_hours),
        }
        for key, value in event.body.items():
            if key == "text" and event.reply_to is not None:
                body["reply_to_message_id"] = event.reply_to.id
            body[key] = value
        messages.append(body)
    return messages


def _thread_events(
    channel: Channel,
    ids: dict[str, int],
    rng: Rng,
    members: Deck,
    copy: Event,
    thread: list[Reply],
) -> list[Event]:
    events: list[Event] = []
    moment = copy.moment
    for reply in thread:
        moment += timedelta(minutes=rng.between(3, 240))
        who = reply.who or members.draw()
        parent = copy if reply.to is None else events[reply.to]
        body = _comment_body(channel, ids, who, reply.text, empty=reply.empty)
        events.append(Event(moment, body, reply_to=parent))
    return events


def _comment_body(
    channel: Channel, ids: dict[str, int], who: str, text: str, *, empty: bool = False
) -> dict[str, Any]:
    if who == "expert":
        if channel.expert_as == "channel":
            name, from_id = channel.name, f"channel{channel.chat_id}"
        else:
            assert channel.author_user is not None
            name, from_id = channel.author_user
    elif who == "(deleted)":
        name, from_id = None, member_id(who)
    else:
        name, from_id = who, member_id(who)
    body: dict[str, Any] = {"type": "message", "from": name, "from_id": from_id}
    if empty:
        body.update({"file": NOT_INCLUDED, "media_type": "sticker", "sticker_emoji": "👍"})
        body.update(text_fields([]))
    else:
        body.update(text_fields(render(text, channel, ids)))
    return body


def export(name: str, kind: str, chat_id: int, messages: list[dict[str, Any]]) -> bytes:
    """The export as Telegram Desktop writes it: UTF-8, one-space indent."""
    document = {"name": name, "type": kind, "id": chat_id, "messages": messages}
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode()


def build_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    manifest = []
    for channel in CHANNELS:
        built = build_channel(channel)
        group = build_discussion(channel, built)
        files[f"{channel.username}/result.json"] = export(
            channel.name, "public_channel", channel.chat_id, built.messages
        )
        files[f"{channel.username}/discussion.json"] = export(
            channel.group_name, "public_supergroup", channel.group_id, group
        )
        # The importer spots the author by signature when the names agree; else it needs the id.
        author = channel.author_user
        author_ids = [author[1]] if author and author[0] != channel.signature else []
        manifest.append(
            {
                "channel": channel.username,
                "result": f"{channel.username}/result.json",
                "discussion": f"{channel.username}/discussion.json",
                "author_ids": author_ids,
            }
        )
    files["manifest.json"] = (json.dumps({"experts": manifest}, indent=2) + "\n").encode()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--check", action="store_true", help="compare a fresh build with the files in --out-dir"
    )
    args = parser.parse_args(argv)
    files = build_files()
    if args.check:
        stale = [name for name, data in files.items() if _read(args.out_dir / name) != data]
        for name in stale:
            print(f"stale: {args.out_dir / name} differs from a fresh build", file=sys.stderr)
        if stale:
            print("run: python scripts/build_demo_experts.py", file=sys.stderr)
            return 1
        print(f"ok: {len(files)} files in {args.out_dir} match a fresh build")
        return 0
    for name, data in files.items():
        target = args.out_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        print(f"wrote {target} ({len(data):,} bytes)")
    return 0


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


if __name__ == "__main__":
    sys.exit(main())
