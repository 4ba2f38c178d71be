"""A negation governs the risk cues of its own clause, not of the next one."""

from __future__ import annotations

import pytest

from crowdsift.pipeline.synthesis.claims import is_risk


@pytest.mark.parametrize(
    ("sentence", "risk"),
    [
        ("Run it locally and never have to worry about privacy concerns.", False),
        ("It never died on me in two winters.", False),
        ("No issues so far, and it crashes sometimes when it gets hot.", True),
        ("Be careful with the cheap adapters.", True),
    ],
)
def test_a_negation_covers_its_clause(sentence: str, risk: bool) -> None:
    assert is_risk(sentence) is risk
