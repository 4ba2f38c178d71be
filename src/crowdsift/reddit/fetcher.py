"""RedditFetcher: SearchPlan → FetchResult over any RedditSource.

Three steps, so that concurrency never changes the answer:
1. every (subreddit, term) search is paginated, with bounded concurrency (I/O);
2. the raw posts are screened **in plan order** by the pure filtering layer, so dedupe and
   counts are exactly those of a strictly sequential fetch;
3. comments of accepted posts are fetched (bounded concurrency) and filtered, persisted to the
   comment store, and nested into each Post from those same records.

A 403/404 subreddit is skipped with its reason; a query or thread that fails for good is
recorded in the report and the rest of the plan continues; auth and config errors stop the
fetch at once (nothing useful can follow them).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.config import SearchSort, Settings, TimeFilter
from crowdsift.errors import AuthError, SourceError, SubredditUnavailableError
from crowdsift.log import get_logger
from crowdsift.models import Comment, FetchReport, FetchResult, Post, SearchPlan
from crowdsift.reddit.filtering import (
    FilterConfig,
    Rejection,
    ScreenedPost,
    build_post_model,
    filter_comments,
    screen_post,
)
from crowdsift.reddit.pagination import paginate_search
from crowdsift.reddit.sources.base import RawThing, RedditSource
from crowdsift.store import CommentStore

log = get_logger(__name__)


class SearchOptions(BaseModel):
    """How a plan is executed against a source (defaults from Settings)."""

    model_config = ConfigDict(frozen=True)

    sort: SearchSort = "relevance"
    time_filter: TimeFilter = "all"
    page_size: int = Field(25, ge=1, le=100)
    max_posts_per_query: int = Field(50, ge=1)
    max_comments_per_post: int = Field(20, ge=0)
    concurrency: int = Field(4, ge=1)

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchOptions:
        return cls(
            sort=settings.search_sort,
            time_filter=settings.search_time,
            page_size=settings.page_size,
            max_posts_per_query=settings.max_posts_per_query,
            max_comments_per_post=settings.max_comments_per_post,
            concurrency=settings.concurrency,
        )


@dataclass(frozen=True)
class FetchOutcome:
    """The FetchResult and, beside it, the report of everything rejected, skipped or failed."""

    result: FetchResult
    report: FetchReport


@dataclass
class _Search:
    subreddit: str
    term: str
    posts: list[RawThing] = field(default_factory=list)
    unavailable: str | None = None
    error: str | None = None


@dataclass
class _Thread:
    screened: ScreenedPost
    raw_comments: list[RawThing] = field(default_factory=list)
    error: str | None = None


def utc_now() -> datetime:
    return datetime.now(UTC)


class RedditFetcher:
    """Runs a SearchPlan against one source through the filtering layer."""

    def __init__(
        self,
        source: RedditSource,
        *,
        filters: FilterConfig | None = None,
        options: SearchOptions | None = None,
        store: CommentStore | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._source = source
        self._filters = filters or FilterConfig()
        self._options = options or SearchOptions()
        self._store = store
        self._clock = clock

    @classmethod
    def from_settings(
        cls,
        source: RedditSource,
        settings: Settings,
        *,
        store: CommentStore | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> RedditFetcher:
        return cls(
            source,
            filters=FilterConfig.from_settings(settings),
            options=SearchOptions.from_settings(settings),
            store=store,
            clock=clock,
        )

    def fetch(self, plan: SearchPlan, *, query: str | None = None) -> FetchOutcome:
        """Execute ``plan``; ``query`` (the user's question) defaults to the OR of its terms."""
        fetched_at = self._clock()
        report = FetchReport(source=self._source.name)
        log.info(
            "fetch_started",
            source=self._source.name,
            plan_id=str(plan.plan_id),
            subreddits=plan.subreddits,
            terms=plan.search_terms,
        )
        jobs = [_Search(sub, term) for sub in plan.subreddits for term in plan.search_terms]
        with ThreadPoolExecutor(max_workers=self._options.concurrency) as pool:
            searches = list(pool.map(self._run_search, jobs))
            screened = self._screen(searches, plan, report)
            threads = list(pool.map(self._run_comments, screened))
        posts = self._build_posts(threads, fetched_at, report)
        report.requests = self._source.stats.requests
        report.retries = self._source.stats.retries
        report.cache_hits = self._source.stats.cache_hits
        result = FetchResult(
            query=query if query is not None else " OR ".join(plan.search_terms),
            plan_id=plan.plan_id,
            search_terms=plan.search_terms,
            subreddits=plan.subreddits,
            fetched_at=fetched_at,
            posts=posts,
        )
        log.info(
            "fetch_finished",
            source=self._source.name,
            posts_seen=report.posts_seen,
            posts_accepted=report.posts_accepted,
            comments_seen=report.comments_seen,
            comments_accepted=report.comments_accepted,
            skipped_subreddits=len(report.skipped_subreddits),
            errors=len(report.errors),
        )
        return FetchOutcome(result=result, report=report)

    # -- step 1: searches (I/O, concurrent) -------------------------------------------------
    def _run_search(self, job: _Search) -> _Search:
        options = self._options
        try:
            for raw in paginate_search(
                self._source,
                job.subreddit,
                job.term,
                sort=options.sort,
                time_filter=options.time_filter,
                page_size=options.page_size,
                cap=options.max_posts_per_query,
            ):
                job.posts.append(raw)
        except SubredditUnavailableError as exc:
            job.unavailable = exc.reason
        except AuthError:
            raise
        except SourceError as exc:  # keep what was fetched before the failure
            job.error = f"search r/{job.subreddit} {job.term!r}: {exc}"
        return job

    # -- step 2: screening (pure, sequential, plan order) ------------------------------------
    def _screen(
        self, searches: list[_Search], plan: SearchPlan, report: FetchReport
    ) -> list[ScreenedPost]:
        seen: set[str] = set()
        accepted: list[ScreenedPost] = []
        for search in searches:
            if search.unavailable is not None:
                if search.subreddit not in report.skipped_subreddits:
                    log.warning(
                        "subreddit_skipped", subreddit=search.subreddit, reason=search.unavailable
                    )
                report.skipped_subreddits[search.subreddit] = search.unavailable
            if search.error is not None:
                log.error("search_failed", error=search.error)
                report.errors.append(search.error)
            if len(search.posts) >= self._options.max_posts_per_query:
                report.full_queries += 1
            for raw in search.posts:
                report.posts_seen += 1
                decision = screen_post(
                    raw, search_terms=plan.search_terms, config=self._filters, seen_post_ids=seen
                )
                if isinstance(decision, Rejection):
                    report.count_post(decision.reason)
                    log.info(
                        "post_rejected",
                        post_id=decision.item_id,
                        reason=decision.reason.value,
                        score=decision.score,
                        subreddit=search.subreddit,
                        term=search.term,
                    )
                    continue
                log.debug(
                    "post_scored",
                    post_id=decision.post_id,
                    score=decision.relevance.relevance_score,
                    matched=decision.relevance.positive_keywords,
                    passed=True,
                )
                accepted.append(decision)
        report.posts_accepted = len(accepted)
        return accepted

    # -- step 3: comments (I/O concurrent, filtering pure) ------------------------------------
    def _run_comments(self, screened: ScreenedPost) -> _Thread:
        thread = _Thread(screened)
        if self._options.max_comments_per_post == 0:
            return thread
        try:
            thread.raw_comments = self._source.fetch_post_comments(screened.post_id, limit=100)
        except AuthError:
            raise
        except SourceError as exc:
            thread.error = f"comments of {screened.post_id}: {exc}"
        return thread

    def _build_posts(
        self, threads: list[_Thread], fetched_at: datetime, report: FetchReport
    ) -> list[Post]:
        nested: list[tuple[ScreenedPost, list[Comment]]] = []
        for thread in threads:
            if thread.error is not None:
                log.error("comments_failed", error=thread.error)
                report.errors.append(thread.error)
            comments, rejections = filter_comments(
                thread.screened.post_id,
                thread.raw_comments,
                config=self._filters,
                source=self._source.name,
                fetched_at=fetched_at,
            )
            comments = comments[: self._options.max_comments_per_post]
            for rejection in rejections:
                report.count_comment(rejection.reason)
                log.info(
                    "comment_rejected",
                    post_id=thread.screened.post_id,
                    comment_id=rejection.item_id,
                    reason=rejection.reason.value,
                )
            report.comments_seen += len(thread.raw_comments)
            report.comments_accepted += len(comments)
            log.info(
                "comments_filtered",
                post_id=thread.screened.post_id,
                fetched=len(thread.raw_comments),
                accepted=len(comments),
            )
            nested.append((thread.screened, comments))
        if self._store is not None:
            self._store.upsert(comment for _, comments in nested for comment in comments)
        return [
            build_post_model(screened, comments, source=self._source.name, fetched_at=fetched_at)
            for screened, comments in nested
        ]
