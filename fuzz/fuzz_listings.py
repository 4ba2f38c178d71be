"""Fuzz target: API answers (Reddit listings, Arctic Shift, YouTube, Amazon) → Posts and items.

The first byte picks the source; the rest is cut at NUL bytes into the bodies of its endpoints
(see ``_RUNS``), answered in-process with HTTP 200. Findings: an exception that is not a
``CrowdsiftError``, or a fetch report whose counts do not add up (every post and comment the
source handed over is either accepted or rejected with a reason).

    python fuzz/fuzz_listings.py fuzz/corpus/listings -max_total_time=30
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    from crowdsift.core.models import SearchPlan
    from crowdsift.core.source import RedditSource
    from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
    from harness import (
        AMAZON_TOKEN_BODY,
        AMAZON_TOKEN_PATH,
        FIXED_NOW,
        amazon_source,
        arctic_shift_source,
        in_process_client,
        quiet_logs,
        reddit_api_source,
        split,
        typed,
        youtube_source,
    )

PLAN = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"])
OPTIONS = SearchOptions(max_posts_per_query=50, max_comments_per_post=100, concurrency=1)


def _fetch(source: RedditSource) -> None:
    """Listing → Posts through the fetcher; the report must account for every raw item."""
    outcome = typed(RedditFetcher(source, options=OPTIONS, clock=lambda: FIXED_NOW).fetch, PLAN)
    if outcome is None:
        return
    report = outcome.report
    assert report.posts_seen == report.posts_accepted + sum(report.post_rejections.values())
    assert report.comments_seen == report.comments_accepted + sum(
        report.comment_rejections.values()
    )
    assert len(outcome.result.posts) == report.posts_accepted


def reddit_fetch(search: bytes, comments: bytes) -> None:
    bodies = {"/search": (200, search), "/comments/": (200, comments)}
    with in_process_client(bodies) as client:
        _fetch(reddit_api_source(client))


def arctic_fetch(posts: bytes, comments: bytes) -> None:
    bodies = {"/api/posts/": (200, posts), "/api/comments/": (200, comments)}
    with in_process_client(bodies) as client:
        _fetch(arctic_shift_source(client))


def reddit_tree(comments: bytes, _unused: bytes) -> None:
    with in_process_client({"/comments/": (200, comments)}) as client:
        tree = typed(reddit_api_source(client).fetch_comment_tree, "abc123", limit=100, depth=10)
    _check_tree(tree or [])


def arctic_tree(comments: bytes, _unused: bytes) -> None:
    with in_process_client({"/api/comments/": (200, comments)}) as client:
        tree = typed(arctic_shift_source(client).fetch_comment_tree, "abc123", limit=100, depth=10)
    _check_tree(tree or [])


def _check_tree(tree: list[dict[str, object]]) -> None:
    """Pre-order: every comment's parent is the post or a comment placed before it."""
    placed = {"t3_abc123": -1}
    for comment in tree:
        depth, parent = comment["depth"], comment["parent_id"]
        assert isinstance(depth, int) and isinstance(parent, str)
        assert placed.get(parent) == depth - 1, (parent, depth)
        comment_id = str(comment["id"]).strip()
        bare = comment_id[3:] if comment_id[:3] in ("t1_", "t3_") else comment_id
        placed[f"t1_{bare}"] = depth


def youtube_search(search: bytes, rest: bytes) -> None:
    videos, threads = split(rest, 2)
    bodies = {"/search": (200, search), "/videos": (200, videos), "/commentThreads": (200, threads)}
    with in_process_client(bodies) as client:
        items = typed(youtube_source(client).search, "desk", 5)
    for item in items or []:
        assert item.kind == "youtube" and item.id


def amazon_search(search: bytes, token: bytes) -> None:
    bodies = {AMAZON_TOKEN_PATH: (200, token or AMAZON_TOKEN_BODY), "/catalog/": (200, search)}
    with in_process_client(bodies) as client:
        items = typed(amazon_source(client).search, "desk", 5)
    for item in items or []:
        assert item.kind == "amazon" and str(item.url).endswith(f"/dp/{item.id}")


_RUNS: tuple[Callable[[bytes, bytes], None], ...] = (
    reddit_fetch,
    arctic_fetch,
    reddit_tree,
    arctic_tree,
    youtube_search,
    amazon_search,
)


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    first, second = split(data[1:], 2)
    _RUNS[data[0] % len(_RUNS)](first, second)


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
