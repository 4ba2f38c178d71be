"""A thread's best-voted replies for the relevance gate's judge, where they cost nothing to read.

On Reddit the answer is in the replies, and a link post's replies are all its discussion. An
archive reads them from its own file (``LOCAL_STORES``); a live source would spend a request a
thread, which the gate cannot afford for the dozens it judges.
"""

from __future__ import annotations

from collections.abc import Sequence

from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.core.source import DELETED_MARKERS, RedditSource
from crowdsift.core.text import clean_text

log = get_logger(__name__)

LOCAL_STORES = frozenset({"archive"})
"""Sources that read a thread's replies from a local file."""
GATE_REPLIES = 3
"""Best-voted replies read per judged thread (the judge reads the first two that say
something)."""


def best_replies(source: RedditSource, post_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each thread's best-voted top-level replies, cleaned, best first (blocking; a thread whose
    replies cannot be read has none: the judge still has its title and text)."""
    found: dict[str, list[str]] = {}
    for post_id in post_ids:
        try:
            raws = source.fetch_post_comments(post_id, limit=GATE_REPLIES)
        except CrowdsiftError as exc:
            log.info("gate_replies_failed", post_id=post_id, error=str(exc))
            continue
        bodies = (clean_text(str(raw.get("body") or "")) for raw in raws)
        found[post_id] = [b for b in bodies if b and b not in DELETED_MARKERS]
    return found
