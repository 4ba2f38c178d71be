"""Resolve (seed 001, phase 3): HIGH posts bring their direct neighbours as context. No model.

A HIGH post often only makes sense next to the post it replies to, the post that replies to
it, or the older post it mentions. ``resolve`` follows every link where a HIGH post is the
source *or* the target, exactly one step (never the neighbours' neighbours: context must not
outgrow the evidence), and marks what it finds CONTEXT. A neighbour that is itself HIGH stays
HIGH and appears once. With recent-only, neighbours older than ``since`` are left out, as map
left out old posts.

Selected MEDIUM posts do not come here: they bypass resolve and the pipeline adds them to the
reduce context directly (they are worth a place, not an expansion).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from crowdsift.core.log import get_logger
from crowdsift.sources.experts.models import ExpertStore, PostLink, Relevance, ScoredPost

log = get_logger(__name__)


def resolve(
    expert_id: str,
    high: Sequence[ScoredPost],
    store: ExpertStore,
    *,
    since: datetime | None = None,
) -> list[ScoredPost]:
    """The HIGH posts (each once, in order), then their depth-1 linked posts marked CONTEXT.

    Linked posts come in the order their HIGH posts do, each once, and carry a ``reason``
    naming the link (``"reply to [post:12]"``). Every store call filters by ``expert_id``,
    and anything the store returns for another expert is ignored.
    """
    first: dict[int, ScoredPost] = {}
    for scored in high:
        first.setdefault(scored.post.post_id, scored)
    kept = list(first.values())
    high_ids = list(first)
    if not high_ids:
        return []
    owned_links = [link for link in store.links(expert_id, high_ids) if link.expert_id == expert_id]
    reasons = _neighbours(high_ids, owned_links)
    fetched = {
        post.post_id: post
        for post in store.posts_by_id(expert_id, list(reasons))
        if post.expert_id == expert_id
    }
    context = [
        ScoredPost(post=fetched[post_id], relevance=Relevance.CONTEXT, reason=reason)
        for post_id, reason in reasons.items()
        if post_id in fetched and (since is None or fetched[post_id].date >= since)
    ]
    log.info(
        "resolve", expert_id=expert_id, high=len(kept), linked=len(reasons),
        context=len(context), skipped=len(reasons) - len(context),
    )  # fmt: skip
    return [*kept, *context]


def _neighbours(high_ids: Sequence[int], links: Sequence[PostLink]) -> dict[int, str]:
    """Post id → why it is context, for every post one link away from a HIGH post.

    Ordered by HIGH post, then by link; HIGH posts themselves are never neighbours.
    """
    high_set = set(high_ids)
    found: dict[int, str] = {}
    for high_id in high_ids:
        for link in links:
            if link.source_id == high_id and link.target_id not in high_set:
                found.setdefault(link.target_id, f"{_kind(link, outgoing=True)} [post:{high_id}]")
            elif link.target_id == high_id and link.source_id not in high_set:
                found.setdefault(link.source_id, f"{_kind(link, outgoing=False)} [post:{high_id}]")
    return found


def _kind(link: PostLink, *, outgoing: bool) -> str:
    """How the neighbour relates to the HIGH post, in words."""
    if outgoing:  # the HIGH post replies to / forwards / mentions the neighbour
        return {
            "reply": "replied to by",
            "forward": "forwarded by",
            "mention": "mentioned by",
        }[link.kind]
    return {"reply": "reply to", "forward": "forward of", "mention": "mentions"}[link.kind]
