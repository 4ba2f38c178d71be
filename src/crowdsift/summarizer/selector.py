"""The selector (seed 004): FetchResult → SummarizeRequest, the evidence an engine may cite.

Pure: no I/O, no clock. It decides *which* posts and comments an engine sees and *how much*
of each, so that prompt size is bounded by configuration, not by how chatty Reddit was:

- posts by relevance (ties: karma, then id, so equal inputs give equal evidence), one per
  ``post_id``, at most ``max_posts``;
- each body cut at ``max_post_chars`` on a word boundary with "…", each comment at
  ``max_comment_chars``; the top comments by karma, at most ``max_comments_per_post``;
- URLs reduced to the canonical permalink (no query, no fragment: no tracking parameter).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from crowdsift.models import Comment, FetchResult, Post
from crowdsift.sources.models import EvidenceItem
from crowdsift.summarizer.config import SelectorConfig
from crowdsift.summarizer.models import PostPayload, SummarizeRequest
from crowdsift.text import clean_text

ELLIPSIS = "…"
MAX_TITLE_CHARS = 300
"""Titles are short on Reddit (≤ 300 characters); the cap only guards against odd sources."""


def select_evidence(
    fetch_result: FetchResult,
    config: SelectorConfig,
    *,
    prompt_version: str,
    extra: Sequence[EvidenceItem] = (),
) -> SummarizeRequest:
    """Choose and compress the evidence for one summarize call, recording the limits used.

    ``extra`` items (YouTube videos, Amazon products, already past the relevance gate) get up
    to a quarter of ``max_posts`` per kind, in the order given; Reddit posts fill the rest.
    """
    extras = _extra_payloads(extra, config)
    room = max(config.max_posts - len(extras), 0)
    payloads = [_payload(post, config) for post in rank_posts(fetch_result.posts)][:room]
    return SummarizeRequest(
        query=fetch_result.query,
        plan_id=fetch_result.plan_id,
        post_payloads=[*payloads, *extras],
        prompt_version=prompt_version,
        max_posts=config.max_posts,
        max_comments_per_post=config.max_comments_per_post,
        max_post_chars=config.max_post_chars,
        max_comment_chars=config.max_comment_chars,
    )


EXTRA_ID_PREFIX: dict[str, str] = {"youtube": "yt-", "amazon": "amzn-"}


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
    """A video or product as evidence: likes or reviews stand in for karma."""
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
        top_comment_excerpts=[
            truncate_words(clean_text(c.text), config.max_comment_chars) for c in comments
        ],
        post_karma=int(weight),
        num_comments=int(item.metrics.get("comments", len(item.comments))),
        relevance_score=1.0,
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


def top_comments(comments: list[Comment], limit: int) -> list[Comment]:
    """The ``limit`` best comments by karma (ties: id), one per ``comment_id``, non-empty."""
    ordered = sorted(comments, key=lambda c: (-c.comment_karma, c.comment_id))
    seen: set[str] = set()
    chosen: list[Comment] = []
    for comment in ordered:
        if len(chosen) >= limit:
            break
        if comment.comment_id in seen or not clean_text(comment.body):
            continue
        seen.add(comment.comment_id)
        chosen.append(comment)
    return chosen


def canonical_url(url: str) -> str:
    """The URL without query string or fragment (where tracking parameters live)."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))


def truncate_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ending with "…".

    A word is cut only when it alone is longer than half the limit (a pasted URL, say), so a
    short limit cannot leave an empty excerpt.
    """
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return text[:limit]
    room = limit - len(ELLIPSIS)
    cut = text[: room + 1]  # one extra character tells whether the cut falls between words
    if cut[-1].isspace():
        head = cut.rstrip()
    else:
        head = cut[:room].rsplit(None, 1)[0] if " " in cut[:room] else cut[:room]
        if len(head) < room // 2:
            head = cut[:room]
    head = head.rstrip(" ,;:-–—")
    return f"{head}{ELLIPSIS}"


def _payload(post: Post, config: SelectorConfig) -> PostPayload:
    comments = top_comments(post.comments, config.max_comments_per_post)
    return PostPayload(
        post_id=post.id,
        subreddit=post.subreddit.strip().lower().removeprefix("r/"),
        title=truncate_words(clean_text(post.title), MAX_TITLE_CHARS),
        url=canonical_url(post.url),  # pydantic validates the str as an HttpUrl
        body_excerpt=truncate_words(clean_text(post.selftext), config.max_post_chars),
        top_comment_excerpts=[
            truncate_words(clean_text(c.body), config.max_comment_chars) for c in comments
        ],
        post_karma=post.post_karma,
        num_comments=len(post.comments),
        relevance_score=post.relevance_score,
        matched_keywords=list(post.matched_keywords),
    )
