"""Settings: every threshold, limit, URL and credential in one tree, read from the environment.

``Settings`` is the root; its flat fields are grouped by the comments below (sources, where
things live, privacy, transport, search, LLM, feeds, gate and synthesis, YouTube/Amazon,
service), and three larger groups are typed sections loaded with it: ``reddit``
(``RedditConfig``, the Reddit branch; ``sidecar``, its older name, still sets it), ``experts``
(``ExpertsConfig``, the Experts Panel) and
``scoring`` (``ScoringConfig``, the local engine's claim scorer).
The tree is read once (``get_settings``) and passed down; a research run takes its sections
from the ``Settings`` it is given, never from the environment again.

Names are the interface users and other tools rely on (docs/REFERENCE.md lists them all).
Reddit's and Arctic Shift's variables keep their conventional un-prefixed names; everything of
crowdsift's own is prefixed ``CROWDSIFT_``. A renamed or merged variable keeps its old name as
an alias. Secrets are ``SecretStr`` so they never print by accident.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from crowdsift.core.config.env_source import DocumentedSettings
from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.config.scoring import ScoringConfig

SourceName = Literal["reddit-api", "arctic-shift", "archive", "auto"]
"""``auto`` (the default) is the chain: reddit-api with credentials, else arctic-shift when it
answers, else the user's archive, else the bundled sample (``sources.reddit.chain``)."""
SearchSort = Literal["relevance", "new", "top", "hot", "comments"]
TimeFilter = Literal["hour", "day", "week", "month", "year", "all"]


def _env(name: str, *aliases: str) -> AliasChoices:
    """Accept the documented env var name, older names it replaced, and the python field name
    (for constructor use)."""
    return AliasChoices(name, *aliases, name.lower().removeprefix("crowdsift_"))


class Settings(DocumentedSettings):
    """crowdsift's configuration. Construct directly in tests; use get_settings() elsewhere."""

    model_config = SettingsConfigDict(
        env_file=None, extra="ignore", populate_by_name=True, case_sensitive=False
    )

    # --- Reddit OAuth API -------------------------------------------------------------
    reddit_client_id: str | None = Field(None, validation_alias=_env("REDDIT_CLIENT_ID"))
    reddit_client_secret: SecretStr | None = Field(
        None, validation_alias=_env("REDDIT_CLIENT_SECRET")
    )
    reddit_user_agent: str | None = Field(
        None,
        validation_alias=_env("REDDIT_USER_AGENT"),
        description="unset: built from REDDIT_USERNAME (Reddit wants "
        "'<platform>:<app id>:<version> (by /u/<username>)'); reddit-api only",
    )
    reddit_username: str | None = Field(None, validation_alias=_env("REDDIT_USERNAME"))
    reddit_password: SecretStr | None = Field(None, validation_alias=_env("REDDIT_PASSWORD"))
    reddit_api_base_url: str = Field(
        "https://oauth.reddit.com", validation_alias=_env("REDDIT_API_BASE_URL")
    )
    reddit_auth_url: str = Field(
        "https://www.reddit.com/api/v1/access_token", validation_alias=_env("REDDIT_AUTH_URL")
    )

    # --- Arctic Shift ---------------------------------------------------------------------
    arctic_shift_base_url: str = Field(
        "https://arctic-shift.photon-reddit.com", validation_alias=_env("ARCTIC_SHIFT_BASE_URL")
    )

    # --- Where things live ----------------------------------------------------------------
    home: Path | None = Field(None, validation_alias=_env("CROWDSIFT_HOME"))
    database_url: str | None = Field(None, validation_alias=_env("CROWDSIFT_DATABASE_URL"))
    archive_path: Path | None = Field(None, validation_alias=_env("CROWDSIFT_ARCHIVE"))
    source: SourceName = Field(
        "auto",
        validation_alias=_env("CROWDSIFT_SOURCE"),
        description="reddit-api | arctic-shift | archive | auto (each in turn, falling through "
        "on failure)",
    )
    log_level: str = Field(
        "WARNING",
        validation_alias=_env("CROWDSIFT_LOG_LEVEL"),
        description="structured log lines at this level and above on stderr; unset, the CLI "
        "prints each warning once as a plain line instead",
    )
    log_file: Path | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_LOG_FILE"),
        description="append the CLI's structured log lines here (INFO and above, or "
        "CROWDSIFT_LOG_LEVEL's); the terminal keeps plain warnings",
    )
    import_workers: int | None = Field(
        None,
        ge=0,
        le=64,
        validation_alias=_env("CROWDSIFT_IMPORT_WORKERS"),
        description="processes parsing big dumps in archive import; unset = one per spare "
        "core (at most 4), 0 = parse in the importing process",
    )

    # --- Privacy: usernames (crowdsift.core.privacy) ----------------------------------------------
    author_salt: SecretStr | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_AUTHOR_SALT"),
        description="key of the salted author hashes; unset = <data dir>/author_salt (random)",
    )
    keep_usernames: bool = Field(
        False,
        validation_alias=_env("CROWDSIFT_KEEP_USERNAMES"),
        description="also store Reddit/Telegram usernames next to their salted hashes",
    )

    # --- Transport ------------------------------------------------------------------------
    http_timeout: float = Field(10.0, gt=0, validation_alias=_env("CROWDSIFT_HTTP_TIMEOUT"))
    max_retries: int = Field(4, ge=0, le=10, validation_alias=_env("CROWDSIFT_MAX_RETRIES"))
    retry_budget: int = Field(
        40,
        ge=0,
        validation_alias=_env("CROWDSIFT_RETRY_BUDGET"),
        description="Retries allowed across one whole fetch before it gives up.",
    )
    max_retry_wait: float = Field(
        60.0,
        gt=0,
        validation_alias=_env("CROWDSIFT_MAX_RETRY_WAIT"),
        description=(
            "Longest single wait (s); a Retry-After asking for more fails the request at once "
            "instead of retrying sooner than the server said."
        ),
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=32,
        validation_alias=_env("CROWDSIFT_CONCURRENCY", "CROWDSIFT_SIDECAR_CONCURRENCY"),
        description="source requests in flight at once, for fetch and ask alike (the rate "
        "limiter still rules)",
    )

    # --- Search plan execution ------------------------------------------------------------
    search_sort: SearchSort = Field("relevance", validation_alias=_env("CROWDSIFT_SEARCH_SORT"))
    search_time: TimeFilter = Field("all", validation_alias=_env("CROWDSIFT_SEARCH_TIME"))
    page_size: int = Field(
        25,
        ge=1,
        le=100,
        validation_alias=_env("CROWDSIFT_PAGE_SIZE", "CROWDSIFT_SIDECAR_PAGE_SIZE"),
        description="results per search page; an ask's first page per query (the relevance "
        "gate's refetch asks for twice as many)",
    )
    max_posts_per_query: int = Field(
        50, ge=1, le=1000, validation_alias=_env("CROWDSIFT_MAX_POSTS_PER_QUERY")
    )
    max_comments_per_post: int = Field(
        20, ge=0, le=500, validation_alias=_env("CROWDSIFT_MAX_COMMENTS_PER_POST")
    )

    # --- Filtering ------------------------------------------------------------------------
    relevance_threshold: float = Field(
        0.2, ge=0, le=1, validation_alias=_env("CROWDSIFT_RELEVANCE_THRESHOLD")
    )
    min_post_chars: int = Field(40, ge=0, validation_alias=_env("CROWDSIFT_MIN_POST_CHARS"))
    min_comment_chars: int = Field(15, ge=0, validation_alias=_env("CROWDSIFT_MIN_COMMENT_CHARS"))
    negative_keywords: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_env("CROWDSIFT_NEGATIVE_KEYWORDS")
    )

    @field_validator("negative_keywords", "cors_origins", mode="before")
    @classmethod
    def _split_keywords(cls, value: object) -> object:
        """Accept "a,b,c" from the environment as well as a list from code."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator(
        "reddit_api_base_url",
        "reddit_auth_url",
        "arctic_shift_base_url",
        "youtube_api_base_url",
        "amazon_api_base_url",
    )
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    # --- Engines --------------------------------------------------------------------------
    engine: Literal["local", "openai"] | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_ENGINE"),
        description="default: openai when CROWDSIFT_LLM_API_KEY is set, else local",
    )
    llm_base_url: str = Field(
        "https://api.openai.com/v1", validation_alias=_env("CROWDSIFT_LLM_BASE_URL")
    )
    llm_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("CROWDSIFT_LLM_API_KEY", "llm_api_key")
    )
    llm_timeout: float = Field(60.0, gt=0, validation_alias=_env("CROWDSIFT_LLM_TIMEOUT"))
    llm_max_retries: int = Field(3, ge=0, le=10, validation_alias=_env("CROWDSIFT_LLM_MAX_RETRIES"))
    model_filter: str = Field(
        "gpt-4o-mini", validation_alias=AliasChoices("MODEL_FILTER", "model_filter")
    )
    model_synthesis: str = Field(
        "gpt-4o", validation_alias=AliasChoices("MODEL_SYNTHESIS", "model_synthesis")
    )
    model_analysis: str = Field(
        "gpt-4o-mini", validation_alias=AliasChoices("MODEL_ANALYSIS", "model_analysis")
    )
    model_map: str = Field("gpt-4o-mini", validation_alias=AliasChoices("MODEL_MAP", "model_map"))
    model_medium_scoring: str = Field(
        "gpt-4o-mini", validation_alias=AliasChoices("MODEL_MEDIUM_SCORING", "model_medium_scoring")
    )
    model_comment_groups: str = Field(
        "gpt-4o-mini", validation_alias=AliasChoices("MODEL_COMMENT_GROUPS", "model_comment_groups")
    )
    model_drift_analysis: str = Field(
        "gpt-4o-mini", validation_alias=AliasChoices("MODEL_DRIFT_ANALYSIS", "model_drift_analysis")
    )
    embedding_model: str | None = Field(None, validation_alias=_env("CROWDSIFT_EMBEDDING_MODEL"))
    embedding_runtime: Literal["auto", "onnx", "sentence-transformers"] = Field(
        "auto",
        validation_alias=_env("CROWDSIFT_EMBEDDING_RUNTIME"),
        description="auto (ONNX Runtime when the model was exported, else sentence-transformers), "
        "onnx (the export is required) or sentence-transformers",
    )
    embedding_download_url: str = Field(
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/"
        "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
        validation_alias=_env("CROWDSIFT_EMBEDDING_DOWNLOAD_URL"),
        description="where the core install downloads all-MiniLM-L6-v2's ONNX export from when "
        "no model folder is found (onnx/model.onnx and tokenizer.json, checked by SHA-256)",
    )

    # --- Feeds (Chroma) ---------------------------------------------------------------------
    chroma_url: str | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_CHROMA_URL"),
        description="http(s)://host:port of a Chroma server; unset = a local persistent store",
    )
    chroma_collection: str = Field(
        "crowdsift_posts",
        min_length=3,
        max_length=63,
        validation_alias=_env("CROWDSIFT_CHROMA_COLLECTION"),
    )
    feed_size: int = Field(5, ge=1, le=20, validation_alias=_env("CROWDSIFT_FEED_SIZE"))
    feed_embedder: Literal["minilm", "hashing"] = Field(
        "minilm",
        validation_alias=_env("CROWDSIFT_FEED_EMBEDDER"),
        description="minilm (all-MiniLM-L6-v2) or hashing (fast bag-of-words, for tests/bulk)",
    )

    # --- Relevance gate and synthesis --------------------------------------------------------
    gate_initial_limit: int = Field(
        5, ge=1, le=100, validation_alias=_env("CROWDSIFT_GATE_INITIAL_LIMIT")
    )
    gate_min_yield: float = Field(
        0.5, ge=0, le=1, validation_alias=_env("CROWDSIFT_GATE_MIN_YIELD")
    )
    summary_char_budget: int = Field(
        1200,
        ge=100,
        validation_alias=_env("CROWDSIFT_SUMMARY_CHAR_BUDGET", "CROWDSIFT_SIDECAR_SUMMARY_CHARS"),
    )
    max_highlights: int = Field(5, ge=0, le=20, validation_alias=_env("CROWDSIFT_MAX_HIGHLIGHTS"))
    max_cautions: int = Field(5, ge=0, le=20, validation_alias=_env("CROWDSIFT_MAX_CAUTIONS"))
    # The synthesis reads every drilled thread deeply: hidden gems and dissent live in comments.
    summary_max_posts: int = Field(
        15, ge=1, le=100, validation_alias=_env("CROWDSIFT_SUMMARY_MAX_POSTS")
    )
    summary_max_comments_per_post: int = Field(
        40, ge=0, le=100, validation_alias=_env("CROWDSIFT_SUMMARY_MAX_COMMENTS_PER_POST")
    )
    max_post_chars: int = Field(1500, ge=50, validation_alias=_env("CROWDSIFT_MAX_POST_CHARS"))
    max_comment_chars: int = Field(600, ge=30, validation_alias=_env("CROWDSIFT_MAX_COMMENT_CHARS"))
    min_evidence_posts: int = Field(3, ge=0, validation_alias=_env("CROWDSIFT_MIN_EVIDENCE_POSTS"))

    # --- YouTube and Amazon sources ------------------------------------------------------------
    youtube_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("YOUTUBE_API_KEY", "youtube_api_key"),
        description="YouTube Data API v3 key; unset = the YouTube source is skipped",
    )
    youtube_api_base_url: str = Field(
        "https://www.googleapis.com/youtube/v3",
        validation_alias=AliasChoices("YOUTUBE_API_BASE_URL", "youtube_api_base_url"),
    )
    amazon_credential_id: str | None = Field(
        None, validation_alias=AliasChoices("AMAZON_CREDENTIAL_ID", "amazon_credential_id")
    )
    amazon_credential_secret: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("AMAZON_CREDENTIAL_SECRET", "amazon_credential_secret"),
    )
    amazon_credential_version: str = Field(
        "2.1",
        validation_alias=AliasChoices("AMAZON_CREDENTIAL_VERSION", "amazon_credential_version"),
        description="Creators API credential version (2.x: Cognito tokens; 3.x: Login with Amazon)",
    )
    amazon_partner_tag: str | None = Field(
        None, validation_alias=AliasChoices("AMAZON_PARTNER_TAG", "amazon_partner_tag")
    )
    amazon_marketplace: str = Field(
        "www.amazon.com",
        validation_alias=AliasChoices("AMAZON_MARKETPLACE", "amazon_marketplace"),
    )
    amazon_api_base_url: str = Field(
        "https://creatorsapi.amazon",
        validation_alias=AliasChoices("AMAZON_API_BASE_URL", "amazon_api_base_url"),
    )
    amazon_auth_url: str | None = Field(
        None,
        validation_alias=AliasChoices("AMAZON_AUTH_URL", "amazon_auth_url"),
        description="token endpoint; unset = the one of AMAZON_CREDENTIAL_VERSION",
    )

    # --- Cost accounting --------------------------------------------------------------------
    price_table: Path | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_PRICE_TABLE"),
        description="YAML of USD prices per 1M tokens per model; unset = the bundled table",
    )
    budget_usd: float | None = Field(
        None,
        gt=0,
        validation_alias=_env("CROWDSIFT_BUDGET_USD"),
        description="stop further LLM calls once a run has cost this much (partial result)",
    )

    # --- Service: HTTP API, jobs, workers, response cache ------------------------------------
    api_key: SecretStr | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_API_KEY"),
        description="when set, every route but /healthz needs 'Authorization: Bearer <key>'",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        validation_alias=_env("CROWDSIFT_CORS_ORIGINS"),
        description="comma-separated origins allowed by CORS ('*' for any); empty = none",
    )
    job_workers: int = Field(
        2,
        ge=1,
        le=32,
        validation_alias=_env("CROWDSIFT_JOB_WORKERS"),
        description="research jobs run at once in the embedded (in-process) pool",
    )
    job_stale_after: float = Field(
        60.0,
        gt=0,
        validation_alias=_env("CROWDSIFT_JOB_STALE_AFTER"),
        description="seconds without a heartbeat before a running job counts as abandoned",
    )
    job_max_attempts: int = Field(
        2,
        ge=1,
        le=10,
        validation_alias=_env("CROWDSIFT_JOB_MAX_ATTEMPTS"),
        description="runs of one job (first + retries) before an abandoned job is marked failed",
    )
    broker_url: str | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_BROKER_URL"),
        description="redis://host:port/db: send research jobs to Celery workers",
    )
    worker_queue: str = Field(
        "crowdsift",
        min_length=1,
        validation_alias=_env("CROWDSIFT_WORKER_QUEUE"),
        description="the Celery queue research jobs go to",
    )
    cache_url: str | None = Field(
        None,
        validation_alias=_env("CROWDSIFT_CACHE_URL"),
        description="response cache: redis://… or sqlite:///path; unset = SQLite in the data dir",
    )
    cache_ttl: float = Field(
        3600.0,
        ge=0,
        validation_alias=_env("CROWDSIFT_CACHE_TTL"),
        description="seconds a cached Reddit/Arctic Shift response is reused; 0 turns it off",
    )

    # --- Sections (typed, loaded with the root) -------------------------------------------
    reddit: RedditConfig = Field(
        default_factory=RedditConfig,
        validation_alias=AliasChoices("reddit", "sidecar"),  # "sidecar": its older name
        description="the Reddit branch of ask: CROWDSIFT_REDDIT_* (formulate, rerank, drill)",
    )
    experts: ExpertsConfig = Field(
        default_factory=ExpertsConfig,
        validation_alias=AliasChoices("experts"),
        description="the Experts Panel: MAP_MAX_PARALLEL, MEDIUM_*, CROWDSIFT_EXPERTS_*",
    )
    scoring: ScoringConfig = Field(
        default_factory=ScoringConfig,
        validation_alias=AliasChoices("scoring"),
        description="the local engine's claim scorer: CROWDSIFT_SCORE_* weights",
    )

    def model_for(self, phase: str) -> str:
        """The model configured for an engine phase (MODEL_*; plan uses MODEL_ANALYSIS)."""
        name = {"plan": "analysis", "filter": "filter", "synthesis": "synthesis"}.get(phase, phase)
        model: str = getattr(self, f"model_{name}", self.model_analysis)
        return model

    # --- Derived locations ----------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """CROWDSIFT_HOME, else the platform's per-user data directory."""
        if self.home is not None:
            return self.home
        return Path(platformdirs.user_data_dir("crowdsift", appauthor=False))

    @property
    def chroma_dir(self) -> Path:
        """Where the local persistent Chroma store lives (unused with CROWDSIFT_CHROMA_URL)."""
        return self.data_dir / "chroma"

    @property
    def resolved_database_url(self) -> str:
        """CROWDSIFT_DATABASE_URL, else a SQLite file under the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'crowdsift.sqlite'}"

    @property
    def has_reddit_credentials(self) -> bool:
        return bool(self.reddit_client_id and self.reddit_client_secret)

    def secret_values(self) -> list[str]:
        """Every secret currently set, so logs and outputs can redact them."""
        secrets = [
            self.reddit_client_secret,
            self.reddit_password,
            self.llm_api_key,
            self.api_key,
            self.youtube_api_key,
            self.amazon_credential_secret,
            self.author_salt,
        ]
        values = [s.get_secret_value() for s in secrets if s is not None]
        return [v for v in values if len(v) >= 4]
