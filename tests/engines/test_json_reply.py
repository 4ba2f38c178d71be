"""Reading a model's text as JSON, and the repair prompt."""

from __future__ import annotations

import json
from typing import Generic, TypeVar

import pytest
from pydantic import BaseModel

from crowdsift.engines.base import ChatMessage
from crowdsift.engines.json_reply import (
    decode_json,
    json_object_instruction,
    repair_messages,
    schema_name,
    strip_code_fences,
    truncate,
)

T = TypeVar("T")


class Verdict(BaseModel):
    relevant: bool


class Page(BaseModel, Generic[T]):
    items: list[T]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('  {"a": 1}\n', '{"a": 1}'),
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```JSON\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
        ('```json {"a": 1}```', '{"a": 1}'),
        ('Here you go:\n```json\n{"a": 1}\n```\nAnything else?', '{"a": 1}'),
        ('```json\n{"a": 1', '{"a": 1'),  # cut before the closing fence
    ],
)
def test_strip_code_fences(text: str, expected: str) -> None:
    assert strip_code_fences(text) == expected


def test_decode_json_tolerates_a_sentence_around_one_object() -> None:
    assert decode_json('The answer is {"relevant": true}. Thanks!') == {"relevant": True}


@pytest.mark.parametrize("text", ["no json here", '{"relevant": tru}', "", "```json\n```"])
def test_decode_json_raises_the_decoder_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        decode_json(text)


def test_repair_messages_resend_the_conversation_with_the_bad_reply_and_the_problem() -> None:
    conversation = [
        ChatMessage(role="system", content="Judge relevance."),
        ChatMessage(role="user", content="Is this relevant?"),
    ]

    messages = repair_messages(conversation, "yes", "the reply is not valid JSON", Verdict)

    assert messages[:2] == conversation
    assert messages[2] == ChatMessage(role="assistant", content="yes")
    assert messages[3].role == "user"
    assert "the reply is not valid JSON" in messages[3].content
    assert "Verdict" in messages[3].content


def test_json_object_instruction_carries_the_schema() -> None:
    instruction = json_object_instruction(Verdict)

    assert instruction.role == "system"
    assert json.dumps(Verdict.model_json_schema(), separators=(",", ":")) in instruction.content


def test_schema_name_is_what_response_format_accepts() -> None:
    assert schema_name(Verdict) == "Verdict"
    assert schema_name(Page[int]) == "Page_int_"


def test_truncate_keeps_short_text_and_marks_long_text() -> None:
    assert truncate("short") == "short"
    long = truncate("x" * 1000, limit=10)
    assert long.startswith("x" * 10)
    assert "1000 characters" in long
