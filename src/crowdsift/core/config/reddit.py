"""The Reddit branch's section of the settings: seed 001's limits, each ``CROWDSIFT_REDDIT_*``.

Loaded once with the rest of the settings (``Settings.reddit``) and passed down. Every variable
keeps its older name as an alias: ``CROWDSIFT_SIDECAR_<NAME>`` sets what
``CROWDSIFT_REDDIT_<NAME>`` sets (the name wins when both are set). Search concurrency and page
size are the fetcher's (``CROWDSIFT_CONCURRENCY``, ``CROWDSIFT_PAGE_SIZE``) and the summary's
length the synthesis' (``CROWDSIFT_SUMMARY_CHAR_BUDGET``); their old ``CROWDSIFT_SIDECAR_*``
names still set them.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from crowdsift.core.config.env_source import DocumentedSettings


def _env(name: str, field: str) -> AliasChoices:
    """The documented variable, the older name it replaced (an alias), the field name."""
    return AliasChoices(f"CROWDSIFT_REDDIT_{name}", f"CROWDSIFT_SIDECAR_{name}", field)


class RedditConfig(DocumentedSettings):
    """Construct directly in tests (field names); ``RedditConfig()`` reads the environment.

    Unknown field names are an error (a typo must not silently keep a default)."""

    model_config = SettingsConfigDict(
        env_file=None, extra="forbid", populate_by_name=True, case_sensitive=False
    )

    timeout_s: float = Field(
        120.0, gt=0, le=3600, validation_alias=_env("TIMEOUT", "timeout_s"),
        description="bound on the Reddit answer; on expiry it returns what it has (partial)",
    )  # fmt: skip
    max_subreddits: int = Field(
        3, ge=1, le=10, validation_alias=_env("SUBREDDITS", "max_subreddits")
    )
    max_ai_queries: int = Field(
        3, ge=0, le=10, validation_alias=_env("AI_QUERIES", "max_ai_queries")
    )
    title_similarity: float = Field(
        90.0, ge=50, le=100, validation_alias=_env("TITLE_SIMILARITY", "title_similarity"),
        description="rapidfuzz token_sort_ratio at or above which two titles are one post",
    )  # fmt: skip
    rerank_top: int = Field(40, ge=1, le=200, validation_alias=_env("RERANK_TOP", "rerank_top"))
    relevance_weight: float = Field(
        0.8, ge=0, le=1, validation_alias=_env("RELEVANCE_WEIGHT", "relevance_weight")
    )
    drill_top: int = Field(15, ge=0, le=50, validation_alias=_env("DRILL_TOP", "drill_top"))
    dated_requests: int = Field(
        15, ge=3, le=200, validation_alias=_env("DATED_REQUESTS", "dated_requests"),
        description="requests one question may send to a source that lists by date (Arctic "
        "Shift, which sustains about 0.8 a second): probe, profiles, searches and comment "
        "trees together; the refetch is skipped and fewer threads drilled to stay within it",
    )  # fmt: skip
    drill_comments: int = Field(
        100, ge=1, le=500, validation_alias=_env("DRILL_COMMENTS", "drill_comments")
    )
    drill_depth: int = Field(5, ge=1, le=10, validation_alias=_env("DRILL_DEPTH", "drill_depth"))
    max_gems: int = Field(5, ge=0, le=20, validation_alias=_env("MAX_GEMS", "max_gems"))
    max_dissent: int = Field(3, ge=0, le=20, validation_alias=_env("MAX_DISSENT", "max_dissent"))
