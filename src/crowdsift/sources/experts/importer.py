"""Import a Telegram channel export (and its discussion group) as one expert's archive.

``import_channel`` reads the files, lets ``crowdsift.sources.experts.telegram`` parse them, turns
the messages into ``ExpertPost`` / ``PostLink`` / ``ExpertComment`` records, and writes them in one
transaction. Re-importing the same files changes nothing and reports the same counts; a newer
export of the same channel adds and updates rows and never deletes any.

What is kept: posts with text (media-only posts carry nothing the phases can read; they are
counted), links whose both ends are kept posts, and comments whose thread belongs to a kept
post. Everything else is counted in the report, and bad messages are listed with a reason.

Post links need the channel's t.me username, which exports do not carry: ``--channel`` gives
it, else it is inferred from the channel's links to its own posts. A channel without one (a
private channel, or a public one that never links to itself) is still imported: its links
become ``https://t.me/c/<channel id>/<message id>``, Telegram's link to a message of any
channel by id, which opens for the channel's members; ``report.note`` says so and how to get
public links.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from crowdsift.core.language import UNDETERMINED, detect_language
from crowdsift.core.log import get_logger
from crowdsift.sources.experts.models import (
    EXPERT_ID_RE,
    Expert,
    ExpertComment,
    ExpertPost,
    PostLink,
)
from crowdsift.sources.experts.telegram import (
    CHANNEL_TYPES,
    GROUP_TYPES,
    MalformedMessage,
    TelegramExportError,
    TgChat,
    channel_links,
    infer_username,
    parse_chat,
    thread_discussion,
)

log = get_logger(__name__)

USERNAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{3,31}$")
PRIVATE_LINKS_NOTE = (
    "post links are https://t.me/c/<channel id>/<message id>, which open only for the "
    "channel's members; for public links, give the channel a public username in Telegram and "
    "re-import with --channel USERNAME"
)
IMPORT_FORMAT_VERSION = 2
"""Bump when the importer changes what it stores, so digests (and the demo) notice.
2: commenters stored as salted pseudonyms (``crowdsift.sources.experts.db``)."""
LANGUAGE_SAMPLE = 40
"""Posts (the longest) whose detected languages vote for the expert's language."""

__all__ = [
    "DiscussionReport",
    "ExpertImportReport",
    "ExpertImportTarget",
    "TelegramExportError",
    "import_channel",
    "import_digest",
    "read_export",
    "slugify",
]


class ExpertImportTarget(Protocol):
    """What the importer writes to (``SqlExpertStore``)."""

    def write_import(
        self,
        expert: Expert,
        posts: Sequence[ExpertPost],
        links: Sequence[PostLink],
        comments: Sequence[ExpertComment],
        *,
        digest: str | None = None,
    ) -> None: ...


class DiscussionReport(BaseModel):
    """How the discussion group's messages were placed."""

    messages: int = Field(0, description="ordinary messages in the group export")
    copies: int = Field(0, description="automatic forwards of channel posts found")
    matched_copies: int = Field(0, description="copies mapped back to a channel post")
    unmatched_copies: int = 0
    threads: int = Field(0, description="kept posts with at least one comment")
    orphan_comments: int = Field(0, description="replies whose chain reaches no known post")
    unthreaded_messages: int = Field(0, description="group messages replying to nothing")
    empty_comments: int = Field(0, description="stickers, photos: no text to keep")
    comments_on_skipped_posts: int = 0
    skipped_service: int = 0


class ExpertImportReport(BaseModel):
    """What one import stored, skipped and could not read."""

    expert_id: str
    name: str
    channel: str = Field(description="t.me path of the channel: its username, or c/<channel id>")
    channel_source: Literal["option", "self-links", "channel-id"]
    note: str | None = Field(None, description="what to know about the post links, if anything")
    language: str | None = None
    posts: int = 0
    links: int = 0
    links_by_kind: dict[str, int] = Field(default_factory=dict)
    comments: int = 0
    expert_comments: int = 0
    skipped_service: int = 0
    skipped_unsupported: int = 0
    empty_posts: int = Field(0, description="media-only posts: nothing to read, not stored")
    unresolved_forwards: int = Field(0, description="forwards of own posts, original not found")
    dangling_links: int = Field(0, description="links to posts not in the export or not kept")
    naive_dates: int = Field(0, description="dates without date_unixtime, read as UTC")
    malformed: list[MalformedMessage] = Field(default_factory=list)
    first_post_at: datetime | None = None
    last_post_at: datetime | None = None
    discussion: DiscussionReport | None = None
    elapsed_seconds: float = 0.0


def slugify(name: str) -> str:
    """An expert id from a username or name: lower case, ``[a-z0-9_-]``, at most 64 chars."""
    slug = re.sub(r"[^a-z0-9_-]+", "_", name.lower()).strip("_-")[:64].strip("_-")
    return slug if EXPERT_ID_RE.fullmatch(slug) else ""


def export_file(path: Path) -> Path:
    """The JSON file of an export: ``path`` itself, or ``result.json`` inside a directory."""
    return path / "result.json" if path.is_dir() else path


def read_export(path: Path, *, what: str) -> tuple[Any, bytes]:
    """The parsed JSON of an export file, and its bytes (for the import digest)."""
    path = export_file(path)
    if not path.is_file():
        raise TelegramExportError(
            f"{what} {path} does not exist. Export it with Telegram Desktop (chat menu → Export "
            "chat history → format JSON) and pass the result.json it writes."
        )
    try:
        raw = path.read_bytes()
        return json.loads(raw), raw
    except RecursionError:
        raise TelegramExportError(
            f"{what} {path} is not a Telegram export: its JSON is nested too deeply."
        ) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a number too long
        raise TelegramExportError(
            f"{what} {path} is not JSON ({exc}). Export with format 'Machine-readable JSON', "
            "not HTML, and pass result.json."
        ) from None
    except OSError as exc:
        raise TelegramExportError(f"cannot read {what} {path}: {exc}") from None


def import_digest(contents: Sequence[bytes]) -> str:
    """SHA-256 of the import format version and the files' bytes: tells an unchanged archive."""
    digest = hashlib.sha256(f"expert-import-format={IMPORT_FORMAT_VERSION}".encode())
    for content in contents:
        digest.update(b"\0%d\0" % len(content))
        digest.update(content)
    return digest.hexdigest()


def import_channel(
    store: ExpertImportTarget,
    channel_export: Path,
    *,
    expert_id: str | None = None,
    discussion: Path | None = None,
    channel: str | None = None,
    expert_user_ids: Sequence[str] = (),
) -> ExpertImportReport:
    """Parse ``channel_export`` (and ``discussion``), store the records, report what happened.

    ``channel`` is the t.me username for post URLs (inferred from the channel's links to its
    own posts when omitted); ``expert_user_ids`` are ``from_id`` values (``user123``) of the
    channel's author, whose comments count as the expert's.
    """
    started = time.perf_counter()
    data, raw = read_export(channel_export, what="channel export")
    contents = [raw]
    chat = parse_chat(data, label=str(export_file(channel_export)))
    if chat.type not in CHANNEL_TYPES:
        raise TelegramExportError(
            f"{channel_export} is a {chat.type or 'untyped'} export, not a channel. Pass the "
            "channel's result.json first and its discussion group's with --discussion."
        )
    username, source = _username(chat, channel, channel_export)
    expert_key = _expert_id(expert_id, username)
    report = ExpertImportReport(
        expert_id=expert_key,
        name=chat.name or username,
        channel=username,
        channel_source=source,
        note=PRIVATE_LINKS_NOTE if source == "channel-id" else None,
        skipped_service=chat.service,
        skipped_unsupported=chat.unsupported,
        naive_dates=chat.naive_dates,
        malformed=list(chat.malformed),
    )
    posts = _posts(chat, expert_key, username, report)
    links = _links(chat, expert_key, username, {p.post_id for p in posts}, report)
    comments: list[ExpertComment] = []
    if discussion is not None:
        data, raw = read_export(discussion, what="discussion export")
        contents.append(raw)
        group = parse_chat(data, label=str(export_file(discussion)))
        if group.type not in GROUP_TYPES:
            raise TelegramExportError(
                f"{discussion} is a {group.type or 'untyped'} export, not a discussion group. "
                "Export the channel's linked group (its 'Discuss' chat) and pass that."
            )
        comments = _comments(chat, group, expert_key, posts, expert_user_ids, report)
    report.language = _language(posts)
    expert = Expert(
        expert_id=expert_key, name=report.name, channel=username, language=report.language
    )
    store.write_import(expert, posts, links, comments, digest=import_digest(contents))
    report.elapsed_seconds = round(time.perf_counter() - started, 4)
    log.info("expert_imported", expert_id=expert_key, posts=report.posts, links=report.links,
             comments=report.comments, malformed=len(report.malformed))  # fmt: skip
    return report


def _username(
    chat: TgChat, given: str | None, path: Path
) -> tuple[str, Literal["option", "self-links", "channel-id"]]:
    if given is not None:
        name = given.strip().removeprefix("@").removeprefix("https://t.me/").strip("/")
        if not USERNAME_RE.fullmatch(name):
            raise TelegramExportError(
                f"--channel {given!r} is not a Telegram username (4-32 letters, digits or '_', "
                "starting with a letter), as in https://t.me/USERNAME"
            )
        return name, "option"
    inferred, _votes = infer_username(chat)
    if inferred is not None:
        return inferred, "self-links"
    by_id = channel_path(chat.chat_id)
    if by_id is None:
        raise TelegramExportError(
            f"cannot tell the t.me username of {chat.name or path}: Telegram Desktop exports do "
            "not include it, no post links to another post of the channel, and the export has "
            "no channel 'id' to link by. Pass --channel USERNAME (the name in "
            "https://t.me/USERNAME)."
        )
    return by_id, "channel-id"


def channel_path(chat_id: int | None) -> str | None:
    """``c/<id>``, the t.me path of a channel by id (``https://t.me/c/<id>/<message id>``).

    Exports carry the bare id; an API-style ``-100<id>`` is unwrapped to it.
    """
    if chat_id is None or chat_id == 0:
        return None
    digits = str(abs(chat_id))
    if chat_id < 0 and digits.startswith("100") and len(digits) > 3:
        digits = digits[3:]
    return f"c/{digits}"


def _expert_id(given: str | None, username: str) -> str:
    """``--expert-id``, else the username as a slug (``c_<id>`` for a channel known by id)."""
    if given is not None:
        if not EXPERT_ID_RE.fullmatch(given):
            raise TelegramExportError(
                f"--expert-id {given!r} must be 1-64 lower-case letters, digits, '_' or '-'"
            )
        return given
    return slugify(username)


def _posts(
    chat: TgChat, expert_id: str, username: str, report: ExpertImportReport
) -> list[ExpertPost]:
    posts: dict[int, ExpertPost] = {}
    for message in chat.messages:
        if not message.text.strip():
            report.empty_posts += 1
            continue
        if message.id in posts:
            report.malformed.append(
                MalformedMessage(
                    where=f"message id {message.id}", reason="duplicate id; first kept"
                )
            )
            continue
        try:
            posts[message.id] = ExpertPost(
                expert_id=expert_id,
                post_id=message.id,
                text=message.text,
                date=message.date,
                url=f"https://t.me/{username}/{message.id}",
                views=message.views,
                forwarded_from=message.forwarded_from,
            )
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            report.malformed.append(
                MalformedMessage(where=f"message id {message.id}", reason=reason)
            )
    kept = sorted(posts.values(), key=lambda p: p.post_id)
    report.posts = len(kept)
    report.first_post_at = min((p.date for p in kept), default=None)
    report.last_post_at = max((p.date for p in kept), default=None)
    return kept


def _links(
    chat: TgChat, expert_id: str, username: str, kept: set[int], report: ExpertImportReport
) -> list[PostLink]:
    found = channel_links(chat, username)
    report.unresolved_forwards = found.unresolved_forwards
    links = []
    for source, target, kind in found.edges:
        if source in kept and target in kept:
            links.append(
                PostLink(expert_id=expert_id, source_id=source, target_id=target, kind=kind)
            )
        else:
            report.dangling_links += 1
    report.links = len(links)
    report.links_by_kind = dict(sorted(Counter(link.kind for link in links).items()))
    return links


def _comments(
    chat: TgChat,
    group: TgChat,
    expert_id: str,
    posts: Sequence[ExpertPost],
    expert_user_ids: Sequence[str],
    report: ExpertImportReport,
) -> list[ExpertComment]:
    threads = thread_discussion(chat, group, expert_user_ids=expert_user_ids)
    info = DiscussionReport(
        messages=len(group.messages),
        copies=threads.copies,
        matched_copies=threads.copies - threads.unmatched_copies,
        unmatched_copies=threads.unmatched_copies,
        orphan_comments=threads.orphans,
        unthreaded_messages=threads.unthreaded,
        skipped_service=group.service,
    )
    report.malformed.extend(group.malformed)
    report.naive_dates += group.naive_dates
    kept = {p.post_id for p in posts}
    comments = []
    for item in threads.comments:
        if not item.message.text.strip():
            info.empty_comments += 1
        elif item.post_id not in kept:
            info.comments_on_skipped_posts += 1
        else:
            comments.append(
                ExpertComment(
                    expert_id=expert_id,
                    comment_id=item.message.id,
                    post_id=item.post_id,
                    author=item.message.from_name or "Deleted Account",
                    author_is_expert=item.author_is_expert,
                    text=item.message.text,
                    date=item.message.date,
                    reply_to_comment_id=item.reply_to_comment_id,
                )
            )
    info.threads = len({c.post_id for c in comments})
    report.discussion = info
    report.comments = len(comments)
    report.expert_comments = sum(c.author_is_expert for c in comments)
    return comments


def _language(posts: Sequence[ExpertPost]) -> str | None:
    """The language most of the longest posts are written in (None when undetermined)."""
    sample = sorted(posts, key=lambda p: (-len(p.text), p.post_id))[:LANGUAGE_SAMPLE]
    votes = Counter(detect_language(p.text) for p in sample)
    votes.pop(UNDETERMINED, None)
    return votes.most_common(1)[0][0] if votes else None
