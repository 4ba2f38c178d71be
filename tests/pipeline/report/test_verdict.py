"""The stance counts read back from a comparison row's verdict: the one documented format only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsift.pipeline.report.verdict import StanceCounts, parse_verdict
from crowdsift.pipeline.synthesis.specifics import verdict


def test_reads_the_counts_of_a_mention_verdict_and_of_a_reply_verdict() -> None:
    assert parse_verdict("7 mentions: mostly positive (4+ / 1−)") == StanceCounts(
        7, 4, 1, "mostly positive"
    )
    counts = parse_verdict("1 reply: no clear sentiment (0+ / 0−)")
    assert counts == StanceCounts(1, 0, 0, "no clear sentiment")
    assert counts.neutral == 1


@given(
    total=st.integers(0, 500),
    data=st.data(),
    noun=st.sampled_from(["mention", "reply"]),
)
def test_every_verdict_the_synthesis_writes_reads_back(
    total: int, data: st.DataObject, noun: str
) -> None:
    positive = data.draw(st.integers(0, total))
    negative = data.draw(st.integers(0, total - positive))
    counts = parse_verdict(verdict(total, positive, negative, noun))
    assert counts is not None
    assert (counts.total, counts.positive, counts.negative) == (total, positive, negative)
    assert counts.neutral == total - positive - negative


@pytest.mark.parametrize(
    "text",
    [
        "3 replies: mostly positive",  # an LLM's wording, no counts
        "Strong community favourite",
        "2 mentions: mixed (4+ / 1−)",  # sides add up to more than the mentions
        "7 mentions: mostly positive (4+ / 1−) and more",
        "",
    ],
)
def test_anything_else_has_no_counts(text: str) -> None:
    assert parse_verdict(text) is None
