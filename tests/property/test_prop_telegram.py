"""Telegram Desktop exports: any file gives an import or a TelegramExportError; every message is
kept or counted (service, unsupported, malformed); a valid message keeps its fields."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    SCALARS,
    any_text,
    dumps,
    examples,
    hostile_json_text,
    json_values,
    mutated,
    tg_messages,
)

from crowdsift.core.errors import CrowdsiftError
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.importer import import_channel, read_export
from crowdsift.sources.experts.models import Expert, ExpertComment, ExpertPost, PostLink
from crowdsift.sources.experts.telegram import (
    TelegramExportError,
    channel_links,
    infer_username,
    parse_chat,
    parse_message,
    plain_text,
    thread_discussion,
)
from crowdsift.testing.expert_store import MemoryExpertStore

DEMO = Path(__file__).resolve().parents[2] / "src" / "crowdsift" / "demo" / "experts"
CHANNEL = json.loads((DEMO / "desk_gear_weekly" / "result.json").read_text("utf-8"))
GROUP = json.loads((DEMO / "desk_gear_weekly" / "discussion.json").read_text("utf-8"))
MESSAGE_KEYS = sorted({k for m in CHANNEL["messages"] + GROUP["messages"] for k in m})


class Recorded(SqlExpertStore):
    """The real store (SQLite), remembering what the last import handed it."""

    last: tuple[list[ExpertPost], list[PostLink], list[ExpertComment]] = ([], [], [])

    def write_import(
        self,
        expert: Expert,
        posts: Sequence[ExpertPost],
        links: Sequence[PostLink],
        comments: Sequence[ExpertComment],
        *,
        digest: str | None = None,
    ) -> None:
        self.last = (list(posts), list(links), list(comments))
        super().write_import(expert, posts, links, comments, digest=digest)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    target = Recorded(f"sqlite:///{tmp_path_factory.mktemp('experts')}/experts.sqlite")
    try:
        yield target
    finally:
        target.close()


def _chat(messages: list[Any], base: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in base.items() if k != "messages"}, "messages": messages}


def _check_chat(doc: Any) -> None:
    try:
        chat = parse_chat(doc, label="prop")
    except TelegramExportError:
        return
    total = len(doc["messages"])
    assert len(chat.messages) + chat.service + chat.unsupported + len(chat.malformed) == total
    username, _ = infer_username(chat)
    channel_links(chat, username or "somechannel")
    thread_discussion(chat, chat, expert_user_ids=("user1",))


MESSAGES = st.one_of(
    json_values(MESSAGE_KEYS, max_leaves=6),
    st.sampled_from(CHANNEL["messages"][:12] + GROUP["messages"][:20]).flatmap(mutated),
    st.integers(1, 60).flatmap(tg_messages),
)


@examples(150)
@given(messages=st.lists(MESSAGES, max_size=8), header=st.one_of(st.just(CHANNEL), st.just(GROUP)))
def test_any_messages_parse_into_a_chat_that_accounts_for_each(
    messages: list[Any], header: dict[str, Any]
) -> None:
    _check_chat(_chat(messages, header))


@examples(60)
@given(doc=json_values(["name", "type", "id", "messages", "chats"]))
def test_any_json_document_is_a_chat_or_an_export_error(doc: Any) -> None:
    _check_chat(doc)


def _import(store: Recorded, tmp_path: Path, channel: bytes, group: bytes | None) -> bool:
    """Import into the real store; False for a typed error. The report and the rows agree."""
    (tmp_path / "channel.json").write_bytes(channel)
    discussion = None
    if group is not None:
        discussion = tmp_path / "group.json"
        discussion.write_bytes(group)
    try:
        report = import_channel(
            store, tmp_path / "channel.json", discussion=discussion, channel="deskgear"
        )
    except CrowdsiftError as exc:
        assert str(exc) and "\n" not in str(exc)
        return False
    posts, links, comments = store.last
    kept = {post.post_id for post in posts}
    assert report.posts == len(posts) and report.comments == len(comments)
    assert all(link.source_id in kept and link.target_id in kept for link in links)
    assert all(comment.post_id in kept for comment in comments)
    report.model_dump_json()  # the CLI prints it: no lone surrogate may survive
    assert {p.post_id for p in store.posts("deskgear")} >= kept
    return True


@st.composite
def _export_files(draw: st.DrawFn) -> tuple[bytes, bytes | None]:
    """Demo exports cut short and mutated, or hostile text, for the channel and the group."""
    channel = _chat(draw(st.lists(MESSAGES, max_size=6)), CHANNEL)
    group = _chat(draw(st.lists(MESSAGES, max_size=6)), GROUP)
    files = st.one_of(
        st.just(dumps(channel)),
        st.just(dumps(draw(mutated(channel)))),
        hostile_json_text(["name", "type", "id", "messages"]),
        any_text(),
    )
    group_file = draw(st.one_of(st.none(), st.just(dumps(group)), files))
    encode = lambda text: text.encode("utf-8", "surrogatepass")  # noqa: E731
    return encode(draw(files)), None if group_file is None else encode(group_file)


@examples(60)
@given(files=_export_files())
def test_any_export_files_import_or_raise_an_export_error(
    store: Recorded, tmp_path: Path, files: tuple[bytes, bytes | None]
) -> None:
    _import(store, tmp_path, *files)


@examples(40)
@given(
    valid=st.lists(st.integers(1, 10**6), min_size=1, max_size=8, unique=True).flatmap(
        lambda ids: st.tuples(*(tg_messages(i) for i in ids))
    ),
    bad=st.lists(
        st.one_of(
            SCALARS,
            st.builds(lambda i: {"id": i, "type": "message"}, st.integers(1, 10**6)),
            st.just({"id": -3, "type": "message", "date": "2025-01-01T00:00:00"}),
            st.just({"id": 7, "type": "message", "date_unixtime": "1" * 30}),
            st.just({"id": 8, "type": "message", "date": "0001-01-01T00:00:00+05:00"}),
            st.just({"id": 9, "type": "message", "date": "9999-12-31T23:59:59-05:00"}),
            st.just({"id": 10, "type": "message", "date": "2025-01-01", "text": [1]}),
            st.just({"id": 11, "type": "message", "date": "2025-01-01", "views": "many"}),
            st.just({"id": 2**63, "type": "message", "date": "2025-01-01", "text": "big"}),
            st.just({"id": 12, "type": "message", "date": "2025-01-01", "views": 2**64}),
        ),
        max_size=8,
    ),
    others=st.lists(st.sampled_from([{"type": "service"}, {"type": "unsupported"}]), max_size=3),
    order=st.randoms(use_true_random=False),
)
def test_valid_messages_are_kept_and_every_bad_one_is_listed(
    valid: tuple[dict[str, Any], ...], bad: list[Any], others: list[Any], order: Any
) -> None:
    messages = [*valid, *bad, *others]
    order.shuffle(messages)
    chat = parse_chat(_chat(messages, CHANNEL), label="prop")
    assert sorted(m.id for m in chat.messages) == sorted(m["id"] for m in valid)
    assert len(chat.malformed) == len(bad)
    assert chat.service + chat.unsupported == len(others)
    thread_discussion(chat, chat)  # dates at the edges of the calendar must not overflow


@examples(80)
@given(message_id=st.integers(1, 10**12), data=st.data())
def test_a_valid_message_keeps_its_fields(message_id: int, data: st.DataObject) -> None:
    raw = data.draw(tg_messages(message_id))
    message = parse_message(raw)
    assert message.id == message_id
    assert message.text == plain_text(raw["text"])
    assert message.date == datetime.fromtimestamp(int(raw["date_unixtime"]), UTC)
    assert message.from_id == raw["from_id"] and message.from_name == raw["from"]
    assert message.reply_to == raw.get("reply_to_message_id")


def test_the_demo_exports_import_whole(store: Recorded, tmp_path: Path) -> None:
    channel = (DEMO / "desk_gear_weekly" / "result.json").read_bytes()
    group = (DEMO / "desk_gear_weekly" / "discussion.json").read_bytes()
    assert _import(store, tmp_path, channel, group)
    posts, _links, comments = store.last
    assert posts and comments


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000,
        b'{"messages": ' + b"[" * 990 + b"]" * 990 + b"}",
        b'{"id": ' + b"9" * 5000 + b"}",
    ],
    ids=["far-too-deep", "just-under-the-limit", "number-past-digit-limit"],
)
def test_hostile_export_files_are_export_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "result.json"
    path.write_bytes(content)
    try:
        data, _raw = read_export(path, what="channel export")
    except TelegramExportError:
        return
    with pytest.raises(TelegramExportError):
        import_channel(MemoryExpertStore(), path, channel="deskgear")
    assert data is not None


def test_what_no_store_can_hold_is_malformed_or_cleaned(store: Recorded, tmp_path: Path) -> None:
    """Found by these properties: 64-bit overflow and lone surrogates failed the SQL write."""
    channel = _chat(
        [
            {"id": 1, "type": "message", "date_unixtime": "1700000000", "text": "fine post"},
            {"id": 2**63, "type": "message", "date_unixtime": "1700000000", "text": "huge id"},
            {
                "id": 3,
                "type": "message",
                "date_unixtime": "1700000000",
                "text": "v",
                "views": 2**64,
            },
            {"id": 4, "type": "message", "date_unixtime": "1700000000", "text": "bro\udc00ken"},
        ],
        {**CHANNEL, "name": "Desk \ud83d Gear"},
    )
    assert _import(store, tmp_path, dumps(channel).encode(), None)
    posts, _links, _comments = store.last
    assert [(p.post_id, p.text) for p in posts] == [(1, "fine post"), (4, "bro\ufffdken")]
