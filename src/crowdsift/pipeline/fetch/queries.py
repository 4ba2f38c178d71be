"""A SearchPlan as requests, and the replies screened into candidates: the fetcher's pure half.

``search_calls`` turns a plan into the requests a source of a given kind can answer. A plan made
by ``crowdsift ask`` lists ``queries`` (each with its strategy, sort, time filter and page
size); Reddit's API and the local archive search a multireddit (``r/a+b+c``) with boolean ``OR``
in one request; Arctic Shift searches one subreddit at a time, an ``OR`` term whole (its full
text search is PostgreSQL's ``websearch_to_tsquery``, where ``OR`` alternates). A plan without
``queries`` (seed 000's, e.g. a plan file for ``crowdsift fetch``) is the cross product of its
subreddits and terms with the fetcher's own sort and time filter. A plan with ``since``
(``--since``) asks every call for the window covering it and hands each source the bound itself.

``screen_replies`` runs the filtering layer over the replies **in call order**, so candidates,
counts and which strategy is credited first never depend on timing: veto → clean → score →
filter, a post found again is one candidate crediting every strategy that found it (and counted
as a duplicate), and near-duplicates (cross-posts, reposts, alike titles) are folded last. With
``since``, a post created before it (or undated) is dropped first, counted ``too_old``: Reddit's
windows are coarse, and no source's older post may reach an answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from crowdsift.core.config import SearchSort, SourceName, TimeFilter
from crowdsift.core.log import get_logger
from crowdsift.core.models import Candidate, FetchReport, RejectReason, SearchPlan, Strategy
from crowdsift.core.since import is_before
from crowdsift.core.source import ENGAGEMENT_PENDING, RawThing
from crowdsift.pipeline.fetch.dedupe import dedupe
from crowdsift.pipeline.fetch.filtering import (
    FilterConfig,
    Rejection,
    build_post_model,
    raw_id,
    screen_post,
)

log = get_logger(__name__)


@dataclass(frozen=True)
class SearchCall:
    """One search: a subreddit (or ``a+b`` multireddit), a term, and how to ask for it."""

    subreddit: str
    term: str
    sort: SearchSort
    time_filter: TimeFilter
    cap: int
    strategy: Strategy | None = None
    since: datetime | None = None


@dataclass
class SearchReply:
    """What one call brought back (posts kept even when a later page failed)."""

    call: SearchCall
    posts: list[RawThing] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Screened:
    """Candidates in first-found order, and near-duplicates folded away."""

    candidates: list[Candidate]
    duplicates_removed: int = 0


def search_calls(
    plan: SearchPlan,
    source: SourceName,
    *,
    sort: SearchSort = "relevance",
    time_filter: TimeFilter = "all",
    cap: int = 50,
    scale: int = 1,
    window: TimeFilter | None = None,
) -> list[SearchCall]:
    """The requests that carry out ``plan`` on a source of this kind; ``scale`` multiplies
    every page (the relevance gate's 2× refetch); ``window`` (the one covering ``plan.since``)
    replaces every call's time filter."""
    since = plan.since
    if not plan.queries:
        return [
            SearchCall(sub, term, sort, window or time_filter, cap * scale, since=since)
            for sub in plan.subreddits
            for term in plan.search_terms
        ]
    calls: list[SearchCall] = []
    for query in plan.queries:
        limit = min(query.limit * scale, 100 * scale)
        if source in ("reddit-api", "archive"):
            subs = ["+".join(query.subreddits)]
        else:
            subs = query.subreddits
        terms = [query.term]
        bound = since if since is not None else query.since
        calls += [
            SearchCall(
                sub, term, query.sort, window or query.time_filter, limit, query.strategy, bound
            )
            for sub in subs
            for term in terms
        ]
    return calls


def screen_replies(
    replies: Sequence[SearchReply],
    *,
    search_terms: Sequence[str],
    filters: FilterConfig,
    source: SourceName,
    fetched_at: datetime,
    report: FetchReport,
    title_similarity: float | None = None,
    since: datetime | None = None,
) -> Screened:
    """Pure: replies (in call order) → candidates; counts land in ``report``.

    ``title_similarity`` None skips the near-duplicate fold (exact repeats are still one);
    ``since`` drops posts created before it (``too_old``)."""
    by_id: dict[str, Candidate] = {}
    rejected: set[str] = set()
    fused: dict[str, float] = {}
    for reply in replies:
        _note_reply(reply, report)
        ranked = reply.call.sort == "relevance"
        for position, raw in enumerate(reply.posts):
            report.posts_seen += 1
            post_id = raw_id(raw)
            if ranked:
                fused[post_id] = fused.get(post_id, 0.0) + 1.0 / (RRF_K + position + 1)
            strategy = reply.call.strategy
            if post_id in by_id:
                known = by_id[post_id]
                if strategy is not None and strategy not in known.strategies:
                    known.strategies.append(strategy)
                report.count_post(RejectReason.DUPLICATE)
                continue
            if post_id in rejected:
                report.count_post(RejectReason.DUPLICATE)
                continue
            candidate = _admitted(
                raw, post_id, reply.call, search_terms=search_terms, filters=filters,
                source=source, fetched_at=fetched_at, since=since, report=report,
            )  # fmt: skip
            if candidate is None:
                rejected.add(post_id)
            else:
                by_id[post_id] = candidate
    found = with_retrieval(list(by_id.values()), fused)
    if title_similarity is None:
        report.posts_accepted = len(found)
        return Screened(found)
    folded = dedupe(found, title_similarity=title_similarity)
    for _ in range(folded.removed):
        report.count_post(RejectReason.DUPLICATE)
    report.posts_accepted = len(folded.kept)
    return Screened(folded.kept, folded.removed)


def _admitted(
    raw: RawThing,
    post_id: str,
    call: SearchCall,
    *,
    search_terms: Sequence[str],
    filters: FilterConfig,
    source: SourceName,
    fetched_at: datetime,
    since: datetime | None,
    report: FetchReport,
) -> Candidate | None:
    """A post seen for the first time, as a candidate; None (counted and logged) when it is
    older than ``since`` or the filters reject it."""
    if since is not None and is_before(raw.get("created_utc"), since):
        report.count_post(RejectReason.TOO_OLD)
        log.info("post_rejected", post_id=post_id, reason=RejectReason.TOO_OLD.value)
        return None
    screened = screen_post(
        raw, search_terms=search_terms, config=filters, seen_post_ids=set(),
        by_meaning=call.strategy == "meaning",
    )  # fmt: skip
    if isinstance(screened, Rejection):
        report.count_post(screened.reason)
        log.info(
            "post_rejected", post_id=screened.item_id, reason=screened.reason.value,
            score=screened.score, subreddit=call.subreddit, term=call.term,
        )  # fmt: skip
        return None
    post = build_post_model(screened, [], source=source, fetched_at=fetched_at)
    return Candidate(
        post=post,
        strategies=[call.strategy] if call.strategy else [],
        link_url=_link_url(raw),
        engagement_known=not raw.get(ENGAGEMENT_PENDING),
    )


RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009): a thread ranked r-th by a search
earns 1 / (RRF_K + r) from it; the sum over searches orders the candidates, so a thread that
several searches rank high beats one a single search ranks first."""


def with_retrieval(candidates: list[Candidate], fused: dict[str, float]) -> list[Candidate]:
    """Each candidate with its fused rank (``Candidate.retrieval``), scaled so the best is 1."""
    top = max((fused.get(c.post.id, 0.0) for c in candidates), default=0.0)
    if top <= 0.0:
        return candidates
    return [
        c.model_copy(update={"retrieval": round(fused.get(c.post.id, 0.0) / top, 6)})
        for c in candidates
    ]


def _note_reply(reply: SearchReply, report: FetchReport) -> None:
    for subreddit, reason in reply.skipped.items():
        if subreddit not in report.skipped_subreddits:
            log.warning("subreddit_skipped", subreddit=subreddit, reason=reason)
        report.skipped_subreddits[subreddit] = reason
    if reply.error is not None:
        log.error("search_failed", error=reply.error)
        report.errors.append(reply.error)
    if len(reply.posts) >= reply.call.cap:
        report.full_queries += 1


def _link_url(raw: RawThing) -> str | None:
    """The external URL of a link post; self posts (and posts linking to themselves) have none."""
    if raw.get("is_self"):
        return None
    url = raw.get("url_overridden_by_dest") or raw.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    return url
