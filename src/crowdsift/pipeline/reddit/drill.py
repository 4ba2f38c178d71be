"""Deep drill: the comment trees of the top posts, fetched concurrently, screened, kept in order.

The API call is ``/comments/{id}?depth=5&limit=100&sort=top``; archives give their stored tree
(see ``RedditSource.fetch_comment_tree``). Comments go through the same veto and cleaning as
``crowdsift fetch`` (``filter_comments``); their place in the tree (depth, parent), date and
permalink are kept beside them because the synthesis needs to know *where* a claim was made.

Threads land in ``sink`` as they complete, so a timeout keeps every thread already drilled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime

from crowdsift.core.errors import AuthError, ConfigError, SourceError
from crowdsift.core.log import get_logger
from crowdsift.core.models import Candidate, Comment
from crowdsift.core.source import RawThing, RedditSource
from crowdsift.pipeline.fetch.filtering import (
    FilterConfig,
    as_int,
    author_pseudonym,
    filter_comments,
    parse_created,
    raw_id,
)
from crowdsift.pipeline.reddit.models import DrilledThread, RankedPost, ThreadComment
from crowdsift.pipeline.reddit.runner import SourceRunner
from crowdsift.sources.reddit.permalink import comment_permalink

log = get_logger(__name__)


async def drill(
    ranked: Sequence[RankedPost],
    candidates: dict[str, Candidate],
    *,
    source: RedditSource,
    runner: SourceRunner,
    filters: FilterConfig,
    limit: int,
    depth: int,
    clock: Callable[[], datetime],
    sink: dict[str, DrilledThread],
) -> list[DrilledThread]:
    """Drill every post in ``ranked`` (the caller passes the top N); result in ranked order."""

    async def one(rank: RankedPost) -> None:
        candidate = candidates[rank.post_id]
        try:
            raw = await runner.call(
                source.fetch_comment_tree, rank.post_id, limit=limit, depth=depth
            )
        except (AuthError, ConfigError):
            raise
        except SourceError as exc:
            log.warning("reddit_drill_failed", post_id=rank.post_id, error=str(exc))
            sink[rank.post_id] = DrilledThread(
                post=candidate.post, rank=rank, error=f"comments of {rank.url}: {exc}"
            )
            return
        accepted, comments = screen_thread(candidate, raw, filters=filters, fetched_at=clock())
        post = candidate.post.model_copy(update={"comments": accepted})
        sink[rank.post_id] = DrilledThread(post=post, rank=rank, comments=comments)

    await asyncio.gather(*(one(rank) for rank in ranked))
    return [sink[rank.post_id] for rank in ranked if rank.post_id in sink]


def screen_thread(
    candidate: Candidate, raw: Sequence[RawThing], *, filters: FilterConfig, fetched_at: datetime
) -> tuple[list[Comment], list[ThreadComment]]:
    """Pure: the screened comments, in thread order, as the plain ``Comment`` records nested in
    the evidence post (all depths: the synthesis reads them as the thread's discussion) and,
    beside each, its place in the tree (depth, parent), date and permalink.

    A reply whose parent was rejected (deleted, too short) is kept: it was said in this thread,
    and its permalink still leads to it.
    """
    post = candidate.post
    accepted, _ = filter_comments(
        post.id, raw, config=filters, source=post.source, fetched_at=fetched_at
    )
    by_id = {raw_id(item): item for item in raw}
    threaded = []
    for comment in accepted:
        item = by_id[comment.comment_id]
        threaded.append(
            ThreadComment(
                comment_id=comment.comment_id,
                post_id=post.id,
                parent_id=str(item.get("parent_id") or f"t3_{post.id}"),
                depth=max(as_int(item.get("depth")), 0),
                body=comment.body,
                score=comment.comment_karma,
                created_at=parse_created(item.get("created_utc")),
                author_hash=author_pseudonym(item, filters),
                permalink=comment_permalink(post.url, comment.comment_id),
            )
        )
    return accepted, threaded
