"""Turning a model's text into a task's output, and asking once for a repair when it is not.

Models wrap JSON in markdown fences, prefix it with a sentence, or get a field wrong. We accept
the first two (the schema still validates what we keep) and, for anything else, send the
conversation back once with the exact parse or validation error. Nothing here does I/O.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel

from crowdsift.core.errors import EngineOutputError
from crowdsift.engines.base import ChatMessage, OutT, Task

RAW_LIMIT = 500  # characters of a bad reply kept on an EngineOutputError
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


def strip_code_fences(text: str) -> str:
    """The JSON inside a markdown code fence (```json ... ```), else the text itself, trimmed.

    A reply cut before its closing fence still loses the opening one.
    """
    stripped = text.strip()
    match = _FENCE.search(stripped)
    if match:
        return match.group(1).strip()
    if stripped.startswith("```"):
        first_newline = stripped.find("\n")
        return stripped[first_newline + 1 :].strip() if first_newline != -1 else ""
    return stripped


def decode_json(text: str) -> Any:
    """Decode a reply's JSON: fences stripped, a sentence around one object tolerated.

    Raises ``ValueError`` (``json.JSONDecodeError``) with the decoder's message, which the repair
    prompt quotes back to the model.
    """
    body = strip_code_fences(text)
    try:
        return _loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end and (start > 0 or end < len(body) - 1):
            try:
                return _loads(body[start : end + 1])
            except json.JSONDecodeError:
                pass
        raise


def _loads(text: str) -> Any:
    """``json.loads`` whose every failure is a JSONDecodeError, as the repair prompt needs.

    The decoder also raises RecursionError (nesting past the interpreter's recursion limit) and
    a plain ValueError (an integer past 4300 digits); a model can send either.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply", text, 0) from None
    except ValueError as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None


def parse_reply(task: Task[OutT], content: str) -> OutT:
    """Decode and validate ``content`` as the task's output, or raise EngineOutputError."""
    try:
        data = decode_json(content)
    except json.JSONDecodeError as exc:
        raise EngineOutputError(
            f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            raw=truncate(content),
        ) from exc
    return task.parse(data)


def repair_messages(
    conversation: list[ChatMessage], bad_reply: str, problem: str, output_model: type[BaseModel]
) -> list[ChatMessage]:
    """The conversation, the bad reply, and a request for only the corrected JSON."""
    request = (
        f"Your previous reply could not be used: {problem}. Reply again with only the corrected "
        f"JSON object matching the {output_model.__name__} schema: no prose, no code fences."
    )
    return [
        *conversation,
        ChatMessage(role="assistant", content=bad_reply),
        ChatMessage(role="user", content=request),
    ]


@functools.cache
def output_schema(output_model: type[BaseModel]) -> dict[str, Any]:
    """A task's JSON schema, built once per output model: pydantic rebuilds it on every call
    (0.3-0.8 ms), which a map wave of 25 chunks would pay on its critical path. Callers must
    not mutate it."""
    return output_model.model_json_schema()


@functools.cache
def _schema_text(output_model: type[BaseModel]) -> str:
    return json.dumps(output_schema(output_model), separators=(",", ":"))


def json_object_instruction(output_model: type[BaseModel]) -> ChatMessage:
    """Where ``json_object`` mode replaces ``json_schema``, the prompt must carry the schema
    (and OpenAI requires the word JSON in the messages)."""
    schema = _schema_text(output_model)
    return ChatMessage(
        role="system",
        content=f"Reply with one JSON object, and nothing else, that matches this JSON schema: "
        f"{schema}",
    )


def schema_name(output_model: type[BaseModel]) -> str:
    """``output_model``'s name as response_format accepts it: [A-Za-z0-9_-], at most 64."""
    return _SCHEMA_NAME.sub("_", output_model.__name__)[:64] or "output"


def truncate(text: str, limit: int = RAW_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
