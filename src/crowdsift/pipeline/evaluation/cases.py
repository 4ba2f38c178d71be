"""The labelled evaluation cases (``data/eval/cases.json``, or any file passed with ``--cases``).

A case file is one JSON object: questions the archive answers, each labelled with the thread
that holds the answer and phrases from its top-voted replies, and questions it never
discusses, which must be declined::

    {"about": "...",
     "answerable": [{"id": "c1", "kind": "how-to", "q": "How do I ...?",
                     "thread": "1abcde", "keys": ["a phrase", "another phrase"]}],
     "off_topic": ["An unrelated question?", {"id": "o2", "q": "Another one?"}]}

Labels are written by people, so the loader is tolerant where that costs nothing: ``kind`` may
be written ``how-to`` or ``how_to``; ``thread`` is one post id or a list (any of them counts);
``keys`` is a list of phrases (found when any is) or a list of groups (each group must be
found, any phrase within it), so stricter labels survive; ``subreddits`` is optional; an
off-topic entry is a question or ``{"id", "q"}`` (string entries get ids ``off_topic_1``, …).
Where it is not, ``load_cases`` says where the mistake is (file, line, case, field) and how to
fix it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from crowdsift.core.errors import PlanError

AnswerableKind = Literal["how_to", "troubleshooting", "comparison", "general", "buying"]
CaseKind = Literal["how_to", "troubleshooting", "comparison", "general", "buying", "off_topic"]
TOP_K = 5

Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=120)]
ThreadId = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True, pattern=r"^[A-Za-z0-9]{1,16}$")
]
CaseId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9_.-]+$")]
_FIX = "fix the case (see docs/REFERENCE.md, 'Measuring answers') or pass another file with --cases"
_SECTIONS = ("answerable", "off_topic")


class EvalCasesError(PlanError):
    """The cases file is missing, not JSON, or a case fails validation (a usage error: exit 2)."""


def _kind(value: object) -> object:
    """``How-To`` and ``how_to`` are the same kind."""
    return (
        value.strip().lower().replace("-", "_").replace(" ", "_")
        if isinstance(value, str)
        else value
    )


def _as_list(value: object) -> object:
    """One thread id is a list of one."""
    return [value] if isinstance(value, str) else value


def _as_groups(value: object) -> object:
    """A flat list of phrases is one group (any phrase counts); a list of lists stays groups."""
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return [value]
    return value


class _AnswerableEntry(BaseModel):
    """One ``answerable`` entry as written in the file."""

    model_config = ConfigDict(extra="forbid")

    id: CaseId
    kind: Annotated[AnswerableKind, BeforeValidator(_kind)]
    q: str = Field(min_length=3)
    thread: Annotated[list[ThreadId], BeforeValidator(_as_list), Field(min_length=1)]
    keys: Annotated[
        list[Annotated[list[Phrase], Field(min_length=1)]],
        BeforeValidator(_as_groups),
        Field(min_length=1),
    ]
    subreddits: list[str] = Field(default_factory=list)


class _OffTopicEntry(BaseModel):
    """One ``off_topic`` entry written as an object."""

    model_config = ConfigDict(extra="forbid")

    id: CaseId
    q: str = Field(min_length=3)
    subreddits: list[str] = Field(default_factory=list)


class EvalCase(BaseModel):
    """One question and what its answer must contain (answerable) or do (off-topic: abstain)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: CaseKind
    question: str = Field(min_length=3)
    subreddits: list[str] = Field(default_factory=list)
    key_advice: list[list[str]] = Field(
        default_factory=list,
        description="groups of alternative phrases; every group must appear in the answer",
    )
    threads: list[str] = Field(
        default_factory=list, description="post ids of the thread(s) that answer it; any counts"
    )

    @property
    def answerable(self) -> bool:
        return self.kind != "off_topic"

    @property
    def expect_abstain(self) -> bool:
        return self.kind == "off_topic"


def load_cases(path: Path) -> list[EvalCase]:
    """The cases of ``path``, answerable first, or an ``EvalCasesError`` naming the line to fix."""
    text = _read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalCasesError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}); "
            "fix the syntax there"
        ) from None
    _check_shape(path, data)
    spans = _section_spans(text)
    cases: list[EvalCase] = []
    problems: list[str] = []
    for section in _SECTIONS:
        for index, item in enumerate(data.get(section) or []):
            start, end = spans[section][index]
            where = f"{section} case {index + 1}{_named(item)}"
            try:
                cases.append(_case(section, index, item))
            except ValidationError as exc:
                for error in exc.errors():
                    field, message = _describe(error)
                    line = _line(text, _field_offset(text, start, end, field))
                    problems.append(f"{path}:{line}: {where}, {field}: {message}")
                continue
            if cases[-1].id in {case.id for case in cases[:-1]}:
                line = _line(text, start)
                problems.append(f"{path}:{line}: {where}, id: {cases[-1].id!r} is used twice")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise EvalCasesError(f"{problems[0]}{more}; {_FIX}")
    return cases


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalCasesError(
            f"no evaluation cases at {path}; run from the repository root or pass --cases"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalCasesError(f"cannot read evaluation cases {path}: {exc}") from None


def _check_shape(path: Path, data: object) -> None:
    """The file is ``{"answerable": [...], "off_topic": [...]}`` with at least one case."""
    expected = 'expected {"answerable": [...], "off_topic": [...]}'
    if isinstance(data, list):
        raise EvalCasesError(f"{path}: a JSON list is the old case format; {expected}; {_FIX}")
    if not isinstance(data, dict):
        raise EvalCasesError(f"{path}: {expected}; {_FIX}")
    unknown = sorted(set(data) - {"about", *_SECTIONS})
    if unknown:
        raise EvalCasesError(f"{path}: unknown key {unknown[0]!r}; {expected}; {_FIX}")
    for section in _SECTIONS:
        if not isinstance(data.get(section, []), list):
            raise EvalCasesError(f"{path}: {section!r} must be a list; {expected}; {_FIX}")
    if not any(data.get(section) for section in _SECTIONS):
        raise EvalCasesError(f"{path}: no cases; {expected}; {_FIX}")


def _case(section: str, index: int, item: object) -> EvalCase:
    """One entry of ``section`` as an ``EvalCase`` (pydantic's ValidationError if it is bad)."""
    if section == "answerable":
        entry = _AnswerableEntry.model_validate(item)
        return EvalCase(
            id=entry.id, kind=entry.kind, question=entry.q, subreddits=entry.subreddits,
            key_advice=entry.keys, threads=list(dict.fromkeys(entry.thread)),
        )  # fmt: skip
    if isinstance(item, str):
        item = {"id": f"off_topic_{index + 1}", "q": item}
    off = _OffTopicEntry.model_validate(item)
    return EvalCase(id=off.id, kind="off_topic", question=off.q, subreddits=off.subreddits)


def _named(item: object) -> str:
    ident = item.get("id") if isinstance(item, dict) else None
    return f" ({ident!r})" if isinstance(ident, str) else ""


def _describe(error: Any) -> tuple[str, str]:
    """``(field, message)`` of one pydantic error."""
    message = str(error["msg"]).removeprefix("Value error, ")
    loc = [part for part in error["loc"] if not str(part).startswith(("list[", "function-"))]
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return field or "case", message


def _section_spans(text: str) -> dict[str, list[tuple[int, int]]]:
    """Where each element of the top-level ``answerable`` and ``off_topic`` lists starts and
    ends in ``text`` (valid JSON: the top-level object is walked key by key)."""
    decoder = json.JSONDecoder()
    spans: dict[str, list[tuple[int, int]]] = {section: [] for section in _SECTIONS}
    position = text.index("{") + 1
    while True:
        position = _skip(text, position, " \t\r\n,")
        if position >= len(text) or text[position] == "}":
            return spans
        key, position = decoder.raw_decode(text, position)
        position = _skip(text, position, " \t\r\n:")
        if key in spans and text[position] == "[":
            spans[key] = _element_spans(text, position)
        _, position = decoder.raw_decode(text, position)


def _element_spans(text: str, position: int) -> list[tuple[int, int]]:
    """Start and end of each element of the JSON list opening at ``position``."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int]] = []
    position += 1
    while True:
        position = _skip(text, position, " \t\r\n,")
        if text[position] == "]":
            return found
        _, end = decoder.raw_decode(text, position)
        found.append((position, end))
        position = end


def _skip(text: str, position: int, characters: str) -> int:
    while position < len(text) and text[position] in characters:
        position += 1
    return position


def _field_offset(text: str, start: int, end: int, field: str) -> int:
    """Where ``field`` (``keys[0][1]``: its first name) is in one case, else its start."""
    name = re.match(r"\w+", field)
    found = text.find(f'"{name.group()}"', start, end) if name else -1
    return found if found >= 0 else start


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
