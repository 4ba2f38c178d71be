"""Tolerant reads of what an HTTP server answered: JSON that may be broken, numbers that may
be strings. Shared by the token managers and clients of every source."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx


def json_or_none(response: httpx.Response) -> Any:
    """The parsed body, or None when it is not JSON (an HTML error page, a cut-off body).

    Also None for JSON the decoder refuses otherwise: nesting past the recursion limit
    (RecursionError) or an integer past 4300 digits (a plain ValueError).
    """
    try:
        return json.loads(response.content)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError included
        return None


def positive_seconds(value: object, *, default: float) -> float:
    """``expires_in``-style values (number or numeric string) as seconds; else ``default``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        seconds = float(value)
    except (ValueError, OverflowError):  # not a number; an integer past ~1e308
        return default
    return seconds if 0 < seconds < math.inf else default  # NaN and infinity fail too
