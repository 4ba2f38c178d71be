"""``crowdsift.core.since``: the forms --since takes, its errors, the window, the echo line.

Pure functions with "now" passed in, so every expectation is an exact datetime.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from crowdsift.core.errors import UsageError
from crowdsift.core.since import (
    ACCEPTED_FORMS,
    WINDOW_SECONDS,
    Since,
    SinceError,
    covering_window,
    describe_window,
    format_since,
    is_before,
    parse_since,
    rfc3339,
    since_epoch,
)

NOW = datetime(2026, 11, 25, 19, 21, 37, 123456, tzinfo=UTC)
MINUTE = NOW.replace(second=0, microsecond=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", MINUTE - timedelta(days=30)),
        ("12h", MINUTE - timedelta(hours=12)),
        ("2w", MINUTE - timedelta(weeks=2)),
        (" 7D ", MINUTE - timedelta(days=7)),
        ("1 h", MINUTE - timedelta(hours=1)),
        ("2026-01-01", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-10-26T08:30:00Z", datetime(2026, 10, 26, 8, 30, tzinfo=UTC)),
        ("2026-10-26T10:30:00+02:00", datetime(2026, 10, 26, 8, 30, tzinfo=UTC)),
        ("2026-10-26T08:30", datetime(2026, 10, 26, 8, 30, tzinfo=UTC)),
    ],
)
def test_accepted_forms(text: str, expected: datetime) -> None:
    got = parse_since(text, NOW)
    assert got == expected
    assert got.tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("6m", MINUTE.replace(month=5)),
        ("1M", MINUTE.replace(month=10)),
        ("11m", MINUTE.replace(year=2025, month=12)),
        ("13m", MINUTE.replace(year=2025, month=10)),
        ("1y", MINUTE.replace(year=2025)),
        ("2 y", MINUTE.replace(year=2024)),
    ],
)
def test_months_and_years_are_calendar_ones_back_from_the_minute(
    text: str, expected: datetime
) -> None:
    assert parse_since(text, NOW) == expected
    assert parse_since(text, NOW + timedelta(seconds=5)) == expected  # same minute


def test_a_month_back_from_a_longer_month_ends_on_the_shorter_months_last_day() -> None:
    assert parse_since("6m", datetime(2026, 8, 31, 12, tzinfo=UTC)).date().isoformat() == (
        "2026-02-28"
    )
    assert parse_since("1m", datetime(2024, 3, 31, tzinfo=UTC)).day == 29  # a leap February
    assert parse_since("1y", datetime(2028, 2, 29, tzinfo=UTC)).date().isoformat() == ("2027-02-28")


@pytest.mark.parametrize("text", ["all", "ALL", " all "])
def test_all_is_every_post_and_says_so(text: str) -> None:
    bound = parse_since(text, NOW)
    assert bound == datetime(1970, 1, 1, tzinfo=UTC)
    assert covering_window(bound, NOW) == "all"
    assert not is_before(0, bound)  # the oldest possible post is in
    assert describe_window(bound, "month") == "threads from any time (--since all)"


def test_thirty_days_before_the_issue_date_is_the_issue_example() -> None:
    assert format_since(parse_since("30d", datetime(2026, 11, 25, tzinfo=UTC))) == "2026-10-26"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not a time"),
        ("   ", "not a time"),
        ("30", "not a time"),
        ("d", "not a time"),
        ("3 days", "not a time"),
        ("30min", "not a time"),  # m is months: minutes are not offered
        ("0m", "empty span"),
        ("0y", "empty span"),
        ("60y", "before 1970"),
        ("9999999m", "before 1970"),
        ("al", "not a time"),
        ("-5d", "not a time"),
        ("1.5d", "not a time"),
        ("yesterday", "not a time"),
        ("0d", "empty span"),
        ("2026-02-30", "not a real date"),
        ("2026-13-01", "not a real date"),
        ("2027-01-01", "in the future"),
        ("9999999w", "before 1970"),
        ("3000w", "before 1970"),
        ("1969-12-31", "before 1970"),
        ("0001-01-01T00:00:00+14:00", "before 1970"),
        ("٣d", "not a time"),  # ASCII digits only
    ],
)
def test_bad_values_say_the_accepted_forms(text: str, why: str) -> None:
    with pytest.raises(SinceError) as caught:
        parse_since(text, NOW)
    message = str(caught.value)
    assert why in message
    assert ACCEPTED_FORMS in message
    assert message.startswith("--since ")
    assert isinstance(caught.value, UsageError)  # the CLI maps it to exit 2


def test_naive_now_is_utc() -> None:
    assert parse_since("1d", NOW.replace(tzinfo=None)) == MINUTE - timedelta(days=1)


def test_now_in_another_zone_is_converted() -> None:
    plus_two = NOW.astimezone(timezone(timedelta(hours=2)))
    assert parse_since("1d", plus_two) == MINUTE - timedelta(days=1)


@given(count=st.integers(1, 2000), unit=st.sampled_from(["h", "d", "w"]))
def test_relative_spans_count_back_from_the_minute(count: int, unit: str) -> None:
    seconds = {"h": 3600, "d": 86_400, "w": 604_800}[unit] * count
    got = parse_since(f"{count}{unit}", NOW)
    assert got == MINUTE - timedelta(seconds=seconds)
    assert parse_since(f"{count}{unit}", NOW + timedelta(seconds=5)) == got  # same minute


@given(day=st.dates(min_value=datetime(2005, 1, 1).date(), max_value=NOW.date()))
def test_dates_round_trip_through_the_echo(day: object) -> None:
    bound = parse_since(str(day), NOW)
    assert format_since(bound) == str(day)
    assert parse_since(format_since(bound), NOW) == bound


@pytest.mark.parametrize(
    ("span", "window"),
    [
        (timedelta(minutes=30), "hour"),
        (timedelta(hours=1), "hour"),
        (timedelta(hours=1, seconds=1), "day"),
        (timedelta(hours=12), "day"),
        (timedelta(days=2), "week"),
        (timedelta(weeks=2), "month"),
        (timedelta(days=30), "month"),
        (timedelta(days=31), "year"),
        (timedelta(days=365), "year"),
        (timedelta(days=366), "all"),
    ],
)
def test_covering_window_examples(span: timedelta, window: str) -> None:
    assert covering_window(NOW - span, NOW) == window


@given(seconds=st.integers(1, 40 * 365 * 86_400))
def test_covering_window_is_the_smallest_that_covers(seconds: int) -> None:
    window = covering_window(NOW - timedelta(seconds=seconds), NOW)
    sizes = list(WINDOW_SECONDS.items())
    if window == "all":
        assert seconds > sizes[-1][1]
        return
    assert seconds <= WINDOW_SECONDS[window]
    smaller = [size for name, size in sizes if size < WINDOW_SECONDS[window]]
    assert all(seconds > size for size in smaller)


@given(micro=st.integers(0, 999_999), second=st.integers(0, 59))
def test_since_epoch_is_the_first_whole_second_in_the_window(micro: int, second: int) -> None:
    bound = datetime(2026, 10, 26, 8, 30, second, micro, tzinfo=UTC)
    first = since_epoch(bound)
    assert not is_before(first, bound)
    assert is_before(first - 1, bound)


@pytest.mark.parametrize(
    ("created", "before"),
    [
        (1_793_000_000, False),
        (1_793_000_000.0, False),
        ("1793000000", False),
        (1_700_000_000, True),
        (None, True),
        ("soon", True),
        (True, True),
        (float("nan"), True),
        ([], True),
    ],
)
def test_is_before_treats_undated_posts_as_too_old(created: object, before: bool) -> None:
    assert is_before(created, datetime(2026, 10, 26, tzinfo=UTC)) is before


def test_rfc3339_is_youtubes_form_rounded_up() -> None:
    assert rfc3339(datetime(2026, 10, 26, tzinfo=UTC)) == "2026-10-26T00:00:00Z"
    assert rfc3339(datetime(2026, 10, 26, 0, 0, 0, 1, tzinfo=UTC)) == "2026-10-26T00:00:01Z"


def test_format_since_shows_the_time_when_not_midnight() -> None:
    assert format_since(datetime(2026, 11, 25, 7, 21, tzinfo=UTC)) == "2026-11-25 07:21 UTC"


def test_describe_window_states_the_window_used() -> None:
    since = datetime(2026, 10, 26, tzinfo=UTC)
    assert describe_window(since, "month") == "threads since 2026-10-26"
    fast = describe_window(None, "month")
    assert fast is not None and fast.startswith("threads from the last month (fast-moving topic)")
    assert "all-time top threads" in fast  # the timeless strategy still searches all time
    assert describe_window(None, "all") == "threads from any time (--since narrows it)"
    assert describe_window(None, None) is None


def test_describe_window_says_where_an_archives_window_ended_and_whether_it_widened() -> None:
    newest = datetime(2025, 8, 8, 11, 33, tzinfo=UTC)
    anchored = describe_window(None, "month", newest=newest)
    assert anchored is not None
    assert anchored.startswith("threads from the month up to 2025-08-08 (fast-moving topic)")
    widened = describe_window(None, "month", newest=newest, widened_from=3)
    assert widened == (
        "threads from any time: the month up to 2025-08-08 held only 3, so the search widened "
        "once (--since sets the window)"
    )
    live = describe_window(None, "week", widened_from=0)
    assert live is not None and "the last week held no thread" in live
    # --since is the user's window: stated as it is, never described as widened
    since = datetime(2026, 10, 26, tzinfo=UTC)
    assert describe_window(since, "month", newest=newest, widened_from=2) == (
        "threads since 2026-10-26"
    )


class _Request(BaseModel):
    since: Since = None


def test_since_field_resolves_text_and_keeps_datetimes() -> None:
    assert _Request().since is None
    resolved = _Request(since="30d").since
    assert resolved is not None and resolved.tzinfo is not None
    exact = datetime(2026, 10, 26, 8, 30, tzinfo=timezone(timedelta(hours=2)))
    assert _Request(since=exact).since == exact
    assert _Request(since=exact).since.utcoffset() == timedelta(0)  # type: ignore[union-attr]
    round_trip = _Request.model_validate_json(_Request(since=exact).model_dump_json())
    assert round_trip.since == exact


def test_since_field_error_lists_the_forms() -> None:
    with pytest.raises(ValidationError) as caught:
        _Request(since="last tuesday")
    assert ACCEPTED_FORMS in str(caught.value)
