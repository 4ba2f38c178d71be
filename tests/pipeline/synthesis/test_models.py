"""The answer is one model: its texts are stored as claims with citation lists (``CitedText``),
and seed 004's marker strings are what their JSON shows, written from the claims."""

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
