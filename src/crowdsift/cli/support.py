"""What every command module shares: one-line errors and the error-to-exit-code mapping.

Exit codes: 0 success; 1 a runtime failure (a source that cannot be reached, say); 2 a usage
problem (bad plan, flag or file, a question under 3 or over 2,000 characters, a source chosen
without its credentials, an unknown expert).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Literal

import typer

from crowdsift.core.config import SourceName
from crowdsift.core.errors import CrowdsiftError, PlanError, UsageError
from crowdsift.core.models import SourceStatus
from crowdsift.core.question import MAX_QUESTION_CHARS, MIN_QUESTION_CHARS


def reflow_help(app: typer.Typer) -> None:
    """Every command's help as whole paragraphs, for ``app`` and the groups under it.

    Typer prints a docstring's line breaks as they are (after its first paragraph), and the
    terminal wraps each source line again: help read "a deep" on one line and "drill" on the
    next. Joined into one line per paragraph, the terminal's wrap is the only one."""
    for command in app.registered_commands:
        doc = command.help if isinstance(command.help, str) else None
        if doc is None and command.callback is not None:
            doc = inspect.getdoc(command.callback)
        if doc:
            command.help = reflowed(doc)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)
            info = group.typer_instance.info
            if isinstance(info.help, str):
                info.help = reflowed(info.help)


_LIST_ITEM = re.compile(r"\s*(?:[-*•]|[0-9]+[.)])\s")


def reflowed(text: str) -> str:
    """``text`` with each paragraph on one line; a list item keeps its own line."""
    paragraphs = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if lines and not _LIST_ITEM.match(line):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.strip())
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def error(message: str) -> None:
    """One plain line on stderr: no wrapping or markup, so scripts can grep it."""
    typer.echo(f"error: {message}", err=True)


@contextmanager
def exit_codes() -> Iterator[None]:
    """Our errors become one line and an exit code: 2 for usage (bad plan, flag, a source
    without its credentials, an unknown expert), else 1."""
    try:
        yield
    except (PlanError, UsageError) as exc:
        error(str(exc))
        raise typer.Exit(2) from None
    except CrowdsiftError as exc:
        error(str(exc))
        raise typer.Exit(1) from None


def check_question(question: str) -> str:
    """The question without surrounding blanks, or a usage error saying what to ask instead;
    the bounds are the API's (``core.question``)."""
    text = question.strip()
    if len(text) < MIN_QUESTION_CHARS:
        shown = f"{text!r} is" if text else "an empty question is"
        raise UsageError(
            f"{shown} too short to search for: ask at least {MIN_QUESTION_CHARS} characters, "
            'in plain words, e.g. crowdsift ask "is the Plaud Note worth it?"'
        )
    if len(text) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"the question is {len(text):,} characters long; ask in at most "
            f"{MAX_QUESTION_CHARS:,}: the question itself, not the text it is about"
        )
    return text


def engine_choice(value: str | None) -> Literal["local", "openai"] | None:
    """``--engine``: local or openai (None = the default for the settings)."""
    if value is None:
        return None
    if value not in ("local", "openai"):
        raise PlanError(f"unknown --engine {value!r}: use local or openai")
    return value  # type: ignore[return-value]


def source_warnings(statuses: list[SourceStatus]) -> None:
    """One stderr line per source that failed (``source_status``): a fallback is never silent."""
    for status in statuses:
        if status.failed:
            typer.echo(f"warning: {status.line()}", err=True)


def since_option(value: str | None) -> datetime | None:
    """``--since`` resolved against the wall clock; a bad value is a usage error (exit 2)."""
    from crowdsift.core.since import parse_since
    from crowdsift.core.text import utc_now

    return None if value is None else parse_since(value, utc_now())


def source_name(value: str | None) -> SourceName | None:
    if value is None:
        return None
    if value not in ("reddit-api", "arctic-shift", "archive", "auto"):
        raise PlanError(
            f"unknown --source {value!r}: use auto, reddit-api, arctic-shift or archive"
        )
    return value  # type: ignore[return-value]
