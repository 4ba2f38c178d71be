"""The claim scorer's weights are settings: read from CROWDSIFT_SCORE_*, carried to the local
engine, and they change what it ranks first."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsift.core.config import ScoringConfig, load_settings
from crowdsift.core.errors import ConfigError
from crowdsift.pipeline.synthesis.candidates import Candidate, Item
from crowdsift.pipeline.synthesis.claim_scores import claim_scores, reader_bonus
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.sections import AnswerScope

QUESTION = "How do I keep the model loaded between requests?"
CANDIDATES = [
    Candidate("Set keep alive so the model stays loaded.", Item("comment:a", "", 2, 0, 0, True)),
    Candidate("Keep alive keeps the model loaded too.", Item("comment:b", "", 90, 0, 1, True)),
]
RELEVANCE = np.array([0.9, 0.7], dtype=np.float32)
SIMILARITY = np.eye(2, dtype=np.float32)


def ranked(weights: ScoringConfig) -> list[str]:
    scores = claim_scores(QUESTION, CANDIDATES, RELEVANCE, SIMILARITY, weights)
    scores = scores + reader_bonus(QUESTION, CANDIDATES, SIMILARITY, AnswerScope(), weights)
    return [CANDIDATES[i].item.marker for i in np.argsort(-scores)]


def test_the_weights_decide_the_ranking() -> None:
    assert ranked(ScoringConfig(votes=0.0)) == ["comment:a", "comment:b"]  # closer wins
    assert ranked(ScoringConfig(votes=0.5)) == ["comment:b", "comment:a"]  # voted up wins


def test_the_weights_come_from_the_environment_to_the_local_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CROWDSIFT_SCORE_VOTES", "0.5")
    monkeypatch.setenv("CROWDSIFT_SCORE_MAX_AGREE", "1")
    scoring = SynthesisConfig.from_settings(load_settings()).scoring
    assert (scoring.votes, scoring.max_agree, scoring.relevance) == (0.5, 1, 0.55)


def test_a_weight_out_of_range_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CROWDSIFT_SCORE_LEXICAL", "7")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert str(raised.value).startswith("CROWDSIFT_SCORE_LEXICAL='7': ")
