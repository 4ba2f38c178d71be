"""RedditFetcher: SearchPlan → FetchResult over any RedditSource.

Three steps, so that concurrency never changes the answer:
1. every search of the plan (``reddit.queries.search_calls``) is paginated, with bounded
   concurrency (I/O);
2. the raw posts are screened **in plan order** by the pure filtering layer
   (``reddit.queries.screen_replies``: veto → clean → score → filter → dedupe), so counts are
   exactly those of a strictly sequential fetch;
3. comments of accepted posts are fetched (bounded concurrency) and filtered, persisted to the
   comment store, and nested into each Post from those same records.

A 403/404 subreddit is skipped with its reason; a query or thread that fails for good is
recorded in the report and the rest of the plan continues; auth and config errors and an
unreachable source stop the fetch at once (nothing useful can follow them).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from crowdsift.core.config import SearchSort, Settings, TimeFilter
from crowdsift.core.errors import (
    AuthError,
    ConfigError,
    SourceError,
    SourceUnreachableError,
    SubredditUnavailableError,
)
from crowdsift.core.log import get_logger
from crowdsift.core.models import Candidate, Comment, FetchReport, FetchResult, Post, SearchPlan
from crowdsift.core.since import covering_window
from crowdsift.core.source import LISTS_BY_DATE, RawThing, RedditSource, SearchesByMeaning
from crowdsift.core.store import CommentStore
from crowdsift.core.text import utc_now
from crowdsift.pipeline.fetch.filtering import FilterConfig, filter_comments
from crowdsift.pipeline.fetch.queries import (
    SearchCall,
    SearchReply,
    screen_replies,
    search_calls,
)
from crowdsift.sources.reddit.pagination import Walk, paginate_search

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


@dataclass(frozen=True)
class SearchOutcome:
    """Screened candidates (no comments yet) in first-found order, and the report so far."""

    candidates: list[Candidate]
    report: FetchReport
    duplicates_removed: int = 0
    searches: int = 0
    failed_searches: int = 0
    """Searches that failed and found nothing (all of them failing is a failed source)."""


def _walk_key(call: SearchCall) -> tuple[object, ...]:
    """A search without its size: the refetch asks the same one with a larger cap."""
    return (call.subreddit, call.term, call.sort, call.time_filter, call.strategy, call.since)


@dataclass
class _Walked:
    """The posts one search read and where its walk stopped."""

    posts: list[RawThing]
    walk: Walk

    def resumes(self, cap: int) -> bool:
        """Whether a walk to ``cap`` can start from this one: it ended, or stopped cleanly at
        a page boundary (``Walk.after``) short of ``cap``."""
        return self.walk.complete or len(self.posts) >= cap or self.walk.after is not None


@dataclass
class _Thread:
    screened: Post
    raw_comments: list[RawThing] = field(default_factory=list)
    error: str | None = None


class RedditFetcher:
    """Runs a SearchPlan against one source through the filtering layer.

    The one search-and-screen engine: ``crowdsift fetch``, ``POST /api/fetch``, the MCP
    ``fetch`` tool and ``crowdsift ask`` all search through ``search``; ``fetch`` adds the
    comments of every accepted post (seed 000), ``ask`` drills only the top threads instead.
    """

    def __init__(
        self,
        source: RedditSource,
        *,
        filters: FilterConfig | None = None,
        options: SearchOptions | None = None,
        store: CommentStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        title_similarity: float | None = None,
    ) -> None:
        """``title_similarity`` (rapidfuzz ratio) also folds near-duplicates — cross-posts,
        reposts, alike titles (seed 001's smart dedupe); None keeps seed 000's id-only dedupe."""
        self._source = source
        self._filters = filters or FilterConfig()
        self._options = options or SearchOptions()
        self._store = store
        self._clock = clock
        self._title_similarity = title_similarity
        self._walked: dict[tuple[object, ...], _Walked] = {}
        self._walked_plan: object = None

    @property
    def source(self) -> RedditSource:
        return self._source

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
        """Execute ``plan`` and nest each accepted post's comments; ``query`` (the user's
        question) defaults to the OR of its terms."""
        fetched_at = self._clock()
        self._walked.clear()  # a fetch reads afresh, whatever this fetcher searched before
        found = self.search(plan)
        report = found.report
        with ThreadPoolExecutor(max_workers=self._options.concurrency) as pool:
            threads = list(pool.map(self._run_comments, [c.post for c in found.candidates]))
        posts = self._build_posts(threads, fetched_at, report)
        self._count_requests(report)
        result = FetchResult(
            query=query if query is not None else " OR ".join(plan.search_terms),
            plan_id=plan.plan_id,
            search_terms=plan.search_terms,
            subreddits=plan.subreddits,
            fetched_at=fetched_at,
            posts=posts,
            since=plan.since,
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

    def search(self, plan: SearchPlan, *, scale: int = 1) -> SearchOutcome:
        """Run the plan's searches and screen them: veto → clean → score → filter → dedupe.

        ``scale`` multiplies every query's page (the relevance gate's refetch). Auth and config
        errors stop the search at once; a failed query is reported and the rest go on. Within
        one plan (its refetch, its widened form) a search already walked is continued, not
        repeated (``_run_search``); another plan starts afresh.
        """
        options = self._options
        if plan.plan_id != self._walked_plan:
            self._walked.clear()
            self._walked_plan = plan.plan_id
        log.info(
            "fetch_started", source=self._source.name, plan_id=str(plan.plan_id),
            subreddits=plan.subreddits, terms=plan.search_terms, queries=len(plan.queries),
        )  # fmt: skip
        window = covering_window(plan.since, self._clock()) if plan.since else None
        calls = search_calls(
            plan, self._source.name, sort=options.sort, time_filter=options.time_filter,
            cap=options.max_posts_per_query, scale=scale, window=window,
        )  # fmt: skip
        with ThreadPoolExecutor(max_workers=options.concurrency) as pool:
            replies = list(pool.map(self._run_search, calls))
        report = FetchReport(source=self._source.name)
        screened = screen_replies(
            replies, search_terms=plan.search_terms, filters=self._filters,
            source=self._source.name, fetched_at=self._clock(), report=report,
            title_similarity=self._title_similarity, since=plan.since,
        )  # fmt: skip
        self._count_requests(report)
        failed = sum(1 for r in replies if r.error is not None and not r.posts)
        return SearchOutcome(
            screened.candidates, report, screened.duplicates_removed, len(replies), failed
        )

    def _count_requests(self, report: FetchReport) -> None:
        stats = self._source.stats
        report.requests, report.retries, report.cache_hits = (
            stats.requests,
            stats.retries,
            stats.cache_hits,
        )

    # -- step 1: searches (I/O, concurrent) -------------------------------------------------
    def _run_search(self, call: SearchCall) -> SearchReply:
        """One call's pages. A call this fetcher already walked (the gate's refetch asks for
        the same searches with larger pages) keeps what it read and goes on from its cursor;
        a listing that had ended is not asked again. Same posts, half the reads."""
        reply = SearchReply(call)
        if call.strategy == "meaning":
            return self._run_meaning(call)
        key = _walk_key(call)
        earlier = self._walked.pop(key, None)
        after = None
        if earlier is not None and earlier.resumes(call.cap):
            reply.posts = list(earlier.posts[: call.cap])
            if earlier.walk.complete or len(reply.posts) >= call.cap:
                self._walked[key] = earlier
                return reply
            after = earlier.walk.after
        walk = Walk()
        try:
            for raw in paginate_search(
                self._source, call.subreddit, call.term, sort=call.sort,
                time_filter=call.time_filter, page_size=self._page_size(call),
                cap=call.cap - len(reply.posts), since=call.since, after=after, walk=walk,
            ):  # fmt: skip
                reply.posts.append(raw)
        except SubredditUnavailableError as exc:
            if "+" not in call.subreddit:
                reply.skipped[call.subreddit] = exc.reason
                return reply
            return self._run_members(call)  # one banned member spoils a multireddit
        except (AuthError, ConfigError, SourceUnreachableError):
            raise
        except SourceError as exc:  # keep what was fetched before the failure
            reply.error = f"search r/{call.subreddit} {call.term!r}: {exc}"
            return reply
        self._walked[key] = _Walked(reply.posts, walk)
        return reply

    def _run_meaning(self, call: SearchCall) -> SearchReply:
        """A search by meaning: one ranked page from a source that can (none from another)."""
        reply = SearchReply(call)
        if not isinstance(self._source, SearchesByMeaning):
            return reply
        try:
            page = self._source.search_meaning(
                call.subreddit, call.term, time_filter=call.time_filter, limit=call.cap,
                since=call.since,
            )  # fmt: skip
        except SubredditUnavailableError as exc:
            reply.skipped[call.subreddit] = exc.reason
            return reply
        except (AuthError, ConfigError, SourceUnreachableError):
            raise
        except SourceError as exc:
            reply.error = f"search r/{call.subreddit} by meaning: {exc}"
            return reply
        reply.posts = list(page.posts)
        return reply

    def _page_size(self, call: SearchCall) -> int:
        """Pages of ``CROWDSIFT_PAGE_SIZE``; a source whose requests are few and slow (it lists
        by date) is asked for the whole call at once, up to the 100 a page can hold."""
        if self._source.name in LISTS_BY_DATE:
            return min(call.cap, 100)
        return min(self._options.page_size, call.cap)

    def _run_members(self, call: SearchCall) -> SearchReply:
        merged = SearchReply(call)
        for name in call.subreddit.split("+"):
            reply = self._run_search(replace(call, subreddit=name))
            merged.posts += reply.posts
            merged.skipped.update(reply.skipped)
            if reply.error:
                merged.error = f"{merged.error}; {reply.error}" if merged.error else reply.error
        return merged

    # -- step 3: comments (I/O concurrent, filtering pure) ------------------------------------
    def _run_comments(self, screened: Post) -> _Thread:
        thread = _Thread(screened)
        if self._options.max_comments_per_post == 0:
            return thread
        try:
            thread.raw_comments = self._source.fetch_post_comments(screened.id, limit=100)
        except AuthError:
            raise
        except SourceError as exc:
            thread.error = f"comments of {screened.id}: {exc}"
        return thread

    def _build_posts(
        self, threads: list[_Thread], fetched_at: datetime, report: FetchReport
    ) -> list[Post]:
        nested: list[tuple[Post, list[Comment]]] = []
        for thread in threads:
            if thread.error is not None:
                log.error("comments_failed", error=thread.error)
                report.errors.append(thread.error)
            comments, rejections = filter_comments(
                thread.screened.id,
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
                    post_id=thread.screened.id,
                    comment_id=rejection.item_id,
                    reason=rejection.reason.value,
                )
            report.comments_seen += len(thread.raw_comments)
            report.comments_accepted += len(comments)
            log.info(
                "comments_filtered",
                post_id=thread.screened.id,
                fetched=len(thread.raw_comments),
                accepted=len(comments),
            )
            nested.append((thread.screened, comments))
        if self._store is not None:
            self._store.upsert(comment for _, comments in nested for comment in comments)
        return [
            post.model_copy(update={"comments": comments, "fetched_at": fetched_at})
            for post, comments in nested
        ]
