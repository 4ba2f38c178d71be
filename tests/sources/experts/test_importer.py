"""import_channel end to end on small exports written to disk, into a real SQLite store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from crowdsift.core.errors import ArchiveError
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.importer import (
    TelegramExportError,
    import_channel,
    import_digest,
    slugify,
)

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
CHANNEL_ID = 1500000001
PEER = f"channel{CHANNEL_ID}"
NAME = "Bench Notes"


def msg(msg_id: int, text: Any, minutes: float = 0, **extra: Any) -> dict[str, Any]:
    moment = T0 + timedelta(minutes=minutes)
    return {
        "id": msg_id,
        "type": "message",
        "date": moment.replace(tzinfo=None).isoformat(),
        "date_unixtime": str(int(moment.timestamp())),
        "from": NAME,
        "from_id": PEER,
        "text": text,
        **extra,
    }


def channel_messages() -> list[dict[str, Any]]:
    return [
        {"id": 1, "type": "service", "date": "2026-08-30T10:00:00", "action": "create_channel"},
        msg(2, "Impact driver or drill? An impact driver for lag screws, a drill for holes.", 0),
        msg(
            3,
            [
                "Concrete needs a ",
                {"type": "bold", "text": "hammer drill"},
                ", see ",
                {
                    "type": "text_link",
                    "text": "the tools post",
                    "href": "https://t.me/bench_notes/2",
                },
                " and https://t.me/bench_notes/99.",
            ],
            60,
            author="Kim",
        ),
        msg(4, "Follow-up on tools.", 120, reply_to_message_id=2),
        msg(5, "", 180, photo="(File not included.)"),
        msg(
            6,
            "Impact driver or drill? An impact driver for lag screws, a drill for holes.",
            240,
            forwarded_from=NAME,
        ),
        msg(7, 12345, 300),  # malformed: text is a number
        {"id": 8, "type": "message", "text": "no date at all"},
    ]


def group_messages() -> list[dict[str, Any]]:
    def copy(msg_id: int, text: Any, minutes: float) -> dict[str, Any]:
        return msg(msg_id, text, minutes + 0.05, forwarded_from=NAME, saved_from=NAME)

    def reply(
        msg_id: int, to: int, minutes: float, who: str, who_id: str, text: str
    ) -> dict[str, Any]:
        return msg(
            msg_id, text, minutes, reply_to_message_id=to, **{"from": who, "from_id": who_id}
        )

    channel = channel_messages()
    return [
        {"id": 1, "type": "service", "date": "2026-08-30T10:00:00", "action": "migrate_from_group"},
        copy(10, channel[1]["text"], 0),
        reply(11, 10, 5, "Reader", "user1", "Which brand?"),
        reply(12, 11, 6, NAME, PEER, "Whatever battery platform you own."),
        copy(13, channel[2]["text"], 60),
        reply(14, 13, 65, "Kim", "user77", "Also: vacuum the hole before the anchor."),
        reply(15, 14, 66, "Reader", "user1", "Thanks!"),
        reply(16, 13, 67, "Sticker fan", "user2", ""),
        copy(17, "", 180),
        reply(18, 17, 185, "Reader", "user1", "Nice photo"),  # on a media-only post
        reply(19, 404, 190, "Reader", "user1", "reply to a deleted message"),
        msg(20, "Hello group", 200, **{"from": "Newbie", "from_id": "user3"}),
        reply(21, 12, 210, None, "user4", "From a deleted account"),  # type: ignore[arg-type]
    ]


def write(path: Path, messages: list[dict[str, Any]], kind: str, chat_id: int, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"name": name, "type": kind, "id": chat_id, "messages": messages}
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


@pytest.fixture
def exports(tmp_path: Path) -> tuple[Path, Path]:
    result = write(tmp_path / "chan" / "result.json", channel_messages(), "public_channel",
                   CHANNEL_ID, NAME)  # fmt: skip
    group = write(tmp_path / "group" / "result.json", group_messages(), "public_supergroup",
                  1500000002, f"{NAME} chat")  # fmt: skip
    return result, group


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlExpertStore]:
    opened = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.sqlite'}")
    yield opened
    opened.close()


def row_counts(store: SqlExpertStore) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            table: conn.execute(sqlalchemy.text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("experts", "expert_posts", "expert_links", "expert_comments")
        }


def test_channel_and_discussion_import(store: SqlExpertStore, exports: tuple[Path, Path]) -> None:
    result, group = exports
    report = import_channel(store, result, discussion=group, expert_user_ids=["user9"])
    assert (report.expert_id, report.channel, report.channel_source) == (
        "bench_notes",
        "bench_notes",
        "self-links",
    )
    assert (report.posts, report.empty_posts, report.skipped_service) == (4, 1, 1)
    assert [(bad.where, bad.reason) for bad in report.malformed] == [
        (f"{result} messages[6] (id 7)", "'text' must be a string or a list, not int"),
        (f"{result} messages[7] (id 8)", "missing 'date' and 'date_unixtime'"),
    ]
    assert report.links_by_kind == {"forward": 1, "mention": 1, "reply": 1}
    assert report.dangling_links == 1  # the mention of post 99, not in the export
    assert report.language == "en"
    assert report.first_post_at == T0 and report.last_post_at == T0 + timedelta(minutes=240)

    posts = {p.post_id: p for p in store.posts("bench_notes")}
    assert sorted(posts) == [2, 3, 4, 6]
    assert posts[3].text == (
        "Concrete needs a hammer drill, see the tools post and https://t.me/bench_notes/99."
    )
    assert posts[3].url == "https://t.me/bench_notes/3"
    assert posts[6].forwarded_from == NAME
    edges = {(k.source_id, k.target_id, k.kind) for k in store.links("bench_notes", [2])}
    assert edges == {(3, 2, "mention"), (4, 2, "reply"), (6, 2, "forward")}

    comments = {c.comment_id: c for c in store.all_comments("bench_notes")}
    assert sorted(comments) == [11, 12, 14, 15, 21]
    assert [(c.post_id, c.reply_to_comment_id) for c in comments.values()] == [
        (2, None), (2, 11), (3, None), (3, 14), (2, 12),
    ]  # fmt: skip
    assert comments[12].author_is_expert  # the channel answering as itself
    assert comments[14].author_is_expert  # display name = the post signature "Kim"
    assert not comments[11].author_is_expert and not comments[15].author_is_expert
    assert comments[21].author == "Deleted Account"
    assert (report.comments, report.expert_comments) == (5, 2)
    d = report.discussion
    assert d is not None
    assert (d.copies, d.matched_copies, d.threads, d.orphan_comments) == (3, 3, 2, 1)
    assert (d.unthreaded_messages, d.empty_comments, d.comments_on_skipped_posts) == (1, 1, 1)
    assert d.skipped_service == 1


def test_reimport_is_idempotent(store: SqlExpertStore, exports: tuple[Path, Path]) -> None:
    result, group = exports
    first = import_channel(store, result, discussion=group)
    counts = row_counts(store)
    second = import_channel(store, result, discussion=group)
    assert (
        row_counts(store)
        == counts
        == {
            "experts": 1,
            "expert_posts": 4,
            "expert_links": 3,
            "expert_comments": 5,
        }
    )
    assert first.model_dump(exclude={"elapsed_seconds"}) == second.model_dump(
        exclude={"elapsed_seconds"}
    )
    assert store.source_digest("bench_notes") == import_digest(
        [result.read_bytes(), group.read_bytes()]
    )


def test_options_override_the_inferred_names(
    store: SqlExpertStore, exports: tuple[Path, Path]
) -> None:
    result, _group = exports
    report = import_channel(store, result.parent, expert_id="kim-tools", channel="@KimTools")
    assert (report.expert_id, report.channel, report.channel_source) == (
        "kim-tools",
        "KimTools",
        "option",
    )
    assert store.posts("kim-tools")[0].url.startswith("https://t.me/KimTools/")
    assert report.links_by_kind == {"forward": 1, "reply": 1}  # bench_notes links are not ours
    assert store.get_expert("bench_notes") is None


def test_russian_channel_language(store: SqlExpertStore, tmp_path: Path) -> None:
    texts = ["Переезд с Airflow на Dagster занял три месяца.", "Бэкфиллы теперь быстрые."]
    messages = [msg(i + 2, text, i) for i, text in enumerate(texts)]
    result = write(tmp_path / "ru.json", messages, "public_channel", 7, "Данные")
    report = import_channel(store, result, channel="dannye_x")
    assert report.language == "ru" and report.expert_id == "dannye_x"
    assert store.get_expert("dannye_x") is not None


def test_naive_dates_are_counted(store: SqlExpertStore, tmp_path: Path) -> None:
    message = msg(2, "old export without unixtime")
    del message["date_unixtime"]
    result = write(tmp_path / "old.json", [message], "public_channel", 7, "Old")
    report = import_channel(store, result, channel="old_channel")
    assert report.naive_dates == 1
    assert store.posts("old_channel")[0].date == T0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        (b"<html>export</html>", "is not JSON"),
        (b"\xff\xfe garbage", "is not JSON"),
        (b'{"about": "x", "chats": {"list": []}}', "whole-account export"),
        (b"[]", "not a Telegram Desktop chat export"),
    ],
)
def test_bad_files_are_clear_archive_errors(
    store: SqlExpertStore, tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "result.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ArchiveError, match=message):
        import_channel(store, path)


def test_wrong_kinds_of_chat_are_refused(store: SqlExpertStore, exports: tuple[Path, Path]) -> None:
    result, group = exports
    with pytest.raises(TelegramExportError, match="public_supergroup export, not a channel"):
        import_channel(store, group)
    with pytest.raises(TelegramExportError, match="not a discussion group"):
        import_channel(store, result, discussion=result)
    assert row_counts(store)["experts"] == 0


@pytest.mark.parametrize(
    ("chat_id", "path"), [(1987654321, "c/1987654321"), (-1001987654321, "c/1987654321")]
)
def test_a_channel_without_a_username_is_linked_by_its_id(
    store: SqlExpertStore, tmp_path: Path, chat_id: int, path: str
) -> None:
    messages = [
        msg(2, "Sharpen chisels at 25 degrees."),
        msg(
            3,
            ["See ", {"type": "text_link", "text": "this", "href": "https://t.me/c/1987654321/2"}],
            5,
        ),
    ]
    result = write(tmp_path / "r.json", messages, "private_channel", chat_id, "Secret Shop")

    report = import_channel(store, result)

    assert (report.channel, report.channel_source, report.expert_id) == (
        path,
        "channel-id",
        "c_1987654321",
    )
    assert report.note is not None and "--channel USERNAME" in report.note
    assert "members" in report.note
    posts = store.posts("c_1987654321")
    assert sorted(p.url for p in posts) == [f"https://t.me/c/1987654321/{i}" for i in (2, 3)]
    # the private link to its own post is an edge when the export has the bare id (Telegram
    # Desktop's form); the API's -100 form is only unwrapped for the URLs
    assert report.links == (1 if chat_id > 0 else 0)


def test_a_username_given_or_inferred_needs_no_note(
    store: SqlExpertStore, exports: tuple[Path, Path]
) -> None:
    assert import_channel(store, exports[0]).note is None


def test_without_username_or_channel_id_it_asks_for_channel(
    store: SqlExpertStore, tmp_path: Path
) -> None:
    document = {"name": "Secret", "type": "private_channel", "messages": [msg(2, "no links")]}
    result = tmp_path / "r.json"
    result.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(TelegramExportError, match="Pass --channel USERNAME"):
        import_channel(store, result)
    assert row_counts(store)["experts"] == 0


@pytest.mark.parametrize(
    ("option", "value"), [("expert_id", "Not Valid!"), ("channel", "no"), ("channel", "1abc_def")]
)
def test_invalid_options_are_refused(
    store: SqlExpertStore, exports: tuple[Path, Path], option: str, value: str
) -> None:
    with pytest.raises(TelegramExportError, match=value.replace("!", ".")):
        import_channel(store, exports[0], **{option: value})


def test_slugify() -> None:
    assert slugify("Homelab_Field_Notes") == "homelab_field_notes"
    assert slugify("  Desk Gear: Weekly! ") == "desk_gear_weekly"
    assert slugify("Данные") == ""
    assert len(slugify("a" * 100)) == 64
