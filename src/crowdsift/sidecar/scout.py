"""Scout: run every strategy's queries against a Reddit source, screened by the filtering layer.

Each ``ScoutQuery`` spans several subreddits. How that becomes requests depends on what the
source can do (``search_calls``): Reddit's API searches a multireddit (``r/a+b+c``) with boolean
``OR`` in one request; the local archive understands ``OR`` but searches one subreddit at a
time; Arctic Shift has neither, so an ``OR`` term is split into its alternatives.

Requests run concurrently (``SourceRunner``), but screening happens afterwards **in query order**,
so the candidates — and which strategy is credited first — never depend on timing. A post found
by several strategies is one candidate crediting them all. Veto, cleaning, lexical relevance and
minimum length are the same pure filters ``crowdsift fetch`` uses.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from crowdsift.config import SourceName
from crowdsift.errors import AuthError, ConfigError, SourceError, SubredditUnavailableError
from crowdsift.log import get_logger
from crowdsift.models import RejectReason
from crowdsift.reddit.filtering import (
    FilterConfig,
    Rejection,
    build_post_model,
    raw_id,
    screen_post,
)
from crowdsift.reddit.sources.base import RawThing, RedditSource
from crowdsift.sidecar.models import Candidate, ScoutQuery
from crowdsift.sidecar.runner import SourceRunner

log = get_logger(__name__)

_OR = re.compile(r"\s+OR\s+")


@dataclass(frozen=True)
class SearchCall:
    """One request: a subreddit (or ``a+b`` multireddit) and a term, for one query."""

    query_index: int
    subreddit: str
    term: str


@dataclass
class ScoutOutcome:
    """Candidates in first-found order, and everything the report needs."""

    candidates: list[Candidate] = field(default_factory=list)
    posts_seen: int = 0
    rejections: dict[RejectReason, int] = field(default_factory=dict)
    skipped_subreddits: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    failed_requests: int = 0


def or_alternatives(term: str) -> list[str]:
    """``"voice recorder" OR plaud`` → ``["voice recorder", "plaud"]`` (quotes dropped)."""
    parts = [part.strip().strip('"').strip() for part in _OR.split(term)]
    return [part for part in dict.fromkeys(parts) if part]


def search_calls(queries: Sequence[ScoutQuery], source: SourceName) -> list[SearchCall]:
    """The requests that carry out ``queries`` on a source of this kind."""
    calls: list[SearchCall] = []
    for index, query in enumerate(queries):
        if source == "reddit-api":
            calls.append(SearchCall(index, "+".join(query.subreddits), query.term))
        elif source == "arctic-shift":
            calls += [
                SearchCall(index, subreddit, alternative)
                for subreddit in query.subreddits
                for alternative in or_alternatives(query.term)
            ]
        else:
            calls += [SearchCall(index, subreddit, query.term) for subreddit in query.subreddits]
    return calls


@dataclass
class _Reply:
    call: SearchCall
    posts: list[RawThing] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    requests: int = 1


async def scout(
    queries: Sequence[ScoutQuery],
    *,
    source: RedditSource,
    runner: SourceRunner,
    filters: FilterConfig,
    search_terms: Sequence[str],
    clock: Callable[[], datetime],
    on_reply: Callable[[int, int], None] = lambda done, total: None,
) -> ScoutOutcome:
    """Run ``queries`` and screen what they find. Auth/config errors stop the run at once."""
    calls = search_calls(queries, source.name)
    replies: list[_Reply | None] = [None] * len(calls)
    done = 0

    async def run(position: int, call: SearchCall) -> None:
        nonlocal done
        replies[position] = await _search(call, queries[call.query_index], source, runner)
        done += 1
        on_reply(done, len(calls))

    await asyncio.gather(*(run(i, call) for i, call in enumerate(calls)))
    return screen_replies(
        [r for r in replies if r is not None],
        queries,
        filters=filters,
        search_terms=search_terms,
        source=source.name,
        fetched_at=clock(),
    )


async def _search(
    call: SearchCall, query: ScoutQuery, source: RedditSource, runner: SourceRunner
) -> _Reply:
    reply = _Reply(call)
    try:
        page = await runner.call(
            source.search_subreddit,
            call.subreddit,
            call.term,
            sort=query.sort,
            time_filter=query.time_filter,
            limit=query.limit,
        )
        reply.posts = page.posts
    except SubredditUnavailableError as exc:
        if "+" not in call.subreddit:
            reply.skipped[call.subreddit] = exc.reason
            return reply
        # One private or banned member spoils a multireddit: ask its members one by one.
        return await _search_members(call, query, source, runner)
    except (AuthError, ConfigError):
        raise
    except SourceError as exc:
        reply.error = f"search r/{call.subreddit} for {call.term!r} failed: {exc}"
        log.warning("sidecar_search_failed", subreddit=call.subreddit, term=call.term)
    return reply


async def _search_members(
    call: SearchCall, query: ScoutQuery, source: RedditSource, runner: SourceRunner
) -> _Reply:
    merged = _Reply(call, requests=1)
    members = [SearchCall(call.query_index, name, call.term) for name in call.subreddit.split("+")]
    for reply in await asyncio.gather(*(_search(m, query, source, runner) for m in members)):
        merged.posts += reply.posts
        merged.skipped.update(reply.skipped)
        merged.requests += reply.requests
        if reply.error:
            merged.error = f"{merged.error}; {reply.error}" if merged.error else reply.error
    return merged


def screen_replies(
    replies: Sequence[_Reply],
    queries: Sequence[ScoutQuery],
    *,
    filters: FilterConfig,
    search_terms: Sequence[str],
    source: SourceName,
    fetched_at: datetime,
) -> ScoutOutcome:
    """Pure: replies (in call order) → candidates, each post screened once, strategies merged."""
    outcome = ScoutOutcome()
    by_id: dict[str, Candidate] = {}
    rejected: set[str] = set()
    for reply in replies:
        outcome.requests += reply.requests
        outcome.skipped_subreddits.update(reply.skipped)
        if reply.error:
            outcome.errors.append(reply.error)
            outcome.failed_requests += 1
        strategy = queries[reply.call.query_index].strategy
        for raw in reply.posts:
            outcome.posts_seen += 1
            post_id = raw_id(raw)
            if post_id in by_id:
                known = by_id[post_id]
                if strategy not in known.strategies:
                    known.strategies.append(strategy)
                continue
            if post_id in rejected:
                continue
            screened = screen_post(
                raw, search_terms=search_terms, config=filters, seen_post_ids=set()
            )
            if isinstance(screened, Rejection):
                rejected.add(post_id)
                outcome.rejections[screened.reason] = outcome.rejections.get(screened.reason, 0) + 1
                continue
            post = build_post_model(screened, [], source=source, fetched_at=fetched_at)
            by_id[post_id] = Candidate(post=post, strategies=[strategy], link_url=_link_url(raw))
    outcome.candidates = list(by_id.values())
    return outcome


def _link_url(raw: RawThing) -> str | None:
    """The external URL of a link post; self posts (and posts linking to themselves) have none."""
    if raw.get("is_self"):
        return None
    url = raw.get("url_overridden_by_dest") or raw.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    return url
