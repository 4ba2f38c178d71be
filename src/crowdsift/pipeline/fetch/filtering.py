"""The filtering layer: raw Reddit dicts in, approved Post and Comment models out (pure).

Order of operations is the seed's (sections 6 and 8): metadata veto → clean_text → relevance →
minimum body length → dedupe on post id; comments: veto → clean → minimum length → dedupe on
comment id. Nothing here performs I/O or reads a clock: callers pass ``fetched_at``, and the
fetcher logs and counts the decisions these functions return.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crowdsift.core.config import Settings, SourceName
from crowdsift.core.models import PERMALINK_RE, Comment, Post, RejectReason
from crowdsift.core.privacy import author_hash, load_salt
from crowdsift.core.source import RawThing
from crowdsift.core.text import clean_text
from crowdsift.pipeline.fetch.relevance import (
    RelevanceConfig,
    RelevanceResult,
    evaluate_post_relevance,
)
from crowdsift.sources.reddit.permalink import post_permalink, strip_fullname
from crowdsift.sources.reddit.validation import veto_comment, veto_post

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


class FilterConfig(BaseModel):
    """Thresholds of the filtering layer; ``from_settings`` maps the env-backed Settings."""

    model_config = ConfigDict(frozen=True)

    min_post_chars: int = Field(40, ge=0)
    min_comment_chars: int = Field(15, ge=0)
    relevance: RelevanceConfig = RelevanceConfig()
    author_salt: bytes | None = Field(
        None,
        repr=False,
        exclude=True,
        description="key of Post.author_hash (crowdsift.core.privacy); None: no pseudonyms at all",
    )

    @classmethod
    def from_settings(cls, settings: Settings) -> FilterConfig:
        """The settings' thresholds, and the salt (reads or creates ``<data dir>/author_salt``)."""
        return cls(
            min_post_chars=settings.min_post_chars,
            min_comment_chars=settings.min_comment_chars,
            relevance=RelevanceConfig(
                threshold=settings.relevance_threshold,
                negative_keywords=tuple(settings.negative_keywords),
            ),
            author_salt=load_salt(settings),
        )


@dataclass(frozen=True)
class ScreenedPost:
    """A raw submission that passed every post-level filter, cleaned and scored."""

    raw: RawThing
    post_id: str
    title: str
    body: str
    relevance: RelevanceResult
    author_hash: str | None = None


@dataclass(frozen=True)
class Rejection:
    """Why an item was dropped, with what the log line needs."""

    item_id: str
    reason: RejectReason
    score: float | None = None


def raw_id(raw: RawThing) -> str:
    """The bare base-36 id of a raw thing (``id`` preferred, else ``name`` without its kind)."""
    return strip_fullname(str(raw.get("id") or raw.get("name") or "")).strip()


def screen_post(
    raw: RawThing,
    *,
    search_terms: Iterable[str],
    config: FilterConfig,
    seen_post_ids: set[str],
    by_meaning: bool = False,
) -> ScreenedPost | Rejection:
    """Run one raw submission through veto → clean → score → length → dedupe.

    ``seen_post_ids`` is the run's dedupe memory; an accepted id is added to it (the one piece
    of state the seed asks for). Titles are never deduped: variations help synthesis.
    ``by_meaning``: a search by meaning found it, so its words may not be the question's; the
    lexical threshold does not apply (the relevance gate judges what it is about).
    """
    post_id = raw_id(raw)
    vetoed = veto_post(raw)
    if vetoed is None and post_url(raw) is None:
        vetoed = RejectReason.METADATA_VETO  # no canonical permalink: no Post, nothing to cite
    if vetoed is not None:
        return Rejection(post_id, vetoed)
    title = clean_text(raw.get("title") if isinstance(raw.get("title"), str) else "")
    body = clean_text(raw.get("selftext") if isinstance(raw.get("selftext"), str) else "")
    relevance = evaluate_post_relevance(
        post_id, title, body, search_terms=list(search_terms), config=config.relevance
    )
    # A link or image post's replies are its discussion: only a short post nobody answered is
    # too short to be evidence, and one that was answered is not judged on its title alone
    # (a search found it through its replies; the relevance gate reads them).
    discussion_only = len(body) < config.min_post_chars and as_int(raw.get("num_comments")) > 0
    if not relevance.passed and not discussion_only and not by_meaning:
        return Rejection(post_id, RejectReason.BELOW_THRESHOLD, relevance.relevance_score)
    if len(body) < config.min_post_chars and not discussion_only:
        return Rejection(post_id, RejectReason.TOO_SHORT, relevance.relevance_score)
    if not post_id or post_id in seen_post_ids:
        return Rejection(post_id, RejectReason.DUPLICATE, relevance.relevance_score)
    seen_post_ids.add(post_id)
    return ScreenedPost(raw, post_id, title, body, relevance, author_pseudonym(raw, config))


def filter_comments(
    post_id: str,
    raw_comments: Iterable[RawThing],
    *,
    config: FilterConfig,
    source: SourceName,
    fetched_at: datetime,
) -> tuple[list[Comment], list[Rejection]]:
    """Comments of one post: veto → clean → minimum length → dedupe on comment id.

    A comment whose ``link_id`` names another thread is dropped as a metadata veto: replies
    must never leak across threads, whatever a source returns.
    """
    accepted: list[Comment] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    for raw in raw_comments:
        comment_id = raw_id(raw)
        link = raw.get("link_id")
        if isinstance(link, str) and link and strip_fullname(link) != post_id:
            rejected.append(Rejection(comment_id, RejectReason.METADATA_VETO))
            continue
        vetoed = veto_comment(raw)
        if vetoed is not None:
            rejected.append(Rejection(comment_id, vetoed))
            continue
        body = clean_text(raw.get("body") if isinstance(raw.get("body"), str) else "")
        if len(body) < config.min_comment_chars:
            rejected.append(Rejection(comment_id, RejectReason.TOO_SHORT))
            continue
        if not comment_id or comment_id in seen:
            rejected.append(Rejection(comment_id, RejectReason.DUPLICATE))
            continue
        try:
            comment = Comment(
                comment_id=comment_id,
                post_id=post_id,
                body=body,
                comment_karma=as_int(raw.get("score")),
                source=source,
                fetched_at=fetched_at,
            )
        except ValidationError:  # an id no model takes (a lone surrogate): a broken record
            rejected.append(Rejection(comment_id, RejectReason.METADATA_VETO))
            continue
        seen.add(comment_id)
        accepted.append(comment)
    return accepted, rejected


def build_post_model(
    screened: ScreenedPost,
    comments: list[Comment],
    *,
    source: SourceName,
    fetched_at: datetime,
) -> Post:
    """The Post model for an accepted submission, comments nested as given (already approved)."""
    raw = screened.raw
    return Post(
        id=screened.post_id,
        title=screened.title,
        selftext=screened.body,
        post_karma=as_int(raw.get("score")),
        relevance_score=screened.relevance.relevance_score,
        matched_keywords=screened.relevance.positive_keywords,
        url=post_permalink(raw),
        comments=comments,
        fetched_at=fetched_at,
        source=source,
        subreddit=str(raw.get("subreddit") or "").strip().lower(),
        created_at=parse_created(raw.get("created_utc")),
        num_comments=max(as_int(raw.get("num_comments")), 0),
        author_hash=screened.author_hash or stored_pseudonym(raw),
    )


def post_url(raw: RawThing) -> str | None:
    """The canonical permalink a ``Post`` accepts for this raw submission, or None.

    None when the submission has no id or subreddit, or ones a permalink cannot carry, or the
    link would name another thread (an id like ``a/b``): a broken record from an archive or a
    misbehaving server is rejected, never allowed to fail the whole fetch later.
    """
    try:
        url = post_permalink(raw)
    except ValueError:  # no id or subreddit; also urlsplit on a malformed permalink
        return None
    subreddit = raw.get("subreddit")
    if not PERMALINK_RE.match(url) or (isinstance(subreddit, str) and _SURROGATE.search(subreddit)):
        return None
    post_id = raw_id(raw)
    linked = url.split("/")[6]  # https: / "" / host / r / sub / comments / ID
    return url if not post_id or linked == post_id.lower() else None


def as_int(value: object) -> int:
    """Karma and counts: ints, floats and numeric strings across dump eras; junk is 0.

    Clamped to 64 bits, the width every store keeps them in (and ``Int64`` validates).
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        number = value
    else:
        try:
            number = int(float(str(value)))
        except (TypeError, ValueError, OverflowError):
            return 0
    return min(max(number, INT64_MIN), INT64_MAX)


def parse_created(value: object) -> datetime | None:
    """``created_utc`` as int, float or string (dumps of different eras) → aware UTC datetime."""
    if value is None or isinstance(value, bool):
        return None
    try:
        seconds = float(str(value))
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def author_pseudonym(raw: RawThing, config: FilterConfig) -> str | None:
    """A stable pseudonym for an author: lets analysis group by person without storing names.

    The salted hash of ``crowdsift.core.privacy``: the one an archive already stored in place of the
    name, else the name hashed with ``config.author_salt``; None without either (an unsalted
    hash of a name is one dictionary lookup away from the name, so none is ever made).
    """
    stored = stored_pseudonym(raw)
    if stored is not None:
        return stored
    if config.author_salt is None:
        return None
    name = raw.get("author")
    return author_hash(name if isinstance(name, str) else None, config.author_salt)


def stored_pseudonym(raw: RawThing) -> str | None:
    """The ``author_hash`` an archive wrote into a record in place of its author's name."""
    value = raw.get("author_hash")
    return value if isinstance(value, str) and value else None
