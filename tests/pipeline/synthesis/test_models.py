"""The answer is one model: its texts are stored as claims with citation lists (``CitedText``),
and seed 004's marker strings are what their JSON shows, written from the claims.

``claims`` carries the same texts as spans beside the strings, and a result read back from its
own JSON takes them from there, so nothing a stranger typed inside a quote turns into a
citation on the way.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from crowdsift.core.citations import Citation
from crowdsift.pipeline.synthesis.cited import CitedSpan, CitedText
from crowdsift.pipeline.synthesis.models import RedditSynthesis, SummarizeResult, SummaryContent

SUMMARY = "Owners like it [post:a1][comment:k9x]. Some bump the switch [comment:c7]."
HIGHLIGHT = "Battery lasts a week [comment:k9x]."
CAUTION = "The app wants a subscription [post:b2]."
QUOTED = CitedText(
    spans=(
        CitedSpan(
            text="He wrote “see [post:b2] first” in his reply ", cites=(Citation("post", "a1"),)
        ),
        CitedSpan(text="."),
    )
)
"""A stranger's "[post:b2]" inside a quote: prose. Its marker string reads like a citation."""


def _result(**texts: object) -> SummarizeResult:
    fields = {"summary": SUMMARY, "highlights": [HIGHLIGHT], "cautions": [CAUTION], **texts}
    return SummarizeResult(status="ok", prompt_version="v1", **fields)


def test_the_texts_are_stored_as_claims_and_written_as_the_contract_string() -> None:
    result = _result()
    assert isinstance(result.summary, CitedText)
    assert [c.key for c in result.summary.citations()] == ["post:a1", "comment:k9x", "comment:c7"]
    assert result.summary.text == "Owners like it . Some bump the switch ."
    assert all(isinstance(text, CitedText) for text in [*result.highlights, *result.cautions])
    dumped = json.loads(result.model_dump_json())
    assert (dumped["summary"], dumped["highlights"], dumped["cautions"]) == (
        SUMMARY, [HIGHLIGHT], [CAUTION]
    )  # fmt: skip
    python = result.model_dump(mode="json")
    assert (python["summary"], python["highlights"], python["cautions"]) == (
        SUMMARY, [HIGHLIGHT], [CAUTION]
    )  # fmt: skip
    assert result.model_dump()["summary"] == SUMMARY  # the Python dump too


@pytest.mark.parametrize("model", [SummaryContent, RedditSynthesis])
def test_the_other_answer_models_store_claims_alike(model: type[SummaryContent]) -> None:
    extra = {"prompt_version": "v1"} if model is SummaryContent else {}
    built = model(summary=SUMMARY, **extra)
    assert isinstance(built.summary, CitedText)
    assert json.loads(built.model_dump_json())["summary"] == SUMMARY


def test_a_cited_text_is_stored_as_given_and_anything_but_text_is_refused() -> None:
    result = _result(summary=QUOTED)
    assert result.summary is QUOTED  # not read again from its string
    with pytest.raises(ValidationError, match="Input should be a valid string"):
        _result(summary=42)
    with pytest.raises(ValidationError, match="Input should be a valid string"):
        _result(highlights=[{"spans": []}])


def test_the_json_carries_each_text_as_spans_beside_its_string() -> None:
    claims = json.loads(_result(cautions=[QUOTED]).model_dump_json())["claims"]
    assert claims["summary"] == [
        {"text": "Owners like it ", "cites": ["post:a1", "comment:k9x"]},
        {"text": ". Some bump the switch ", "cites": ["comment:c7"]},
        {"text": ".", "cites": []},
    ]
    assert claims["highlights"] == [
        [{"text": "Battery lasts a week ", "cites": ["comment:k9x"]}, {"text": ".", "cites": []}]
    ]
    assert claims["cautions"] == [
        [
            {"text": "He wrote “see [post:b2] first” in his reply ", "cites": ["post:a1"]},
            {"text": ".", "cites": []},
        ]
    ]


def test_read_back_from_its_json_a_quoted_marker_stays_prose() -> None:
    result = _result(summary=QUOTED, highlights=[QUOTED])
    dumped = result.model_dump_json()
    assert json.loads(dumped)["summary"] == "He wrote “see [post:b2] first” in his reply [post:a1]."
    read = SummarizeResult.model_validate_json(dumped)
    assert read == result
    assert read.summary.refs() == ["post:a1"] and read.highlights[0].refs() == ["post:a1"]
    without = json.loads(dumped)
    del without["claims"]  # another program's JSON: the strings are all there is
    assert SummarizeResult.model_validate(without).summary.refs() == ["post:b2", "post:a1"]


def test_claims_that_do_not_write_the_strings_beside_them_are_not_read() -> None:
    data = json.loads(_result(summary=QUOTED).model_dump_json())
    data["summary"] = "Edited by hand [post:zz9]."  # the strings are the contract
    data["claims"]["highlights"] = [[{"text": "No such highlight ", "cites": ["post:a1"]}]]
    read = SummarizeResult.model_validate(data)
    assert read.summary.marked() == "Edited by hand [post:zz9]."
    assert [h.marked() for h in read.highlights] == [HIGHLIGHT]
    data["claims"] = {"summary": "not spans"}
    assert SummarizeResult.model_validate(data).summary.refs() == ["post:zz9"]


def test_a_pivot_reads_as_one_line_dated_only_when_both_ends_are_known() -> None:
    from datetime import UTC, datetime

    from crowdsift.pipeline.synthesis.models import PivotAlert

    url = "https://www.reddit.com/r/dataengineering/comments/p1/t/"
    dated = PivotAlert(
        from_option="Airflow", to_option="Dagster", text="Two teams moved.", sources=[url],
        first_seen=datetime(2024, 1, 5, tzinfo=UTC), last_seen=datetime(2025, 3, 2, tzinfo=UTC),
    )  # fmt: skip
    assert dated.line() == "Airflow → Dagster (2024-01-05 – 2025-03-02): Two teams moved."
    undated = dated.model_copy(update={"last_seen": None})
    assert undated.line() == "Airflow → Dagster: Two teams moved."
