"""The models every stage passes along: SearchPlan in, FetchResult out.

Field names follow the RedditFetcher seed exactly (``post_karma``, ``comment_id``,
``comment_karma``); ``Post`` adds only the four fields DESIGN.md allows (``subreddit``,
``created_at``, ``num_comments``, ``author_hash``). ``model_json_schema()`` of these classes is
the contract other tools read (``crowdsift schema``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from crowdsift.core.config import SearchSort, SourceName, TimeFilter
from crowdsift.core.since import Since

SUBREDDIT_RE = re.compile(r"^[a-z0-9][a-z0-9_]{1,20}$")
HISTORIC_SUBREDDITS = frozenset({"reddit.com"})
"""Names today's rule refuses that Reddit and the dumps really contain: r/reddit.com, the site's
first subreddit (2005-2011), holds years of threads in every Pushshift/Arctic Shift dump."""
SUBREDDIT_NAME = r"(?:[A-Za-z0-9_]+|(?i:reddit\.com))"
"""A subreddit name inside a URL path pattern: today's characters, or a historic name."""
PERMALINK_RE = re.compile(rf"^https://www\.reddit\.com/r/{SUBREDDIT_NAME}/comments/[a-z0-9]+/")


def normalise_subreddit(name: str) -> str:
    """'/r/HomeImprovement/' and 'r/homeimprovement' both become 'homeimprovement'; a historic
    name (``reddit.com``) is accepted as it is."""
    cleaned = name.strip().strip("/")
    cleaned = re.sub(r"^(?:r/)", "", cleaned, flags=re.IGNORECASE).strip().lower()
    if cleaned not in HISTORIC_SUBREDDITS and not SUBREDDIT_RE.fullmatch(cleaned):
        raise ValueError(f"{name!r} is not a subreddit name (2-21 letters, digits or underscores)")
    return cleaned


def _aware(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC, so every timestamp we emit is comparable."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
# Counts and karma are 64-bit everywhere they are stored (SQL BIGINT, Chroma metadata).
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
MetadataValue = str | int | float | bool


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, str_strip_whitespace=False)


Strategy = Literal["targeted", "ai_intent", "sniper", "timeless", "meaning"]
"""The four search strategies of seed 001 (AI Scout v3) a planned query carries, and the search
by meaning of a source that holds vectors (an archive: its term is the question itself)."""
STRATEGIES: tuple[Strategy, ...] = ("targeted", "ai_intent", "sniper", "timeless", "meaning")


class PlanQuery(_Model):
    """One search of a plan: a term across ``subreddits`` with its own sort and time filter.

    The fetcher carries it out as the source allows (Reddit's API searches ``r/a+b+c`` with
    ``OR`` in one request, the archive one subreddit at a time, Arctic Shift one ``OR`` part at a
    time). ``limit`` is the first page; a relevance refetch asks for twice as many.
    """

    strategy: Strategy
    term: str = Field(min_length=1)
    subreddits: list[str] = Field(min_length=1)
    sort: SearchSort = "relevance"
    time_filter: TimeFilter = "all"
    limit: int = Field(25, ge=1, le=100)
    since: Since = Field(
        None,
        description="this query's own lower bound on created_utc: a topic window counted back "
        "from the newest post the source holds (an archive of last year's threads has a "
        "'last month' of its own); the plan's since, when set, wins",
    )


class SearchPlan(_Model):
    """What to search: the formulation's output and the fetcher's input.

    Seed 000's plan is ``search_terms`` × ``subreddits`` with one sort and time filter for all
    (``crowdsift fetch`` with a plan file). A plan made by ``crowdsift ask`` also lists its
    ``queries``, each carrying its seed-001 strategy, sort and time filter; when present the
    fetcher runs those instead of the cross product.
    """

    plan_id: UUID = Field(default_factory=uuid4)
    search_terms: list[str] = Field(min_length=1, max_length=50)
    subreddits: list[str] = Field(min_length=1, max_length=50)
    notes: str | None = None
    queries: list[PlanQuery] = Field(default_factory=list, max_length=50)
    since: Since = Field(
        None,
        description="only posts created at or after this moment (--since: 30d, 12h, 2w, "
        "2026-01-01 or an ISO datetime); every query's time filter then covers it",
    )

    @field_validator("search_terms")
    @classmethod
    def _terms(cls, terms: list[str]) -> list[str]:
        cleaned = _unique(term.strip() for term in terms if term.strip())
        if not cleaned:
            raise ValueError("search_terms must contain at least one non-blank term")
        return cleaned

    @field_validator("subreddits")
    @classmethod
    def _subreddits(cls, names: list[str]) -> list[str]:
        return _unique(normalise_subreddit(name) for name in names)


class Comment(_Model):
    """One approved comment: the standalone store record, also nested in ``Post.comments``."""

    comment_id: str = Field(min_length=1)
    post_id: str = Field(min_length=1)
    body: str
    comment_karma: Int64
    source: SourceName
    fetched_at: AwareDatetime


class Post(_Model):
    """One approved Reddit submission with its approved top-level comments."""

    id: str = Field(min_length=1)
    title: str
    selftext: str
    post_karma: Int64
    relevance_score: float = Field(ge=0.0, le=1.0)
    matched_keywords: list[str] = Field(default_factory=list)
    url: str = Field(
        description="Full permalink https://www.reddit.com/r/<sub>/comments/<id>/<slug>/"
    )
    comments: list[Comment] = Field(default_factory=list)
    fetched_at: AwareDatetime
    source: SourceName
    subreddit: str
    created_at: AwareDatetime | None = None
    num_comments: int = Field(0, ge=0, le=2**63 - 1)
    author_hash: str | None = None

    @field_validator("url")
    @classmethod
    def _permalink(cls, url: str) -> str:
        if not PERMALINK_RE.match(url):
            raise ValueError(f"url must be a full Reddit permalink, got {url!r}")
        return url

    @property
    def text(self) -> str:
        """What gets embedded and shown in feeds: the title, a blank line, the body."""
        return f"{self.title}\n\n{self.selftext}" if self.selftext else self.title

    def to_metadata(self) -> dict[str, MetadataValue]:
        """Flat scalar metadata (Chroma's format) that ``from_metadata`` turns back into an equal
        Post. Lists and comments travel as JSON strings; datetimes as ISO strings, plus
        ``created_utc`` (epoch seconds) so stores can filter by age; absent optionals are omitted
        because Chroma has no null. ``relevance_score`` is also kept as its exact ``repr``:
        Chroma 1.5 can lose the last digit of a float (2**-24 comes back 1 ulp off)."""
        metadata: dict[str, MetadataValue] = {
            "schema": METADATA_SCHEMA,
            "id": self.id,
            "title": self.title,
            "selftext": self.selftext,
            "post_karma": self.post_karma,
            "relevance_score": self.relevance_score,
            "relevance_score_exact": repr(self.relevance_score),
            "matched_keywords": json.dumps(self.matched_keywords, ensure_ascii=False),
            "url": self.url,
            "comments": json.dumps(
                [c.model_dump(mode="json") for c in self.comments], ensure_ascii=False
            ),
            "fetched_at": self.fetched_at.isoformat(),
            "source": self.source,
            "subreddit": self.subreddit,
            "num_comments": self.num_comments,
        }
        if self.created_at is not None:
            metadata["created_at"] = self.created_at.isoformat()
            metadata["created_utc"] = int(self.created_at.timestamp())
        if self.author_hash is not None:
            metadata["author_hash"] = self.author_hash
        return metadata

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Post:
        """The inverse of ``to_metadata``; keys it does not know (a store's own) are ignored.

        Raises ``ValueError`` (pydantic's ``ValidationError``) when the metadata is not a Post.
        """
        if metadata.get("schema") != METADATA_SCHEMA:
            raise ValueError(
                f"metadata schema {metadata.get('schema')!r} is not {METADATA_SCHEMA}: "
                "re-index the posts with this version of crowdsift"
            )
        data = {key: metadata[key] for key in _POST_FIELDS if key in metadata}
        if isinstance(metadata.get("relevance_score_exact"), str):
            data["relevance_score"] = float(metadata["relevance_score_exact"])
        for key in ("matched_keywords", "comments"):
            if isinstance(data.get(key), str):
                data[key] = json.loads(data[key])
        return cls.model_validate(data)


METADATA_SCHEMA = 1
_POST_FIELDS = tuple(Post.model_fields)


class Candidate(_Model):
    """A screened post a search found, with every strategy that found it (no comments yet:
    the drill adds them for the top posts only)."""

    post: Post
    strategies: list[Strategy] = Field(default_factory=list)
    link_url: str | None = Field(
        None, description="the external URL a link post points to (None for self posts)"
    )
    duplicates: list[str] = Field(
        default_factory=list, description="ids of cross-posts/reposts folded into this one"
    )
    engagement_known: bool = Field(
        True,
        description="false when the post's votes and comment count are a source's placeholders "
        "(Arctic Shift before its second retrieval): rankers treat them as unknown",
    )
    retrieval: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="where the searches ranked it, fused across the plan's relevance-sorted "
        "searches by reciprocal rank (1.0 = the best fused rank of the set; 0.0 = found only "
        "by a search sorted by date or votes)",
    )

    @property
    def engagement(self) -> int:
        """Raw engagement: votes plus comments (never negative)."""
        return max(self.post.post_karma, 0) + max(self.post.num_comments, 0)


SourceState = Literal[
    "ok", "empty", "unreachable", "rate_limited", "auth_failed", "not_configured", "skipped"
]
"""What one Reddit source did in a run: answered with posts (``ok``) or without (``empty``,
not a failure), failed (``unreachable``, ``rate_limited``, ``auth_failed``), could not be
used (``not_configured``), or was not needed (``skipped``)."""
FAILED_STATES: frozenset[str] = frozenset({"unreachable", "rate_limited", "auth_failed"})


class SourceStatus(_Model):
    """One source of a run's chain (``--source auto`` tries several): did it answer, and how.

    ``source_status`` lists one per source, in the order they were tried, so a result always
    says which source answered and why the others did not.
    """

    source: SourceName
    status: SourceState
    detail: str = Field("", description="what happened, and what to do when it failed")
    requests: int = Field(0, ge=0, description="requests sent to it (archive: queries run)")

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATES

    def line(self) -> str:
        """One plain line for stderr and the web page: ``arctic-shift unreachable: …``."""
        what = f"{self.source} {self.status.replace('_', ' ')}"
        return f"{what}: {self.detail}" if self.detail else what


class FetchResult(_Model):
    """The fetcher's output: approved posts for one plan. (No ``notes``: the seed removed it.)"""

    query: str
    plan_id: UUID
    search_terms: list[str]
    subreddits: list[str]
    fetched_at: AwareDatetime
    posts: list[Post] = Field(default_factory=list)
    since: AwareDatetime | None = Field(
        None, description="the plan's --since bound: no post here was created before it"
    )
    sample_data: bool = Field(
        False,
        description="true when the bundled demo archive answered: sample data written by the "
        "crowdsift project, not real Reddit content",
    )
    source_status: list[SourceStatus] = Field(
        default_factory=list,
        description="each Reddit source tried, in order: ok | empty | unreachable | "
        "rate_limited | auth_failed | not_configured | skipped, with detail and requests",
    )


class RejectReason(StrEnum):
    """Why the filtering layer dropped a post or a comment (logged and counted)."""

    DELETED_OR_REMOVED = "deleted_or_removed"
    METADATA_VETO = "metadata_veto"
    NSFW_OR_AD = "nsfw_or_ad"
    BELOW_THRESHOLD = "below_threshold"
    TOO_SHORT = "too_short"
    DUPLICATE = "duplicate"
    TOO_OLD = "too_old"
    """Created before the plan's ``since`` (or undated while ``since`` is set)."""


class FetchReport(_Model):
    """What happened during one fetch, returned beside the FetchResult and printed by the CLI."""

    source: SourceName
    posts_seen: int = 0
    posts_accepted: int = 0
    post_rejections: dict[RejectReason, int] = Field(default_factory=dict)
    comments_seen: int = 0
    comments_accepted: int = 0
    comment_rejections: dict[RejectReason, int] = Field(default_factory=dict)
    skipped_subreddits: dict[str, str] = Field(
        default_factory=dict, description="subreddit -> why it was skipped (403/404)"
    )
    errors: list[str] = Field(
        default_factory=list, description="queries or threads that failed for good"
    )
    requests: int = 0
    retries: int = 0
    cache_hits: int = Field(0, description="requests answered from the response cache")
    full_queries: int = Field(
        0, description="searches that returned as many posts as their cap (more may exist)"
    )

    def count_post(self, reason: RejectReason) -> None:
        self.post_rejections[reason] = self.post_rejections.get(reason, 0) + 1

    def count_comment(self, reason: RejectReason) -> None:
        self.comment_rejections[reason] = self.comment_rejections.get(reason, 0) + 1


def _unique(items: Iterable[str]) -> list[str]:
    """Drop repeats, keep first-seen order (plan order decides fetch order)."""
    return list(dict.fromkeys(items))


SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "SearchPlan": SearchPlan,
    "Post": Post,
    "Comment": Comment,
    "FetchResult": FetchResult,
    "FetchReport": FetchReport,
    "SourceStatus": SourceStatus,
}
