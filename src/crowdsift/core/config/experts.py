"""Experts Panel settings: the seed's limits and thresholds, each overridable from the environment.

The seed's own variable names are kept un-prefixed (``MAP_MAX_PARALLEL``,
``MEDIUM_SCORE_THRESHOLD``, ``MEDIUM_MAX_SELECTED_POSTS``); everything else of ours is
``CROWDSIFT_EXPERTS_*``. Models per phase stay in ``crowdsift.core.config`` (``MODEL_MAP`` ...).
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from crowdsift.core.config.env_source import DocumentedSettings


def _env(name: str, field: str) -> AliasChoices:
    return AliasChoices(name, field)


class ExpertsConfig(DocumentedSettings):
    """Construct directly in tests (field names); ``ExpertsConfig()`` reads the environment."""

    model_config = SettingsConfigDict(
        env_file=None, extra="forbid", populate_by_name=True, case_sensitive=False
    )

    # --- Map -------------------------------------------------------------------------
    map_chunk_size: int = Field(
        100,
        ge=1,
        le=1000,
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_CHUNK_SIZE", "map_chunk_size"),
    )
    map_max_parallel: int = Field(
        25, ge=1, le=200, validation_alias=_env("MAP_MAX_PARALLEL", "map_max_parallel")
    )
    map_rate_limit_sleep_s: float = Field(
        65.0,
        ge=0.0,
        validation_alias=_env("CROWDSIFT_EXPERTS_RATE_LIMIT_SLEEP", "map_rate_limit_sleep_s"),
    )
    map_max_retries: int = Field(
        3, ge=0, le=10, validation_alias=_env("CROWDSIFT_EXPERTS_MAP_RETRIES", "map_max_retries")
    )

    # --- Medium scoring --------------------------------------------------------------
    medium_max_posts: int = Field(
        50, ge=1, validation_alias=_env("CROWDSIFT_EXPERTS_MEDIUM_MAX_POSTS", "medium_max_posts")
    )
    medium_score_threshold: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        validation_alias=_env("MEDIUM_SCORE_THRESHOLD", "medium_score_threshold"),
    )
    medium_max_selected: int = Field(
        5, ge=0, validation_alias=_env("MEDIUM_MAX_SELECTED_POSTS", "medium_max_selected")
    )

    # --- Reduce ------------------------------------------------------------------------
    reduce_max_posts: int = Field(
        50, ge=1, validation_alias=_env("CROWDSIFT_EXPERTS_REDUCE_MAX_POSTS", "reduce_max_posts")
    )
    personal_style: bool = Field(
        True, validation_alias=_env("CROWDSIFT_EXPERTS_PERSONAL_STYLE", "personal_style")
    )

    # --- Recent-only ------------------------------------------------------------------------
    recent_days: int = Field(
        90, ge=1, validation_alias=_env("CROWDSIFT_EXPERTS_RECENT_DAYS", "recent_days")
    )

    # --- Comment groups and synthesis--------------------------------------------------------
    max_comments_per_section: int = Field(
        20,
        ge=1,
        validation_alias=_env("CROWDSIFT_EXPERTS_MAX_COMMENTS", "max_comments_per_section"),
    )
    max_drift_groups: int = Field(
        10, ge=0, validation_alias=_env("CROWDSIFT_EXPERTS_MAX_DRIFT_GROUPS", "max_drift_groups")
    )

    # --- Fields added by the phase modules go below, one block per module ------------------

    # --- Map to reduce (map.py, medium.py, reduce.py) -------------------------------------
    map_post_chars: int = Field(
        1200,
        ge=50,
        description="characters of each post shown to the map model (cut at a word boundary)",
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_POST_CHARS", "map_post_chars"),
    )
    map_backoff_s: float = Field(
        1.0,
        ge=0.0,
        description="first tenacity backoff of a failed map chunk; doubles per retry",
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_BACKOFF", "map_backoff_s"),
    )
    map_backoff_max_s: float = Field(
        30.0,
        ge=0.0,
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_BACKOFF_MAX", "map_backoff_max_s"),
    )
    map_local_high: float = Field(
        0.40,
        ge=-1.0,
        le=1.0,
        description="local engine: blended similarity (cosine + word overlap, map.py) for HIGH",
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_LOCAL_HIGH", "map_local_high"),
    )
    map_local_medium: float = Field(
        0.22,
        ge=-1.0,
        le=1.0,
        description="local engine: blended similarity for MEDIUM (below it: LOW)",
        validation_alias=_env("CROWDSIFT_EXPERTS_MAP_LOCAL_MEDIUM", "map_local_medium"),
    )
    reduce_post_chars: int = Field(
        2000,
        ge=50,
        description="characters of each context post shown to the reduce model",
        validation_alias=_env("CROWDSIFT_EXPERTS_REDUCE_POST_CHARS", "reduce_post_chars"),
    )
    reduce_local_chars: int = Field(
        1500,
        ge=100,
        description="local engine: character budget of the extractive answer's sentences",
        validation_alias=_env("CROWDSIFT_EXPERTS_REDUCE_LOCAL_CHARS", "reduce_local_chars"),
    )

    # --- Comments and drift (comments.py, synthesis.py, drift.py) ---------------------
    comment_min_words: int = Field(
        3,
        ge=0,
        description="community comments shorter than this ('+1', 'thanks') are not notes",
        validation_alias=_env("CROWDSIFT_EXPERTS_COMMENT_MIN_WORDS", "comment_min_words"),
    )
    comment_groups_max_candidates: int = Field(
        60,
        ge=1,
        description="newest drift groups shown to the comment-groups filter",
        validation_alias=_env(
            "CROWDSIFT_EXPERTS_COMMENT_GROUPS_CANDIDATES", "comment_groups_max_candidates"
        ),
    )
    comment_groups_threshold: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="local engine: question-to-group relevance a drift group needs",
        validation_alias=_env(
            "CROWDSIFT_EXPERTS_COMMENT_GROUPS_THRESHOLD", "comment_groups_threshold"
        ),
    )
    synthesis_local_items: int = Field(
        5,
        ge=1,
        description="local engine: comments quoted per section",
        validation_alias=_env("CROWDSIFT_EXPERTS_SYNTHESIS_ITEMS", "synthesis_local_items"),
    )
    synthesis_excerpt_chars: int = Field(
        280,
        ge=40,
        description="local engine: characters kept of each quoted comment",
        validation_alias=_env("CROWDSIFT_EXPERTS_SYNTHESIS_EXCERPT", "synthesis_excerpt_chars"),
    )
    drift_min_comments: int = Field(
        4,
        ge=2,
        description="posts with fewer comments are not analysed for drift",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_MIN_COMMENTS", "drift_min_comments"),
    )
    drift_max_comments: int = Field(
        150,
        ge=2,
        description="newest comments of a post given to the drift analysis",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_MAX_COMMENTS", "drift_max_comments"),
    )
    drift_min_words: int = Field(
        4,
        ge=1,
        description="local engine: shorter comments never start or join a drift group",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_MIN_WORDS", "drift_min_words"),
    )
    drift_post_similarity: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="local engine: comments less similar than this to their post drifted",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_POST_SIM", "drift_post_similarity"),
    )
    drift_cluster_similarity: float = Field(
        0.35,
        ge=-1.0,
        le=1.0,
        description="local engine: cosine to a group's centroid needed to join the group",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_CLUSTER_SIM", "drift_cluster_similarity"),
    )
    drift_max_groups_per_post: int = Field(
        5,
        ge=1,
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_MAX_GROUPS", "drift_max_groups_per_post"),
    )
    drift_max_parallel: int = Field(
        4,
        ge=1,
        le=100,
        description="posts analysed concurrently by `crowdsift experts drift`",
        validation_alias=_env("CROWDSIFT_EXPERTS_DRIFT_PARALLEL", "drift_max_parallel"),
    )
