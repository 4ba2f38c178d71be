"""Numbers survive ``clean_text`` (issue 18): versions, model numbers and prices embedded in
sentences, lists and markdown all reach the cleaned text; only a list marker at the start of a
line goes.

Each example builds a multi-line Reddit-style body from lines; every line holds one token in a
sentence, wrapped in some inline markup and prefixed with some block mark (a heading, a quote,
a bullet, a list number). The property: every token of the input appears in the output, and the
output is still a fixed point.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

from crowdsift.core.text import clean_text

# --- the tokens ---------------------------------------------------------------------------------

_SMALL = st.integers(min_value=0, max_value=40)
_NAMES = st.sampled_from(["Airflow", "Python", "Dagster", "Postgres", "iOS", "Node", "dbt"])

VERSIONS = st.one_of(
    st.builds(lambda n, a, b: f"{n} {a}.{b}", _NAMES, _SMALL, _SMALL),
    st.builds(lambda n, a, b, c: f"{n} {a}.{b}.{c}", _NAMES, _SMALL, _SMALL, _SMALL),
    st.builds(lambda a, b: f"v{a}.{b}", _SMALL, _SMALL),
    st.builds(lambda n, a: f"{n} {a}", _NAMES, st.integers(min_value=1, max_value=99)),
)
MODELS = st.one_of(
    st.builds(
        lambda p, n: f"{p}{n}",
        st.sampled_from(["DCD", "DCF", "GX", "RTX", "M", "XM"]),
        st.integers(min_value=1, max_value=99999),
    ),
    st.builds(
        lambda p, n, s: f"{p}-{n}{s}",
        st.sampled_from(["WH", "WF", "SM", "KD"]),
        st.integers(min_value=1, max_value=9999),
        st.sampled_from(["XM6", "XM4", "", "A", "B2"]),
    ),
)
_AMOUNTS = st.one_of(
    st.integers(min_value=0, max_value=99999).map(str),
    st.builds(lambda a, c: f"{a:,}.{c:02d}", st.integers(0, 9_999_999), st.integers(0, 99)),
)
PRICES = st.one_of(
    st.builds(
        lambda cur, amount: f"{cur}{amount}", st.sampled_from(["$", "€", "£", "¥"]), _AMOUNTS
    ),
    st.builds(lambda amount: f"{amount}%", st.integers(min_value=0, max_value=100)),
    st.builds(lambda amount: f"{amount} USD", _AMOUNTS),
)
COUNTS = st.one_of(
    st.integers(min_value=0, max_value=2025).map(str),
    st.builds(lambda a, b: f"{a}.{b}", _SMALL, st.integers(min_value=1, max_value=9)),
)
TOKENS = st.one_of(VERSIONS, MODELS, PRICES, COUNTS)

# --- where a token sits -------------------------------------------------------------------------

_WORDS = st.lists(
    st.sampled_from(["it", "costs", "the", "new", "runs", "on", "has", "was", "and", "I", "got"]),
    max_size=3,
).map(" ".join)
# What follows the token: the punctuation that once made "Airflow 3. Anything" lose its "3."
_AFTER = st.sampled_from(["", ".", ",", ")", ":", ";", "!", "?", "...", ". Anything", ") has"])
_INLINE = st.sampled_from(
    [
        "{}",
        "**{}**",
        "*{}*",
        "_{}_",
        "__{}__",
        "~~{}~~",
        "`{}`",
        "[{}](https://example.com/x)",
        "[{}][ref]",
        "({})",
        ">!{}!<",
        "&quot;{}&quot;",
        "🚀 {}",
    ]
)
_BLOCK = st.sampled_from(
    ["", "# ", "## ", "> ", ">> ", "- ", "* ", "+ ", "1. ", "2) ", "10. ", "| "]
)


def _is_list_marker(token: str, after: str, block: str) -> bool:
    """'3' + '. Anything' opening a line (or a quoted line) *is* a list marker: the one thing
    that goes, so it is not a case of the property."""
    return token.isdigit() and after[:1] in (".", ")") and block in ("", "> ", ">> ")


@st.composite
def lines_with_tokens(draw: st.DrawFn) -> tuple[str, list[str]]:
    count = draw(st.integers(min_value=1, max_value=5))
    lines: list[str] = []
    tokens: list[str] = []
    for _ in range(count):
        token, after, inline, block = draw(TOKENS), draw(_AFTER), draw(_INLINE), draw(_BLOCK)
        if draw(st.booleans()):
            phrase = inline.format(f"{token}{after}")  # the punctuation inside the markup
        else:
            phrase = inline.format(token) + after
        before = draw(st.one_of(st.just(""), _WORDS))  # often nothing: the token opens the line
        if not before and phrase.startswith(token) and _is_list_marker(token, after, block):
            before = "about"
        text = f"{before} {phrase}" if before else phrase
        lines.append(f"{block}{text} {draw(_WORDS)}".rstrip())
        tokens.append(token)
    separator = draw(st.sampled_from(["\n", "\n\n", "\r\n"]))
    return separator.join(lines), tokens


@examples(400)
@given(lines_with_tokens())
def test_every_version_model_and_price_survives_cleaning(case: tuple[str, list[str]]) -> None:
    raw, tokens = case
    cleaned = clean_text(raw)
    for token in tokens:
        assert token in cleaned, (raw, cleaned, token)
    assert clean_text(cleaned) == cleaned


@examples(200)
@given(TOKENS, _AFTER, _WORDS)
def test_a_one_line_text_keeps_its_numbers_wherever_they_sit(
    token: str, after: str, tail: str
) -> None:
    """Titles and one-line comments are prose, not lists: even a leading '3. ' stays."""
    raw = f"{token}{after} {tail}".strip()
    cleaned = clean_text(raw)
    assert token in cleaned, (raw, cleaned)
    assert clean_text(cleaned) == cleaned


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "I upgraded to Airflow 3. Anything to watch?",
            "I upgraded to Airflow 3. Anything to watch?",
        ),
        ("The drill (DCD791) has a clutch", "The drill (DCD791) has a clutch"),
        ("12 (DCD791) has a hammer mode", "12 (DCD791) has a hammer mode"),
        ("Python 3.11.7 and v2.10 both work", "Python 3.11.7 and v2.10 both work"),
        ("Paid €1,299.99, not $159; saved 30%.", "Paid €1,299.99, not $159; saved 30%."),
        ("Sony WH-1000XM6 review", "Sony WH-1000XM6 review"),
        ("Steps:\n1. Install 3.0\n2) Run it", "Steps: Install 3.0. Run it"),
        ("Notes:\n## 3. Setup\nmore", "Notes: 3. Setup more"),
        ("Notes:\n- 3. Anything", "Notes: 3. Anything"),
        ("- 3. Anything", "3. Anything"),
        ("[edit]: Airflow 3.0 fixed it", "[edit]: Airflow 3.0 fixed it"),
        ('see [docs][1]\n\n[1]: https://example.com "Docs"', "see docs"),
        ("[3. Anything](https://x.example)\nnext", "3. Anything next"),
        ("**2.** Done\nok", "2. Done ok"),
        ("3. One line is not a list", "3. One line is not a list"),
        ("> 2. quoted step\nend", "quoted step end"),
    ],
)
def test_only_a_list_marker_starting_a_line_loses_its_number(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected
    assert clean_text(expected) == expected


def test_the_tokens_the_issue_names_are_drawn() -> None:
    """The strategies reach the shapes the issue reported, so the property is about them."""
    shapes = [
        r"^\d+$",
        r"^\w+ \d+\.\d+$",
        r"^v\d+\.\d+$",
        r"^[A-Z]+-\d+XM6$",
        r"^€[\d,]+\.\d\d$",
        r"^\d+%$",
    ]
    seen: set[str] = set()

    @examples(300)
    @given(TOKENS)
    def collect(token: str) -> None:
        seen.add(token)

    collect()
    for shape in shapes:
        assert any(re.match(shape, token) for token in seen), shape
