"""The selector (seed 004): drilled threads → SummarizeRequest, the evidence an engine may cite.

Pure: no I/O, no clock. It decides *which* posts and comments an engine sees and *how much*
of each, so that prompt size is bounded by configuration, not by how chatty Reddit was:

- threads in the order given (ranked upstream), one per post id, at most ``max_posts``;
- each body cut at ``max_post_chars`` on a word boundary with "…", each comment at
  ``max_comment_chars``; per thread the ``max_comments_per_post`` best-scored comments that fit
  its share of ``max_evidence_chars``, shown in thread order with their depth, parent and date
  (the staff-engineer sections need to know *where* in a thread something was said);
- URLs reduced to the canonical permalink (no query, no fragment: no tracking parameter).
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID, uuid4

from crowdsift.core.models import Comment, Post
from crowdsift.core.sentences import truncate_words
from crowdsift.core.text import canonical_url, clean_text
from crowdsift.pipeline.reddit.models import DrilledThread, RankedPost, ThreadComment
from crowdsift.pipeline.synthesis.config import SelectorConfig
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.sources.models import EvidenceItem
from crowdsift.sources.reddit.permalink import comment_permalink

MAX_TITLE_CHARS = 300
"""Titles are short on Reddit (≤ 300 characters); the cap only guards against odd sources."""
EXTRA_ID_PREFIX: dict[str, str] = {"youtube": "yt-", "amazon": "amzn-"}


def select_threads(
    question: str,
    threads: Sequence[DrilledThread],
    config: SelectorConfig,
    *,
    prompt_version: str,
    extra: Sequence[EvidenceItem] = (),
    plan_id: UUID | None = None,
) -> SummarizeRequest:
    """Choose and compress the evidence for one synthesis, recording the limits used.

    ``extra`` items (YouTube videos, Amazon products, already past the relevance gate) get up
    to a quarter of ``max_posts`` per kind, in the order given; Reddit threads fill the rest.
    """
    extras = _extra_payloads(extra, config)
    room = max(config.max_posts - len(extras), 0)
    unique = list({t.post.id: t for t in reversed(threads)}.values())[::-1]  # first copy wins
    chosen = unique[:room]
    share = max(
        config.max_post_chars + 2 * config.max_comment_chars,
        config.max_evidence_chars // max(1, len(chosen) + len(extras)),
    )
    payloads = [_payload(thread, config, share) for thread in chosen]
    return SummarizeRequest(
        query=question,
        plan_id=plan_id or uuid4(),
        post_payloads=[*payloads, *extras],
        prompt_version=prompt_version,
        max_posts=config.max_posts,
        max_comments_per_post=config.max_comments_per_post,
        max_post_chars=config.max_post_chars,
        max_comment_chars=config.max_comment_chars,
    )


def threads_of(posts: Sequence[Post]) -> list[DrilledThread]:
    """Posts with their nested comments as drilled threads, most relevant first.

    Nested ``Comment`` records carry no tree data: they are read as top-level comments.
    """
    return [
        DrilledThread(
            post=post,
            rank=RankedPost.of(
                post,
                strategies=[],
                relevance=post.relevance_score,
                engagement=0.0,
                final_score=post.relevance_score,
            ),
            comments=[_thread_comment(post, c) for c in post.comments],
        )
        for post in rank_posts(list(posts))
    ]


def _thread_comment(post: Post, comment: Comment) -> ThreadComment:
    return ThreadComment(
        comment_id=comment.comment_id,
        post_id=post.id,
        parent_id=f"t3_{post.id}",
        depth=0,
        body=comment.body,
        score=comment.comment_karma,
        permalink=comment_permalink(post.url, comment.comment_id),
    )


def _extra_payloads(items: Sequence[EvidenceItem], config: SelectorConfig) -> list[PostPayload]:
    per_kind = max(1, config.max_posts // 4)
    taken: dict[str, int] = {}
    payloads: list[PostPayload] = []
    seen: set[str] = set()
    for item in items:
        post_id = f"{EXTRA_ID_PREFIX.get(item.kind, '')}{item.id}"
        if post_id in seen or taken.get(item.kind, 0) >= per_kind:
            continue
        seen.add(post_id)
        taken[item.kind] = taken.get(item.kind, 0) + 1
        payloads.append(_item_payload(post_id, item, config))
    return payloads


def _item_payload(post_id: str, item: EvidenceItem, config: SelectorConfig) -> PostPayload:
    """A video or product as evidence: likes or reviews stand in for karma. Its comments have
    no permalink of their own, so they are cited through the item (``[post:ID]``)."""
    comments = sorted(item.comments, key=lambda c: (-c.likes, c.id))
    comments = [c for c in comments if clean_text(c.text)][: config.max_comments_per_post]
    weight = item.metrics.get("likes", item.metrics.get("reviews", 0.0))
    return PostPayload(
        post_id=post_id,
        kind=item.kind,
        subreddit=item.where,
        title=truncate_words(clean_text(item.title), MAX_TITLE_CHARS),
        url=canonical_url(str(item.url)) if item.kind == "amazon" else str(item.url),
        body_excerpt=truncate_words(clean_text(item.text), config.max_post_chars),
        comments=[
            CommentPayload(
                comment_id="",
                excerpt=truncate_words(clean_text(c.text), config.max_comment_chars),
                score=int(c.likes),
            )
            for c in comments
        ],
        post_karma=int(weight),
        num_comments=int(item.metrics.get("comments", len(item.comments))),
        relevance_score=1.0,
        created_at=item.published_at,
    )


def rank_posts(posts: list[Post]) -> list[Post]:
    """Most relevant first (ties: higher karma, then id), one post per id (the best copy)."""
    ordered = sorted(posts, key=lambda p: (-p.relevance_score, -p.post_karma, p.id))
    seen: set[str] = set()
    unique: list[Post] = []
    for post in ordered:
        if post.id not in seen:
            seen.add(post.id)
            unique.append(post)
    return unique


def top_comments(
    comments: Sequence[ThreadComment], limit: int, chars: int, budget: int
) -> list[tuple[ThreadComment, str]]:
    """The ``limit`` best-scored comments (ties: thread order) whose excerpts fit ``budget``
    characters, one per id, non-empty, returned in thread order with their excerpts."""
    ranked = sorted(range(len(comments)), key=lambda i: (-comments[i].score, i))
    chosen: dict[int, str] = {}
    seen: set[str] = set()
    used = 0
    for index in ranked:
        if len(chosen) >= limit:
            break
        comment = comments[index]
        excerpt = truncate_words(clean_text(comment.body), chars)
        if not excerpt or comment.comment_id in seen or used + len(excerpt) > budget:
            continue
        seen.add(comment.comment_id)
        chosen[index] = excerpt
        used += len(excerpt)
    return [(comments[i], chosen[i]) for i in sorted(chosen)]


def _same_author(comment: str | None, post: str | None) -> bool:
    """The comment's author asked the thread's question (equal pseudonyms; none: unknown)."""
    return comment is not None and comment == post


def _payload(thread: DrilledThread, config: SelectorConfig, share: int) -> PostPayload:
    post = thread.post
    body = truncate_words(clean_text(post.selftext), config.max_post_chars)
    shown = top_comments(
        thread.comments, config.max_comments_per_post, config.max_comment_chars, share - len(body)
    )
    return PostPayload(
        post_id=post.id,
        subreddit=post.subreddit.strip().lower().removeprefix("r/"),
        title=truncate_words(clean_text(post.title), MAX_TITLE_CHARS),
        url=canonical_url(post.url),  # pydantic validates the str as an HttpUrl
        body_excerpt=body,
        comments=[
            CommentPayload(
                comment_id=comment.comment_id,
                excerpt=excerpt,
                score=comment.score,
                depth=comment.depth,
                parent_id=comment.parent_id,
                created_at=comment.created_at,
                permalink=comment.permalink,
                by_asker=_same_author(comment.author_hash, post.author_hash),
            )
            for comment, excerpt in shown
        ],
        post_karma=post.post_karma,
        num_comments=max(len(thread.comments), len(post.comments)),
        relevance_score=post.relevance_score,
        matched_keywords=list(post.matched_keywords),
        created_at=post.created_at,
    )
