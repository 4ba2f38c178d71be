"""The local engine's claim scorer's weights: the settings section ``scoring``, each weight one
``CROWDSIFT_SCORE_*`` variable.

One scorer (``crowdsift.pipeline.synthesis.claim_scores``) ranks every claim the extractive
engine may quote:

    score = relevance · cosine(question, claim) + centrality · mean cosine to the other claims
          + lexical · share of the question's words it holds (weighted by rarity) − penalty
          + votes · log votes / log best votes (a post's body: half) − downvoted (below zero)
          + agree · threads saying it beyond the first (at most max_agree; ×1.5 for a
            question with no intent-specific bonus)
          + what the intent asks for: instruction, fix (fix_how_to in a how-to), decision
            (comparison), stance (+ both_options) on the compared options, pivot (a move the
            question asks about)

The defaults were set on the bundled demo archive and checked on real Reddit dumps; change
them to tune the engine to other text, and measure with ``crowdsift eval``.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from crowdsift.core.config.env_source import DocumentedSettings


def _weight(default: float, name: str, field: str, description: str, most: float = 1.0) -> float:
    return Field(
        default, ge=0.0, le=most, description=description,
        validation_alias=AliasChoices(f"CROWDSIFT_SCORE_{name}", field),
    )  # fmt: skip


class ScoringConfig(DocumentedSettings):
    """Construct directly in tests (field names); ``ScoringConfig()`` reads the environment."""

    model_config = SettingsConfigDict(
        env_file=None, extra="forbid", populate_by_name=True, case_sensitive=False, frozen=True
    )

    relevance: float = _weight(0.55, "RELEVANCE", "relevance", "cosine to the question")
    centrality: float = _weight(0.20, "CENTRALITY", "centrality", "how many claims say it too")
    lexical: float = _weight(0.25, "LEXICAL", "lexical", "share of the question's words")
    votes: float = _weight(0.08, "VOTES", "votes", "its votes, log-scaled to the best-voted")
    downvoted: float = _weight(0.05, "DOWNVOTED", "downvoted", "lost by a reply voted below 0")
    agree: float = _weight(0.04, "AGREE", "agree", "per further thread that says the same")
    max_agree: int = Field(
        3, ge=0, le=20, validation_alias=AliasChoices("CROWDSIFT_SCORE_MAX_AGREE", "max_agree"),
        description="further threads that count as agreement",
    )  # fmt: skip
    agreement: float = _weight(
        0.8, "AGREEMENT", "agreement", "cosine at which another thread's claim says the same"
    )
    instruction: float = _weight(0.10, "INSTRUCTION", "instruction", "a step, in a how-to")
    fix: float = _weight(0.10, "FIX", "fix", "a fix, in a troubleshooting question")
    fix_how_to: float = _weight(0.03, "FIX_HOW_TO", "fix_how_to", "a fix, in a how-to")
    decision: float = _weight(0.08, "DECISION", "decision", "how to choose, in a comparison")
    stance: float = _weight(0.08, "STANCE", "stance", "a side taken on a compared option")
    both_options: float = _weight(0.04, "BOTH_OPTIONS", "both_options", "naming two options")
    pivot: float = _weight(0.10, "PIVOT", "pivot", "the move the question asks about")
