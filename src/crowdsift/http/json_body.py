"""Tolerant reads of what an HTTP server answered — JSON that may be broken, numbers that may
be strings — and the query parameters safe to log. Shared by the transport, the token managers
and clients of every source."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import httpx

Params = Mapping[str, str | int | float]


def json_or_none(response: httpx.Response) -> Any:
    """The parsed body, or None when it is not JSON (an HTML error page, a cut-off body, a 429
    page from a proxy): error bodies never crash their reader (see ``parse_json``)."""
    try:
        return parse_json(response.content)
    except ValueError:
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


_SECRET_PARAM_WORDS = ("token", "secret", "password", "key", "auth", "sig", "session")
_MAX_PARAM_CHARS = 120


def safe_params(params: Params | None) -> dict[str, str | int | float]:
    """The query parameters worth logging: secret-looking names dropped, long values clipped."""
    safe: dict[str, str | int | float] = {}
    for name, value in (params or {}).items():
        if any(word in name.lower() for word in _SECRET_PARAM_WORDS):
            continue
        if isinstance(value, str) and len(value) > _MAX_PARAM_CHARS:
            value = value[:_MAX_PARAM_CHARS] + "…"
        safe[name] = value
    return safe


def parse_json(content: bytes) -> Any:
    """The body as JSON, or raise ValueError (also for an undecodable or empty body).

    Besides JSONDecodeError, the decoder raises RecursionError for nesting past the
    interpreter's recursion limit and a plain ValueError for an integer past 4300 digits:
    a server can send either, and both are broken JSON here.
    """
    try:
        return json.loads(content)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a number too long
        raise ValueError(str(exc)) from exc
