"""Parsing Telegram Desktop exports: texts, dates, bad messages, links, discussion threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsift.core.errors import ArchiveError
from crowdsift.sources.experts.telegram import (
    TelegramExportError,
    TgChat,
    TgMessage,
    channel_links,
    infer_username,
    match_copies,
    parse_chat,
    parse_message,
    plain_text,
    post_refs,
    thread_discussion,
)

T0 = datetime(2026, 3, 5, 18, 22, 10, tzinfo=UTC)
CHANNEL_ID = 1234567890


def msg(msg_id: int, text: Any = "hello", *, minutes: float = 0, **extra: Any) -> dict[str, Any]:
    moment = T0 + timedelta(minutes=minutes)
    return {
        "id": msg_id,
        "type": "message",
        "date": moment.replace(tzinfo=None).isoformat(),
        "date_unixtime": str(int(moment.timestamp())),
        "from": "Homelab Notes",
        "from_id": f"channel{CHANNEL_ID}",
        "text": text,
        **extra,
    }


def channel(*messages: dict[str, Any], name: str = "Homelab Notes") -> TgChat:
    data = {"name": name, "type": "public_channel", "id": CHANNEL_ID, "messages": list(messages)}
    return parse_chat(data, label="result.json")


def tg(msg_id: int, text: str = "", *, minutes: float = 0, **extra: Any) -> TgMessage:
    return TgMessage(id=msg_id, date=T0 + timedelta(minutes=minutes), text=text, **extra)


# --- text --------------------------------------------------------------------------------------
def test_plain_text_joins_strings_and_entity_texts_in_order() -> None:
    text = [
        "Read ",
        {"type": "text_link", "text": "my Proxmox notes", "href": "https://t.me/homelab/3"},
        " and ",
        {"type": "bold", "text": "back up first"},
        ": ",
        {"type": "link", "text": "https://t.me/homelab/12"},
    ]
    assert plain_text(text) == ("Read my Proxmox notes and back up first: https://t.me/homelab/12")
    assert plain_text("just a string") == "just a string"
    assert plain_text([]) == ""


@pytest.mark.parametrize("bad", [42, None, {"text": "x"}, ["ok", 7], [{"text": 3}]])
def test_plain_text_rejects_what_is_not_a_telegram_text(bad: Any) -> None:
    with pytest.raises(ValueError):
        plain_text(bad)


@given(st.lists(st.one_of(st.text(), st.builds(lambda t: {"type": "bold", "text": t}, st.text()))))
def test_plain_text_is_the_concatenation_of_the_parts(parts: list[Any]) -> None:
    expected = "".join(p if isinstance(p, str) else p["text"] for p in parts)
    assert plain_text(parts) == expected


def test_text_entities_are_used_when_text_is_absent() -> None:
    raw = msg(5)
    del raw["text"]
    raw["text_entities"] = [
        {"type": "plain", "text": "from "},
        {"type": "bold", "text": "entities"},
    ]
    assert parse_message(raw).text == "from entities"


# --- dates and fields --------------------------------------------------------------------------
def test_date_unixtime_wins_over_the_local_date() -> None:
    raw = msg(1)
    raw["date"] = "1999-01-01T00:00:00"  # the exporting machine's local time: ignored
    parsed = parse_message(raw)
    assert parsed.date == T0 and not parsed.naive_date


def test_local_date_without_unixtime_is_read_as_utc_and_flagged() -> None:
    raw = msg(1)
    del raw["date_unixtime"]
    raw["date"] = "2024-03-05T18:22:10"
    parsed = parse_message(raw)
    assert parsed.date == datetime(2024, 3, 5, 18, 22, 10, tzinfo=UTC)
    assert parsed.naive_date


def test_old_numeric_from_id_becomes_a_user_peer() -> None:
    assert parse_message(msg(1, from_id=777)).from_id == "user777"


def test_optional_fields_are_read() -> None:
    raw = msg(9, reply_to_message_id=3, forwarded_from="Other", author="Mara", views=120)
    parsed = parse_message(raw)
    assert (parsed.reply_to, parsed.forwarded_from, parsed.signature, parsed.views) == (
        3,
        "Other",
        "Mara",
        120,
    )


def test_bad_messages_are_counted_with_where_and_why_and_never_abort() -> None:
    no_date = msg(4)
    del no_date["date"], no_date["date_unixtime"]
    chat = channel(
        {"id": 1, "type": "service", "action": "create_channel", "date": "2026-01-01T00:00:00"},
        msg(2, "fine"),
        {"type": "message", "date": "2026-01-01T00:00:00", "text": "no id"},
        msg(3, 42),
        no_date,
        msg(5, "bad reply", reply_to_message_id="3"),
        "not an object",
        {"id": 6, "type": "unsupported"},
        msg(7, "bad date", date="yesterday", date_unixtime=None),
        msg(8, "also fine"),
        {"id": 9, "type": 5},
    )
    assert [m.id for m in chat.messages] == [2, 8]
    assert (chat.service, chat.unsupported) == (1, 1)
    reasons = {bad.where: bad.reason for bad in chat.malformed}
    assert reasons == {
        "result.json messages[2]": "missing or invalid 'id' (expected a positive integer)",
        "result.json messages[3] (id 3)": "'text' must be a string or a list, not int",
        "result.json messages[4] (id 4)": "missing 'date' and 'date_unixtime'",
        "result.json messages[5] (id 5)": "'reply_to_message_id' must be int, not str",
        "result.json messages[6]": "not a JSON object",
        "result.json messages[8] (id 7)": "'date' 'yesterday' is not an ISO date",
        "result.json messages[10] (id 9)": "'type' is not a string",
    }


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        ([1, 2], ""),
        ({"name": "x"}, ""),
        ({"chats": {"list": []}, "about": "..."}, "whole-account export"),
    ],
)
def test_not_an_export_is_a_clear_archive_error(data: Any, hint: str) -> None:
    with pytest.raises(TelegramExportError, match="not a Telegram Desktop chat export") as info:
        parse_chat(data, label="x.json")
    assert hint in str(info.value)
    assert isinstance(info.value, ArchiveError)


# --- links ---------------------------------------------------------------------------------
def test_post_refs_find_own_posts_in_text_and_hidden_hrefs_only() -> None:
    message = tg(
        20,
        "see https://t.me/Homelab_Notes/3, t.me/s/homelab_notes/4?single, "
        "https://t.me/other_channel/5, t.me/c/1234567890/6 and t.me/homelab_notes/20",
        hrefs=("https://t.me/homelab_notes/7", "https://example.com/8"),
    )
    assert post_refs(message, "homelab_notes", CHANNEL_ID) == [3, 4, 6, 7]
    assert post_refs(message, "homelab_notes", None) == [3, 4, 7]


def test_channel_links_cover_replies_mentions_and_forwards_of_own_posts() -> None:
    text = ["Follow-up to ", {"type": "text_link", "text": "this", "href": "https://t.me/hn_x/2"}]
    chat = channel(
        msg(2, "Original post about ZFS snapshots"),
        msg(3, "Reply post", reply_to_message_id=2),
        msg(4, text),
        msg(5, "Original post about  ZFS snapshots", forwarded_from="Homelab Notes"),
        msg(6, "Someone else's post", forwarded_from="Other Channel"),
        msg(7, "Forward of a post older than the export", forwarded_from="Homelab Notes"),
        msg(8, "Reply into another chat", reply_to_message_id=2, reply_to_peer_id="channel99"),
        msg(9, "twice: t.me/hn_x/3 and t.me/hn_x/3", reply_to_message_id=3),
    )
    found = channel_links(chat, "hn_x")
    assert found.edges == [
        (3, 2, "reply"),
        (4, 2, "mention"),
        (5, 2, "forward"),
        (9, 3, "reply"),
        (9, 3, "mention"),
    ]
    assert found.unresolved_forwards == 1


def test_infer_username_takes_the_name_of_links_to_existing_posts() -> None:
    chat = channel(
        msg(2, "a"),
        msg(3, "see t.me/hn_x/2"),
        msg(4, [{"type": "text_link", "text": "x", "href": "https://t.me/HN_X/3"}]),
        msg(5, "elsewhere t.me/other_chan/9999 and t.me/other_chan/2"),
    )
    assert infer_username(chat) == ("hn_x", 2)
    assert infer_username(channel(msg(2, "no links"))) == (None, 0)
    tie = channel(msg(2, "a"), msg(3, "t.me/aaaa_1/2 t.me/bbbb_2/2"))
    assert infer_username(tie) == (None, 0)


# --- discussion groups -----------------------------------------------------------------------
def group(*messages: dict[str, Any]) -> TgChat:
    data = {"name": "HN chat", "type": "public_supergroup", "id": 555, "messages": list(messages)}
    return parse_chat(data, label="group.json")


def copy(msg_id: int, text: Any, minutes: float) -> dict[str, Any]:
    return msg(msg_id, text, minutes=minutes, forwarded_from="Homelab Notes")


def comment(msg_id: int, reply_to: int | None, minutes: float, **extra: Any) -> dict[str, Any]:
    extra.setdefault("from", "Reader")
    extra.setdefault("from_id", "user42")
    if reply_to is not None:
        extra["reply_to_message_id"] = reply_to
    return msg(msg_id, f"comment {msg_id}", minutes=minutes, **extra)


def test_comment_chains_are_mapped_back_to_the_channel_post() -> None:
    chan = channel(
        msg(10, "Post A", minutes=0, author="Mara Lind"),
        msg(11, "Post B", minutes=60),
        msg(12, "", minutes=120),  # media only: matched by time
    )
    grp = group(
        copy(100, "Post A", 0.1),
        comment(101, 100, 5),
        comment(102, 101, 6, **{"from": "Homelab Notes", "from_id": f"channel{CHANNEL_ID}"}),
        copy(103, "Post B", 60.05),
        comment(104, 103, 61, **{"from": "Mara Lind", "from_id": "user7"}),
        comment(105, 102, 62, **{"from": "Writer", "from_id": "user9"}),
        comment(106, None, 63),  # chat outside any thread
        comment(107, 999, 64),  # replies to a deleted message
        copy(108, "", 120.02),
        comment(109, 108, 121),
        {"id": 110, "type": "service", "date": "2026-03-05T20:00:00", "action": "pin_message"},
    )
    threads = thread_discussion(chan, grp, expert_user_ids=["user9"])
    placed = {(c.message.id, c.post_id, c.reply_to_comment_id, c.author_is_expert)
              for c in threads.comments}  # fmt: skip
    assert placed == {
        (101, 10, None, False),
        (102, 10, 101, True),  # the channel answering as itself
        (104, 11, None, True),  # display name = a post signature
        (105, 10, 102, True),  # a named author id
        (109, 12, None, False),
    }
    assert (threads.copies, threads.unmatched_copies) == (3, 0)
    assert (threads.orphans, threads.unthreaded) == (1, 1)


def test_copies_match_by_text_then_by_time_one_post_each() -> None:
    posts = [
        tg(1, "Same text", minutes=0),
        tg(2, "Same text", minutes=30),
        tg(3, "Edited later", minutes=60),
        tg(4, "Far away", minutes=600),
    ]
    copies = [
        tg(100, "Same text", minutes=0.2),
        tg(101, "Same text", minutes=30.1),
        tg(102, "Edited later (v2)", minutes=61),  # no text match: nearest within 10 min
        tg(103, "Unknown post", minutes=300),  # nothing near: unmatched
        tg(104, "Same text", minutes=31),  # both same-text posts taken, and no post is near
    ]
    assert match_copies(posts, copies) == {100: 1, 101: 2, 102: 3}


def test_a_user_forwarding_a_channel_post_into_the_group_is_not_a_copy() -> None:
    chan = channel(msg(10, "Post A"))
    grp = group(
        msg(200, "Post A", minutes=0.5, forwarded_from="Homelab Notes", from_id="user5"),
        comment(201, 200, 2),
    )
    threads = thread_discussion(chan, grp)
    assert threads.copies == 0 and threads.comments == [] and threads.orphans == 1


def test_reply_cycles_end_as_orphans() -> None:
    chan = channel(msg(10, "Post"))
    grp = group(comment(300, 301, 1), comment(301, 300, 2))
    threads = thread_discussion(chan, grp)
    assert threads.orphans == 2 and threads.comments == []


def test_channel_messages_without_forward_header_are_copy_candidates() -> None:
    """A copy without ``forwarded_from`` still matches; the channel chatting on top does not."""
    chan = channel(msg(10, "Post A"))
    grp = group(
        msg(400, "Post A", minutes=0.1),  # sent by the channel, no forward header
        comment(401, 400, 3),
        msg(402, "Welcome to the chat, read the rules", minutes=900),  # the channel, top level
    )
    threads = thread_discussion(chan, grp)
    assert [(c.message.id, c.post_id) for c in threads.comments] == [(401, 10)]
    assert (threads.copies, threads.unmatched_copies, threads.unthreaded) == (2, 1, 0)
