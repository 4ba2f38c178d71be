"""Pure parsing: dump lines of several eras, saved API JSON, normalisation of raw dicts."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsift.core.errors import DumpFormatError
from crowdsift.sources.archive.api_json import check_api_document, iter_api_things
from crowdsift.sources.archive.normalise import normalise_comment, normalise_post, slugify
from crowdsift.sources.archive.parse import (
    BadRecordError,
    CommentRow,
    PostRow,
    bare_id,
    parent_fullname,
    parse_line,
    record_from_dict,
    retrieved_time,
    to_int,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1700000000, 1700000000),
        (1700000000.9, 1700000000),
        ("1700000000", 1700000000),
        ("1700000000.0", 1700000000),
        (" 42 ", 42),
        ("nan", None),
        (float("inf"), None),
        ("soon", None),
        (True, None),
        (None, None),
        ([1], None),
    ],
)
def test_to_int_accepts_every_era_of_timestamp(value: object, expected: int | None) -> None:
    assert to_int(value) == expected


def test_ids_lose_their_prefix_and_parents_gain_one() -> None:
    assert bare_id("t3_abc") == "abc"
    assert bare_id("t1_xyz") == "xyz"
    assert bare_id("abc") == "abc"
    assert bare_id("t5_abc") == "t5_abc"
    assert bare_id(None) == ""
    assert parent_fullname("t1_c2", "p1") == "t1_c2"
    assert parent_fullname("p1", "p1") == "t3_p1"
    assert parent_fullname("c2", "p1") == "t1_c2"
    assert parent_fullname(None, "p1") == "t3_p1"


@pytest.mark.parametrize("created", [1700000000, 1700000000.5, "1700000000"])
def test_post_line_of_any_era_becomes_a_row(created: object) -> None:
    line = json.dumps(
        {"id": "abc", "subreddit": "HeadPhones", "title": "T", "created_utc": created, "x": 1}
    )
    row = parse_line(line)
    assert isinstance(row, PostRow)
    assert (row.id, row.subreddit, row.title, row.selftext) == ("abc", "headphones", "T", "")
    assert row.created_utc == 1700000000
    assert row.score == 0 and row.author is None
    assert row.data["x"] == 1  # the whole record is kept, extra fields and all


def test_comment_line_with_bare_link_id_is_normalised() -> None:
    line = json.dumps(
        {"id": "c1", "subreddit": "s", "body": "hi", "link_id": "p1", "parent_id": "p1"}
    )
    row = parse_line(line)
    assert isinstance(row, CommentRow)
    assert (row.link_id, row.parent_id) == ("p1", "t3_p1")


def test_created_falls_back_to_created_then_zero() -> None:
    row = parse_line(json.dumps({"id": "a", "subreddit": "s", "title": "t", "created": "12.0"}))
    assert row is not None and row.created_utc == 12
    row = parse_line(json.dumps({"id": "a", "subreddit": "s", "title": "t"}))
    assert row is not None and row.created_utc == 0


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object (a list)"),
        ('"text"', "not a JSON object (a str)"),
        ('{"subreddit": "s", "title": "t"}', "missing id"),
        ('{"id": "a", "title": "t"}', "t3_a: missing subreddit"),
        ('{"id": "a", "subreddit": "  ", "title": "t"}', "t3_a: missing subreddit"),
    ],
)
def test_bad_lines_raise_with_a_reason(line: str, reason: str) -> None:
    with pytest.raises(BadRecordError) as info:
        parse_line(line)
    assert info.value.reason.startswith(reason)


def test_records_that_are_neither_post_nor_comment_are_skipped() -> None:
    assert parse_line('{"_meta": {"note": "header"}}') is None
    assert parse_line('{"id": "m1", "subreddit": "s", "body": "a private message"}') is None
    assert parse_line('{"kind": "t5", "data": {"id": "x", "display_name": "s"}}') is None


def test_thing_wrapper_lines_are_unwrapped() -> None:
    line = json.dumps({"kind": "t3", "data": {"id": "w", "subreddit": "s", "title": "t"}})
    row = parse_line(line)
    assert isinstance(row, PostRow) and row.id == "w"
    assert row.data["title"] == "t"


def test_surrogate_pair_escapes_decode_to_the_emoji() -> None:
    line = '{"id": "e", "subreddit": "s", "title": "love it \\ud83d\\ude00"}'
    row = parse_line(line)
    assert row is not None and row.title == "love it 😀"


def test_lone_surrogates_are_replaced_so_sqlite_can_store_them() -> None:
    line = '{"id": "e", "subreddit": "s", "title": "broken \\ud83d end", "author": "\\udc00"}'
    row = parse_line(line)
    assert isinstance(row, PostRow)
    assert row.title == "broken \ufffd end" and row.author == "\ufffd"
    row.title.encode("utf-8")  # would raise on a surrogate
    assert normalise_post(row.data)["title"] == "broken \ufffd end"
    assert row.data["author"] == "\ufffd"  # the stored record is cleaned too


def test_retrieved_time_takes_the_newest_known_field() -> None:
    data = {"retrieved_on": 5, "retrieved_utc": "7", "_meta": {"retrieved_2nd_on": 9}}
    assert retrieved_time(data) == 9
    assert retrieved_time({}) == 0


def test_record_from_dict_serialises_api_data_and_uses_default_retrieval() -> None:
    row = record_from_dict(
        {"id": "a", "subreddit": "S", "title": "t\udc00"}, kind="t3", retrieved_default=77
    )
    assert isinstance(row, PostRow)
    assert row.retrieved == 77
    assert row.title == "t\ufffd"
    assert row.data["title"] == "t\ufffd"


def test_comment_without_link_id_in_api_json_is_bad() -> None:
    with pytest.raises(BadRecordError, match="missing link_id"):
        record_from_dict({"id": "c", "subreddit": "s", "body": "b"}, kind="t1")


def test_normalise_post_builds_permalink_for_old_eras() -> None:
    raw: dict[str, Any] = {
        "id": "t3_abc",
        "subreddit": "Headphones",
        "title": "Sony WH-1000XM5: worth it?!",
        "created_utc": "1700000000",
        "score": "12",
    }
    out = normalise_post(raw)
    assert out["permalink"] == "/r/Headphones/comments/abc/sony_wh_1000xm5_worth_it/"
    assert out["name"] == "t3_abc" and out["id"] == "abc"
    assert out["created_utc"] == 1700000000 and out["score"] == 12
    assert out["selftext"] == "" and out["num_comments"] == 0


def test_normalise_post_makes_absolute_permalinks_relative() -> None:
    raw = {"id": "a", "subreddit": "s", "title": "t"}
    raw["permalink"] = "https://www.reddit.com/r/s/comments/a/t/"
    assert normalise_post(raw)["permalink"] == "/r/s/comments/a/t/"


def test_normalise_comment_prefixes_ids_and_builds_permalink() -> None:
    raw = {"id": "c1", "subreddit": "s", "body": "b", "link_id": "p1", "parent_id": "c0"}
    out = normalise_comment(raw)
    assert out["link_id"] == "t3_p1" and out["parent_id"] == "t1_c0"
    assert out["name"] == "t1_c1"
    assert out["permalink"] == "/r/s/comments/p1/_/c1/"


def test_slugify_matches_reddit_style() -> None:
    assert slugify("Hello, World!") == "hello_world"
    assert slugify("日本語") == "_"
    assert len(slugify("word " * 40)) <= 50


def _listing(*children: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Listing", "data": {"children": list(children)}}


def test_iter_api_things_flattens_a_comment_tree_and_keeps_more_stubs() -> None:
    reply = {"kind": "t1", "data": {"id": "c2", "replies": ""}}
    top = {"kind": "t1", "data": {"id": "c1", "replies": _listing(reply)}}
    more = {"kind": "more", "data": {"id": "m", "children": ["x"]}}
    doc = [_listing({"kind": "t3", "data": {"id": "p"}}), _listing(top, more)]
    things = list(iter_api_things(doc))
    assert [(k, d["id"]) for k, d in things] == [
        ("t3", "p"),
        ("t1", "c1"),
        ("t1", "c2"),
        ("more", "m"),
    ]
    assert things[1][1]["replies"] == ""  # the tree is flattened, not stored twice


def test_check_api_document_rejects_unknown_json() -> None:
    check_api_document(_listing(), "x.json")
    check_api_document([{"id": "a", "subreddit": "s", "title": "t"}], "x.json")
    for doc in ({"error": 403}, [], "text", [1, 2]):
        with pytest.raises(DumpFormatError, match=r"not a Reddit Listing|error answer"):
            check_api_document(doc, "x.json")


@given(st.text(max_size=200))
def test_parse_line_never_fails_with_anything_but_a_bad_record(text: str) -> None:
    with contextlib.suppress(BadRecordError):
        parse_line(text)


@given(
    st.dictionaries(
        st.sampled_from(["id", "subreddit", "title", "body", "link_id", "parent_id", "score"]),
        st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=20), st.booleans()),
    )
)
def test_records_of_any_shape_parse_or_fail_cleanly(data: dict[str, Any]) -> None:
    try:
        row = parse_line(json.dumps(data))
    except BadRecordError:
        return
    if row is not None:
        assert row.id and row.subreddit == row.subreddit.lower()


_FIELD_VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False),
    st.booleans(),
    st.sampled_from(["", " x", "abc", "t3_abc", "t1_c1", "Sub", "1700000000", "t3_"]),
    st.text(max_size=8),
)


@settings(max_examples=400)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "subreddit",
                "title",
                "selftext",
                "body",
                "link_id",
                "parent_id",
                "author",
                "score",
                "num_comments",
                "created_utc",
                "created",
                "retrieved_on",
                "retrieved_utc",
                "kind",
            ]
        ),
        _FIELD_VALUES,
        min_size=3,
    )
)
def test_fast_path_agrees_with_the_general_path(data: dict[str, Any]) -> None:
    text = json.dumps(data)
    outcomes = []
    for parse in (
        lambda: parse_line(text),
        lambda: record_from_dict(json.loads(text)),
    ):
        try:
            outcomes.append(parse())
        except BadRecordError as exc:
            outcomes.append(exc.reason)
    assert outcomes[0] == outcomes[1]


def test_fast_path_is_taken_for_modern_records() -> None:
    from crowdsift.sources.archive.parse import _fast_record

    post = {
        "id": "a",
        "subreddit": "S",
        "title": "t",
        "created_utc": 1,
        "score": 2,
        "num_comments": 3,
        "author": "x",
    }
    comment = {
        "id": "c",
        "subreddit": "S",
        "body": "b",
        "link_id": "t3_a",
        "parent_id": "t3_a",
        "created_utc": 1,
        "score": 2,
    }
    for data in (post, comment):
        text = json.dumps(data)
        fast = _fast_record(json.loads(text))
        assert fast is not None
        assert fast == record_from_dict(json.loads(text), escaped=False)
