"""Hypothesis strategies and settings shared by the property tests of every parser.

Three families, one per property the issue asks for:

- hostile input: arbitrary JSON (NaN, infinities, integers far past 64 bits, lone
  surrogates), JSON nested past the decoder's recursion limit, numbers longer than Python's
  4300-digit conversion limit, and arbitrary bytes;
- mutated valid records: a valid record with fields dropped, retyped or replaced by hostile
  values, which reaches much deeper into a parser than random JSON does;
- valid records (Reddit posts and comments, Telegram messages) for the round trips and for the
  "keeps every valid record" halves of the batch properties.

Every test uses ``examples(n)``: derandomized (the same examples on every run, so CI does not
flake), no deadline (2 busy cores make timings meaningless), and a small ``n`` so the whole
property suite stays well under 40 s.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# --- settings ---------------------------------------------------------------------------------


def examples(n: int) -> settings:
    """Settings of one property test: ``n`` examples, derandomized, no deadline."""
    return settings(
        max_examples=n,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,  # tmp_path: each example overwrites its files
        ],
    )


# --- hostile JSON -------------------------------------------------------------------------------

HUGE_INTS = st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 10**400, -(10**400)])
NASTY_FLOATS = st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e308, -0.0, 5e-324])
NASTY_TEXT = st.sampled_from(
    ["", " ", "\ud800", "a\udc00b", "1e999", "nan", "-1", "0x10", "t3_", "t1_", "\x00", "☃" * 3]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    HUGE_INTS,
    st.floats(allow_nan=True, allow_infinity=True),
    NASTY_FLOATS,
    st.text(max_size=12),
    NASTY_TEXT,
)


def json_values(keys: list[str] | None = None, *, max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value Python's decoder can produce; object keys drawn partly from ``keys``."""
    key = st.text(max_size=6) if not keys else st.one_of(st.sampled_from(keys), st.text(max_size=6))
    return st.recursive(
        SCALARS,
        lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(key, kids, max_size=4)),
        max_leaves=max_leaves,
    )


def dumps(value: Any) -> str:
    """JSON as Python writes it (``NaN``/``Infinity`` included), lone surrogates escaped."""
    return json.dumps(value, allow_nan=True)


DEPTHS = st.sampled_from([900, 985, 995, 999, 1000, 1200, 3000])
"""Nesting depths around CPython's recursion limit (1000) and far past it."""


@st.composite
def deep_json(draw: st.DrawFn) -> str:
    """Arrays or objects nested ``DEPTHS`` deep: the decoder raises RecursionError past ~1000."""
    depth = draw(DEPTHS)
    if draw(st.booleans()):
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


LONG_NUMBER = st.sampled_from(["9" * 5000, "-" + "1" * 4301, "1" * 4300 + ".5", "1e" + "9" * 5000])
"""Integers past Python's 4300-digit limit: ``json.loads`` raises a plain ValueError on them."""


def hostile_json_text(keys: list[str] | None = None) -> st.SearchStrategy[str]:
    """JSON text that is valid, deep, or carries a number the decoder refuses."""
    with_long_number = st.builds(lambda n: f'{{"id": {n}, "data": [{n}]}}', LONG_NUMBER)
    return st.one_of(json_values(keys).map(dumps), deep_json(), with_long_number, LONG_NUMBER)


def any_text() -> st.SearchStrategy[str]:
    """Arbitrary text, hostile JSON, and JSON-looking prefixes cut anywhere."""
    return st.one_of(
        st.text(max_size=60),
        hostile_json_text(),
        json_values().map(dumps).flatmap(lambda t: st.integers(0, len(t)).map(lambda i: t[:i])),
    )


# --- mutated records --------------------------------------------------------------------------


FIELD_VALUES = json_values(max_leaves=4)
"""What a mutated field becomes (built once: building strategies per draw is slow)."""


@st.composite
def mutated(draw: st.DrawFn, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with one to three fields dropped, retyped, or added (hostile values)."""
    out = dict(record)
    keys = sorted(record) or ["id"]
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["drop", "replace", "nasty", "add"]))
        if action == "drop":
            out.pop(key, None)
        elif action == "replace":
            out[key] = draw(FIELD_VALUES)
        elif action == "nasty":  # the values that break parsers most: weighted up on purpose
            out[key] = draw(st.one_of(NASTY_TEXT, HUGE_INTS, NASTY_FLOATS))
        else:
            out[draw(st.text(max_size=6))] = draw(FIELD_VALUES)
    return out


# --- valid Reddit records -----------------------------------------------------------------------

BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
IDS = st.text(alphabet=BASE36, min_size=1, max_size=8)
CLEAN_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
"""Text without lone surrogates: what survives a round trip unchanged."""
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SUBREDDITS = st.sampled_from(["gadgets", "Tools", "HomeImprovement", "LocalLLaMA", "de"])


@st.composite
def dump_posts(draw: st.DrawFn) -> dict[str, Any]:
    """A modern dump line's submission, with the fields the importer turns into columns."""
    return {
        "id": draw(IDS),
        "subreddit": draw(SUBREDDITS),
        "title": draw(CLEAN_TEXT),
        "selftext": draw(CLEAN_TEXT),
        "author": draw(st.one_of(st.none(), CLEAN_TEXT)),
        "score": draw(INT64),
        "num_comments": draw(st.integers(0, 2**31)),
        "created_utc": draw(st.integers(0, 2**33)),
        "retrieved_on": draw(st.integers(0, 2**33)),
    }


@st.composite
def dump_comments(draw: st.DrawFn) -> dict[str, Any]:
    link = draw(IDS)
    parent = draw(st.one_of(st.just(f"t3_{link}"), IDS.map(lambda i: f"t1_{i}")))
    return {
        "id": draw(IDS),
        "subreddit": draw(SUBREDDITS),
        "body": draw(CLEAN_TEXT),
        "author": draw(st.one_of(st.none(), CLEAN_TEXT)),
        "link_id": f"t3_{link}",
        "parent_id": parent,
        "score": draw(INT64),
        "created_utc": draw(st.integers(0, 2**33)),
    }


# --- valid Telegram messages ------------------------------------------------------------------

TG_TEXT = st.one_of(
    CLEAN_TEXT,
    st.lists(
        st.one_of(CLEAN_TEXT, st.builds(lambda t: {"type": "bold", "text": t}, CLEAN_TEXT)),
        max_size=3,
    ),
)


@st.composite
def tg_messages(draw: st.DrawFn, message_id: int) -> dict[str, Any]:
    """An ordinary ``type: message`` of a Telegram Desktop export."""
    stamp = draw(st.integers(0, 2**32))
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "date": "2025-06-01T11:01:56",
        "date_unixtime": str(stamp),
        "from": draw(CLEAN_TEXT),
        "from_id": f"user{draw(st.integers(1, 10**10))}",
        "text": draw(TG_TEXT),
    }
    if draw(st.booleans()):
        message["reply_to_message_id"] = draw(st.integers(1, 50))
    return message
