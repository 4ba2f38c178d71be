"""Tolerant reads of what an HTTP server answered: JSON that may be broken, numbers that may
be strings. Shared by the token managers and clients of every source."""

from __future__ import annotations

import json
from typing import Any

import httpx


def json_or_none(response: httpx.Response) -> Any:
    """The parsed body, or None when it is not JSON (an HTML error page, a cut-off body)."""
    try:
        return json.loads(response.content)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def positive_seconds(value: object, *, default: float) -> float:
    """``expires_in``-style values (number or numeric string) as seconds; else ``default``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        seconds = float(value)
    except ValueError:
        return default
    return seconds if seconds > 0 else default
