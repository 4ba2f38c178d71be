"""What every command module shares: one-line errors and the error-to-exit-code mapping.

Exit codes: 0 success; 1 a runtime failure; 2 a usage problem (bad plan, flag or file).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import typer

from crowdsift.core.errors import CrowdsiftError, PlanError


def error(message: str) -> None:
    """One plain line on stderr: no wrapping or markup, so scripts can grep it."""
    typer.echo(f"error: {message}", err=True)


@contextmanager
def exit_codes() -> Iterator[None]:
    """Our errors become one line and an exit code: 2 for usage (bad plan, flag), else 1."""
    try:
        yield
    except PlanError as exc:
        error(str(exc))
        raise typer.Exit(2) from None
    except CrowdsiftError as exc:
        error(str(exc))
        raise typer.Exit(1) from None


def engine_choice(value: str | None) -> Literal["local", "openai"] | None:
    """``--engine``: local or openai (None = the default for the settings)."""
    if value is None:
        return None
    if value not in ("local", "openai"):
        raise PlanError(f"unknown --engine {value!r}: use local or openai")
    return value  # type: ignore[return-value]
