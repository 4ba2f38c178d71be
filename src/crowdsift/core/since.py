"""``--since``: how far back a run looks, as one aware UTC datetime every source can honour.

A user writes ``12h``, ``30d``, ``2w``, ``6m``, ``1y``, ``2026-01-01`` or ``all`` (the API and
plan files also take a full ISO 8601 datetime, which is how a resolved ``since`` travels back
in). Everything here is
pure: "now" is passed in, so the same text always gives the same bound in tests.

- ``parse_since(text, now)``: the bound. Relative spans count back from ``now`` floored to the
  minute, so the same command run a few seconds later sends the same requests (the response
  cache and Arctic Shift's minute-rounded bounds see one request, not two); months and years
  are calendar ones (``6m`` on 31 August is 28 or 29 February, the month's last day); dates
  are midnight UTC; an ISO datetime without a zone is UTC; ``all`` is ``EARLIEST``, all time
  even for a fast-moving topic, whose automatic window is otherwise the last month.
- ``covering_window(since, now)``: the smallest Reddit time filter (hour, day, week, month =
  30 days, year = 365 days, all) that still contains every post since the bound; the sources
  use the same window lengths, and the fetcher then filters exactly by ``created_utc``.
- ``since_epoch`` / ``is_before`` / ``rfc3339``: the bound in whole epoch seconds, the exact
  test a post's ``created_utc`` must pass, and the bound as YouTube's ``publishedAfter``.
- ``describe_window``: the line every answer carries ("threads since 2026-10-26"), also for
  the automatic window used without ``--since`` (a fast-moving topic: the last month).
- ``Since``: a pydantic field type that resolves the text forms against the wall clock at the
  boundary (API requests, plan files), so a queued job keeps the bound its caller meant.
"""

from __future__ import annotations

import calendar
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, WithJsonSchema

from crowdsift.core.config import TimeFilter
from crowdsift.core.errors import UsageError
from crowdsift.core.text import utc_now

ACCEPTED_FORMS = (
    "12h, 30d, 2w, 6m, 1y (hours, days, weeks, months, years back), a date like 2026-01-01, or all"
)
"""What every ``--since`` error lists, so the fix is in the message."""

WINDOW_SECONDS: dict[TimeFilter, int] = {
    "hour": 3600,
    "day": 86_400,
    "week": 7 * 86_400,
    "month": 30 * 86_400,
    "year": 365 * 86_400,
}
"""Reddit's ``t`` windows, smallest first, in the lengths the archive and Arctic Shift use."""

_UNIT_SECONDS = {"h": 3600, "d": 86_400, "w": 7 * 86_400}
_MONTHS = {"m": 1, "y": 12}
_SPAN = re.compile(r"([0-9]{1,7})\s*([hdwmy])", re.IGNORECASE)
ALL_TIME = "all"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
"""No bound before the epoch: every source counts time in epoch seconds (and no Reddit,
YouTube or Telegram post is older); leaving ``--since`` out searches all time."""


class SinceError(UsageError):
    """A ``--since`` value that is not one of the accepted forms (the CLI exits 2)."""


def parse_since(text: str, now: datetime) -> datetime:
    """``text`` as the oldest moment a result may come from (aware, UTC).

    Raises ``SinceError`` for anything else, for zero spans, for a bound in the future and
    for one before 1970, each message listing the accepted forms.
    """
    value = text.strip()
    now = _utc(now)
    span = _SPAN.fullmatch(value)
    if value.lower() == ALL_TIME:
        return EARLIEST
    if span is not None:
        bound = _relative(value, int(span.group(1)), span.group(2).lower(), now)
    elif _DATE.match(value):
        bound = _absolute(value, now)
    else:
        shown = repr(text) if value else "an empty value"
        raise SinceError(f"--since {shown} is not a time; use {ACCEPTED_FORMS}")
    if bound < EARLIEST:
        raise SinceError(
            f"--since {value!r} reaches back before 1970; leave --since out to search all time, "
            f"or use {ACCEPTED_FORMS}"
        )
    return bound


def _relative(text: str, count: int, unit: str, now: datetime) -> datetime:
    if count == 0:
        raise SinceError(f"--since {text!r} is an empty span; use {ACCEPTED_FORMS}")
    floor = now.replace(second=0, microsecond=0)
    if unit in _MONTHS:
        return _months_back(floor, count * _MONTHS[unit])
    try:
        return floor - timedelta(seconds=count * _UNIT_SECONDS[unit])
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)  # before 1970: refused by the caller


def _months_back(moment: datetime, months: int) -> datetime:
    """The same day and time ``months`` calendar months earlier (the month's last day when
    it is shorter); ``datetime.min`` when that is before year 1 (refused by the caller)."""
    year, month = divmod(moment.year * 12 + moment.month - 1 - months, 12)
    if year < 1:
        return datetime.min.replace(tzinfo=UTC)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _absolute(text: str, now: datetime) -> datetime:
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise SinceError(f"--since {text!r} is not a real date; use {ACCEPTED_FORMS}") from None
    try:
        bound = _utc(parsed)
    except OverflowError:  # year 1 with a positive offset, say
        return datetime.min.replace(tzinfo=UTC)
    if bound > now:
        raise SinceError(
            f"--since {text!r} is in the future (now is {format_since(now)}); use a past date "
            f"or {ACCEPTED_FORMS}"
        )
    return bound


def _utc(value: datetime) -> datetime:
    """Naive means UTC (as everywhere in crowdsift); aware is converted to UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def covering_window(since: datetime, now: datetime) -> TimeFilter:
    """The smallest Reddit time filter whose window reaches back to ``since`` from ``now``."""
    span = (_utc(now) - _utc(since)).total_seconds()
    for name, seconds in WINDOW_SECONDS.items():
        if span <= seconds:
            return name
    return "all"


def since_epoch(since: datetime) -> int:
    """The first whole epoch second at or after ``since``: a post with an integer
    ``created_utc`` is in the window exactly when ``created_utc >= since_epoch(since)``."""
    return math.ceil(_utc(since).timestamp())


def is_before(created_utc: Any, since: datetime) -> bool:
    """True when a post created at ``created_utc`` (epoch seconds, as Reddit sends it) is
    older than ``since``. A missing or unreadable date is "before": nothing shows the post
    is recent, and ``--since`` promises that older results never reach the answer."""
    if isinstance(created_utc, bool) or not isinstance(created_utc, int | float | str):
        return True
    try:
        value = float(created_utc)
    except ValueError:
        return True
    return not math.isfinite(value) or value < _utc(since).timestamp()


def rfc3339(since: datetime) -> str:
    """``2026-10-26T00:00:00Z``: the form YouTube's ``publishedAfter`` takes (whole seconds,
    rounded up so the bound never admits an older video)."""
    return datetime.fromtimestamp(since_epoch(since), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_since(since: datetime) -> str:
    """``2026-10-26`` for a midnight bound, else ``2026-10-26 14:05 UTC``."""
    moment = _utc(since)
    if (moment.hour, moment.minute, moment.second, moment.microsecond) == (0, 0, 0, 0):
        return moment.date().isoformat()
    return moment.strftime("%Y-%m-%d %H:%M UTC")


_DEFAULT_WINDOWS: dict[str, str] = {
    "hour": "the last hour",
    "day": "the last day",
    "week": "the last week",
    "month": "the last month",
    "year": "the last year",
}


def describe_window(
    since: datetime | None,
    default: TimeFilter | None = None,
    *,
    newest: datetime | None = None,
    widened_from: int | None = None,
) -> str | None:
    """The window a run searched, as the answer states it.

    With ``--since``: "threads since 2026-10-26". Without it, the automatic window of the
    question's topic (``default``): "threads from the last month (fast-moving topic), plus
    the all-time top threads" or "threads from any time"; None when nothing was searched.
    ``newest`` is the newest post an archive holds, which the window counted back from (None:
    from now); ``widened_from`` the threads that window held when it was too few and the
    search widened once to all time."""
    if since is not None and _utc(since) <= EARLIEST:
        return "threads from any time (--since all)"
    if since is not None:
        return f"threads since {format_since(since)}"
    if default is None:
        return None
    span = _DEFAULT_WINDOWS.get(default, "")
    if newest is not None:
        span = f"{span.replace('the last', 'the')} up to {_utc(newest).date().isoformat()}"
    if widened_from is not None:
        held = "no thread" if widened_from == 0 else f"only {widened_from}"
        return (
            f"threads from any time: {span} held {held}, so the search widened once "
            "(--since sets the window)"
        )
    if default == "all":
        return "threads from any time (--since narrows it)"
    reason = " (fast-moving topic)" if default == "month" else ""
    return f"threads from {span}{reason}, plus the all-time top threads (--since sets the window)"


def _resolve(value: Any) -> Any:
    """Text forms resolved against the wall clock; datetimes and None pass to pydantic."""
    if isinstance(value, str):
        try:
            return parse_since(value, utc_now())
        except SinceError as exc:
            raise ValueError(str(exc).removeprefix("--since ")) from None
    return value


def _to_utc(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value)


_SCHEMA = {
    "anyOf": [
        {
            "type": "string",
            "description": "12h, 30d, 2w, 6m, 1y (hours, days, weeks, months, years back), a "
            "date (2026-01-01), all (every post, even for a fast-moving topic) or an ISO 8601 "
            "datetime; answers carry it resolved, as an ISO 8601 datetime in UTC",
            "examples": ["30d", "6m", "2026-01-01", "all", "2026-10-26T00:00:00Z"],
        },
        {"type": "null"},
    ]
}

Since = Annotated[
    AwareDatetime | None,
    BeforeValidator(_resolve),
    AfterValidator(_to_utc),
    WithJsonSchema(_SCHEMA),
]
"""A ``since`` field of a request or plan: ``30d``/``6m``/a date/``all``/an ISO datetime in,
an aware UTC datetime (or None) out. Only this adapter reads the wall clock. One JSON Schema
serves both directions (a string), so an API document needs no separate input model."""
