"""Cited text carried whole: read once into claims and citation lists, numbered by renderers.

``CitedText.decode`` is the one reader of stored ``[post:ID]``/``[comment:ID]`` markers; every
renderer is handed the decoded claims and numbers their lists, so a citation list survives from
the checked answer to the page without its string being cut apart again.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsift.cli.render import render_research
from crowdsift.core.citations import Citation, SourceNumbers
from crowdsift.pipeline.report.content import Segment, build_report, segments
from crowdsift.pipeline.synthesis.cited import CitedSpan, CitedText
from tests.cli.test_render import _result

QUOTE = "He wrote “see [post:x] and [comment:q1]” in his reply"
"""A stranger's words that hold what looks like citations: prose, not claims."""


def _numbers() -> SourceNumbers:
    numbers = SourceNumbers()
    numbers.register("post:a", 1)
    numbers.register("post:x", 2)  # known, so a re-parse of the prose would number it
    numbers.register("comment:q1", 3)
    return numbers


def _quoted() -> CitedText:
    return CitedText(spans=(CitedSpan(text=QUOTE + " ", cites=(Citation("post", "a"),)),))


# --- decode / marked -----------------------------------------------------------------------


def test_decode_reads_lists_and_marked_writes_them_back() -> None:
    text = "Owners like it [post:a1][comment:k9x]. Reviews agree [post:yt-x_1]."
    cited = CitedText.decode(text)
    assert [s.text for s in cited.spans] == ["Owners like it ", ". Reviews agree ", "."]
    assert [[c.key for c in s.cites] for s in cited.spans] == [
        ["post:a1", "comment:k9x"], ["post:yt-x_1"], []
    ]  # fmt: skip
    assert cited.marked() == text
    assert cited.refs() == ["post:a1", "comment:k9x", "post:yt-x_1"]


def test_decode_reads_a_written_list_as_one_citation_list() -> None:
    cited = CitedText.decode("A [post:d, comment:e, f][post:g] [post:h]. B")
    assert [[c.key for c in s.cites] for s in cited.spans] == [
        ["post:d", "comment:e", "comment:f", "post:g"], ["post:h"], []
    ]  # fmt: skip
    assert cited.marked() == "A [post:d][comment:e][comment:f][post:g] [post:h]. B"
    thinned = cited.thin(2)  # lists parted only by a space read as one, and are cut as one
    assert thinned.marked() == "A [post:d][comment:e]. B"


_ID = st.sampled_from(["a", "b", "c", "q1"]) | st.from_regex(
    r"[a-z0-9][a-z0-9_-]{0,6}", fullmatch=True
)
_CITATION = st.builds(Citation, st.sampled_from(["post", "comment"]), _ID)
_PROSE = st.text(st.characters(blacklist_characters="[]", blacklist_categories=["Cs"]), max_size=30)


@st.composite
def _cited_texts(draw: st.DrawFn) -> CitedText:
    """Canonical cited text: every span but the last cites, a list has no repeats, and lists
    are parted by prose (spaces will do: adjacent markers are one list)."""
    lists = draw(st.lists(st.lists(_CITATION, min_size=1, max_size=3), max_size=4))
    spans = [
        CitedSpan(
            text=draw(_PROSE.filter(bool) if index else _PROSE),
            cites=tuple({c.key: c for c in cites}.values()),
        )
        for index, cites in enumerate(lists)
    ]
    tail = draw(_PROSE)
    return CitedText(spans=(*spans, CitedSpan(text=tail)) if tail else tuple(spans))


@given(_cited_texts())
def test_marked_then_decoded_is_the_same_claims_and_lists(cited: CitedText) -> None:
    assert CitedText.decode(cited.marked()) == cited
    assert CitedText.decode(cited.marked()).marked() == cited.marked()


@given(_cited_texts())
def test_lines_keep_every_list_with_its_line(cited: CitedText) -> None:
    lines = cited.lines()
    assert [c for line in lines for s in line.spans for c in s.cites] == [
        c for s in cited.spans for c in s.cites
    ]
    assert "\n".join(line.marked() for line in lines).splitlines() == cited.marked().splitlines()


# --- renderers number the lists they are handed -----------------------------------------------


def test_the_terminal_numbers_the_list_and_leaves_a_quoted_marker_as_prose() -> None:
    shown = _quoted().numbered(_numbers())
    assert shown == f"{QUOTE} [1]"
    assert "[2]" not in shown and "[3]" not in shown


def test_reports_number_the_list_and_leave_a_quoted_marker_as_prose() -> None:
    assert segments(_quoted(), _numbers()) == (Segment(QUOTE, (1,)),)


def test_unknown_citations_vanish_and_adjacent_lists_read_in_order() -> None:
    cited = CitedText.decode("B [post:zz][comment:q1][post:a]. C [post:x] [post:nope].")
    assert cited.numbered(_numbers()) == "B [1][3]. C [2]."
    assert segments(cited, _numbers()) == (Segment("B", (1, 3)), Segment(". C", (2,)), Segment("."))


@pytest.mark.parametrize("render", ["text", "report"])
def test_renderers_read_the_answers_claims_not_its_string(render: str) -> None:
    """An answer whose claims hold a quoted marker in their prose: a renderer that cut the
    contract string apart again would read "[post:b2]" as a citation (and drop it: b2 is no
    source); one that numbers the lists it is handed prints the quote as written."""
    claims = CitedText(
        spans=(CitedSpan(text="Quoted “[post:b2]” verbatim ", cites=(Citation("post", "a1"),)),)
    )
    answer = _result()
    assert answer.summary is not None
    summary = answer.summary.model_copy(update={"summary": claims})
    result = answer.model_copy(update={"summary": summary})
    assert summary.model_dump()["summary"] == "Quoted “[post:b2]” verbatim [post:a1]"
    if render == "text":
        shown = render_research(result, full=True)
        assert shown.splitlines()[0] == "Quoted “[post:b2]” verbatim [1]"
    else:
        answer = build_report(result).answer
        assert answer == ((Segment("Quoted “[post:b2]” verbatim", (1,)),),)


@given(_cited_texts())
def test_numbering_the_lists_reads_as_numbering_the_stored_string(cited: CitedText) -> None:
    """For the text grounding stores, the lists numbered read exactly as the markers of the
    string numbered did (``SourceNumbers.text``): the terminal's output is unchanged."""
    numbers = SourceNumbers()
    for number, key in enumerate(["post:a", "post:b", "comment:c", "comment:q1"], start=1):
        numbers.register(key, number)
    assert cited.numbered(numbers) == numbers.text(cited.marked())
