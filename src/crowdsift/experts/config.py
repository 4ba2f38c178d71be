"""Experts Panel settings: the seed's limits and thresholds, each overridable from the environment.

The seed's own variable names are kept un-prefixed (``MAP_MAX_PARALLEL``,
``MEDIUM_SCORE_THRESHOLD``, ``MEDIUM_MAX_SELECTED_POSTS``); everything else of ours is
``CROWDSIFT_EXPERTS_*``. Models per phase stay in ``crowdsift.config`` (``MODEL_MAP`` ...).
"""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _env(name: str, field: str) -> AliasChoices:
    return AliasChoices(name, field)


class ExpertsConfig(BaseSettings):
    """Construct directly in tests (field names); ``ExpertsConfig()`` reads the environment."""

    model_config = SettingsConfigDict(
        env_file=None, extra="ignore", populate_by_name=True, case_sensitive=False
    )

    # --- Phase 1: map -------------------------------------------------------------------
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

    # --- Phase 2: medium scoring --------------------------------------------------------
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

    # --- Phase 4: reduce ------------------------------------------------------------------
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

    # --- Phases 6-7: comments -----------------------------------------------------------
    max_comments_per_section: int = Field(
        20,
        ge=1,
        validation_alias=_env("CROWDSIFT_EXPERTS_MAX_COMMENTS", "max_comments_per_section"),
    )
    max_drift_groups: int = Field(
        10, ge=0, validation_alias=_env("CROWDSIFT_EXPERTS_MAX_DRIFT_GROUPS", "max_drift_groups")
    )

    # --- Fields added by the phase modules go below, one block per module ------------------
