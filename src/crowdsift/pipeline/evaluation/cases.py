"""The labelled evaluation cases (``data/eval/cases.json``): what a good answer must say.

A case is a question over the bundled demo archive, labelled with what a careful reader of the
archive expects: for an answerable question, the community's key advice (groups of short phrases
taken from the comments that really answer it; a group is found when any of its phrases is in
the answer) and the threads that should rank in the top 5; for a question about something the
archive never mentions, that the answer abstains. A case without ``kind`` is unlabelled: only
its grounding and length are checked.

``load_cases`` reads the file and says where a mistake is (file, line, case, field) and how to
fix it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from crowdsift.core.errors import PlanError

CaseKind = Literal["how_to", "troubleshooting", "comparison", "general", "off_topic"]
ANSWERABLE: frozenset[str] = frozenset({"how_to", "troubleshooting", "comparison", "general"})
TOP_K = 5

Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=120)]
ThreadId = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True, pattern=r"^[a-z0-9]{1,16}$")
]
_FIX = "fix the case (see README, 'Measuring answers') or pass another file with --cases"


class EvalCasesError(PlanError):
    """The cases file is missing, not JSON, or a case fails validation (a usage error: exit 2)."""


class EvalCase(BaseModel):
    """One question and, when labelled, what its answer must contain."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_-]+$")
    question: str = Field(min_length=3)
    subreddits: list[str] = Field(default_factory=list)
    kind: CaseKind | None = Field(None, description="None = unlabelled (grounding only)")
    key_advice: list[Annotated[list[Phrase], Field(min_length=1)]] = Field(
        default_factory=list,
        description="groups of alternative phrases; every group must appear in the answer",
    )
    top_threads: list[ThreadId] = Field(
        default_factory=list, max_length=TOP_K, description="post ids that belong in the top 5"
    )
    expect_abstain: bool = Field(False, description="the archive never discusses the subject")

    @model_validator(mode="after")
    def _labels_fit_the_kind(self) -> EvalCase:
        labelled = bool(self.key_advice or self.top_threads or self.expect_abstain)
        if self.kind is None and labelled:
            raise ValueError(
                "kind: a labelled case needs a kind "
                "(how_to, troubleshooting, comparison, general or off_topic)"
            )
        if self.kind == "off_topic":
            if not self.expect_abstain:
                raise ValueError("expect_abstain: an off_topic case must set it to true")
            if self.key_advice or self.top_threads:
                raise ValueError("key_advice: an off_topic case has no advice or threads to find")
        elif self.kind is not None:
            if self.expect_abstain:
                raise ValueError(
                    f"expect_abstain: a {self.kind} case is answerable; use kind off_topic "
                    "for a question the archive never discusses"
                )
            if not self.key_advice:
                raise ValueError(
                    "key_advice: an answerable case needs at least one group of phrases"
                )
            if not self.top_threads:
                raise ValueError(
                    "top_threads: an answerable case needs the post ids that should rank in the "
                    "top 5"
                )
        if len(set(self.top_threads)) != len(self.top_threads):
            raise ValueError("top_threads: a thread is listed twice")
        return self

    @property
    def labelled(self) -> bool:
        return self.kind is not None

    @property
    def answerable(self) -> bool:
        return self.kind in ANSWERABLE


def load_cases(path: Path) -> list[EvalCase]:
    """The cases of ``path`` (a JSON list), or an ``EvalCasesError`` naming the line to fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalCasesError(
            f"no evaluation cases at {path}; run from the repository root or pass --cases"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalCasesError(f"cannot read evaluation cases {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalCasesError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}); "
            "fix the syntax there"
        ) from None
    if not isinstance(data, list) or not data:
        raise EvalCasesError(f"{path}: expected a non-empty JSON list of cases; {_FIX}")
    spans = _element_spans(text)
    cases: list[EvalCase] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(data):
        start, end = spans[index]
        where = f"{path}:{_line(text, start)}: case {index + 1}{_named(item)}"
        try:
            case = EvalCase.model_validate(item)
        except ValidationError as exc:
            for error in exc.errors():
                field, message = _describe(error)
                line = _line(text, _field_offset(text, start, end, field))
                problems.append(
                    f"{path}:{line}: case {index + 1}{_named(item)}, {field}: {message}"
                )
            continue
        if case.id in seen:
            problems.append(f"{where}, id: {case.id!r} is already case {seen[case.id] + 1}")
        seen.setdefault(case.id, index)
        cases.append(case)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise EvalCasesError(f"{problems[0]}{more}; {_FIX}")
    return cases


def _named(item: object) -> str:
    ident = item.get("id") if isinstance(item, dict) else None
    return f" ({ident!r})" if isinstance(ident, str) else ""


def _describe(error: Any) -> tuple[str, str]:
    """``(field, message)`` of one pydantic error; model-level errors name their field."""
    message = str(error["msg"]).removeprefix("Value error, ")
    loc = [part for part in error["loc"] if part != "list[constrained-str]"]
    if not loc and ": " in message:
        field, message = message.split(": ", 1)
        return field, message
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return field or "case", message


def _element_spans(text: str) -> list[tuple[int, int]]:
    """Where each element of a valid top-level JSON list starts and ends in ``text``."""
    decoder = json.JSONDecoder()
    position = text.index("[") + 1
    spans: list[tuple[int, int]] = []
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            return spans
        _, end = decoder.raw_decode(text, position)
        spans.append((position, end))
        position = end


def _field_offset(text: str, start: int, end: int, field: str) -> int:
    """Where ``field`` (``key_advice[0][1]``: its first name) is in one case, else its start."""
    name = re.match(r"\w+", field)
    found = text.find(f'"{name.group()}"', start, end) if name else -1
    return found if found >= 0 else start


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
