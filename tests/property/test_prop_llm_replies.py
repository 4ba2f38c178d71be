"""LLM replies: ``parse_reply`` with every Task's ``parse`` returns the task's output or raises
EngineOutputError, whatever the model sent: fences, prose, cut-off JSON, wrong shapes, NaN,
numbers past 64 bits or past Python's digit limit, arrays nested past the recursion limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_text, deep_json, dumps, examples, json_values, mutated

import crowdsift
from crowdsift.core.errors import EngineOutputError
from crowdsift.engines.base import Task
from crowdsift.engines.json_reply import decode_json, parse_reply
from harness import VALID_REPLIES, reply_tasks

TASKS = reply_tasks()
NAMES = sorted(TASKS)


def _all_task_classes() -> set[str]:
    """Every concrete Task subclass in crowdsift (its modules are imported by the harness)."""
    found: set[str] = set()
    pending = list(Task.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith(crowdsift.__name__ + ".") and not getattr(
            cls, "__abstractmethods__", None
        ):
            found.add(cls.__name__)
    return found


def test_every_task_in_crowdsift_is_covered() -> None:
    """A new Task must join ``reply_tasks`` (and so these properties and the fuzz target)."""
    assert _all_task_classes() <= set(TASKS)
    assert set(VALID_REPLIES) == set(TASKS)


def _parse_or_typed_error(name: str, content: str) -> Any:
    task = TASKS[name]
    try:
        output = parse_reply(task, content)
    except EngineOutputError as exc:
        assert str(exc)
        return None
    assert isinstance(output, task.output_model)
    return output


def _wrapped(text: str, style: int) -> str:
    """A reply as models write it: bare, fenced, fenced without closing, or inside prose."""
    return [
        text,
        f"```json\n{text}\n```",
        f"```json\n{text}",
        f"Here is the JSON you asked for:\n{text}\nLet me know if you need more.",
    ][style]


REPLY_TEXT = st.one_of(
    any_text(),
    st.tuples(json_values(), st.integers(0, 3)).map(lambda v: _wrapped(dumps(v[0]), v[1])),
    deep_json(),
)


@examples(300)
@given(name=st.sampled_from(NAMES), content=REPLY_TEXT)
def test_any_reply_parses_or_raises_engine_output_error(name: str, content: str) -> None:
    _parse_or_typed_error(name, content)


@st.composite
def _mutated_replies(draw: st.DrawFn) -> tuple[str, str]:
    """A valid reply with fields dropped or retyped, maybe cut short, as text."""
    name = draw(st.sampled_from(NAMES))
    reply = VALID_REPLIES[name]
    value = draw(mutated(reply)) if isinstance(reply, dict) else reply
    text = dumps(value)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return name, _wrapped(text, draw(st.integers(0, 3)))


@examples(300)
@given(case=_mutated_replies())
def test_mutated_valid_replies_parse_or_raise_engine_output_error(case: tuple[str, str]) -> None:
    _parse_or_typed_error(*case)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("style", range(4))
def test_valid_replies_round_trip_in_every_wrapping(name: str, style: int) -> None:
    """Fences and prose change nothing: the output equals the task's parse of the JSON."""
    reply = VALID_REPLIES[name]
    expected = TASKS[name].parse(json.loads(json.dumps(reply)))
    output = parse_reply(TASKS[name], _wrapped(json.dumps(reply, indent=1), style))
    assert output == expected
    assert output.model_dump() == TASKS[name].parse(output.model_dump()).model_dump()


@pytest.mark.parametrize("depth", [995, 1000, 50_000])
def test_deeply_nested_reply_is_an_engine_output_error(depth: int) -> None:
    with pytest.raises(EngineOutputError, match="not valid JSON"):
        parse_reply(TASKS["RelevanceTask"], '{"scores": ' + "[" * depth + "]" * depth + "}")


def test_a_number_past_the_digit_limit_is_an_engine_output_error() -> None:
    with pytest.raises(EngineOutputError, match="not valid JSON"):
        parse_reply(TASKS["RelevanceTask"], '{"scores": [' + "9" * 5000 + "]}")


def test_decode_json_keeps_raising_json_decode_errors_only() -> None:
    """The repair prompt quotes the decoder's message: every failure is a JSONDecodeError."""
    for text in ("[" * 5000, "9" * 5000, '{"a": ' + "1" * 4400 + "}"):
        with pytest.raises(json.JSONDecodeError):
            decode_json(text)
