"""An in-memory ``ExpertStore``: the phases' tests (ours and users') run without a database.

It keeps the real store's rules that phases depend on: every read filters by ``expert_id``,
``since`` keeps posts dated at or after it, results come newest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from crowdsift.sources.experts.models import (
    DriftGroup,
    Expert,
    ExpertComment,
    ExpertPost,
    ExpertSummary,
    PostLink,
)


class MemoryExpertStore:
    """Holds experts, posts, links, comments and drift groups in lists."""

    def __init__(self) -> None:
        self._experts: dict[str, Expert] = {}
        self._posts: dict[tuple[str, int], ExpertPost] = {}
        self._links: list[PostLink] = []
        self._comments: dict[tuple[str, int], ExpertComment] = {}
        self._drift: dict[str, list[DriftGroup]] = {}

    # --- writing (what an importer would do) -----------------------------------------------
    def add_expert(self, expert: Expert) -> None:
        self._experts[expert.expert_id] = expert

    def add_posts(self, posts: Iterable[ExpertPost]) -> None:
        for post in posts:
            self._posts[(post.expert_id, post.post_id)] = post

    def add_links(self, links: Iterable[PostLink]) -> None:
        self._links.extend(links)

    def add_comments(self, comments: Iterable[ExpertComment]) -> None:
        for comment in comments:
            self._comments[(comment.expert_id, comment.comment_id)] = comment

    # --- ExpertStore ---------------------------------------------------------------------
    def experts(self) -> list[ExpertSummary]:
        summaries = []
        for expert in self._experts.values():
            posts = self.posts(expert.expert_id)
            summaries.append(
                ExpertSummary(
                    **expert.model_dump(),
                    posts=len(posts),
                    comments=len(self.all_comments(expert.expert_id)),
                    first_post_at=min((p.date for p in posts), default=None),
                    last_post_at=max((p.date for p in posts), default=None),
                )
            )
        return sorted(summaries, key=lambda s: s.expert_id)

    def get_expert(self, expert_id: str) -> Expert | None:
        return self._experts.get(expert_id)

    def posts(self, expert_id: str, *, since: datetime | None = None) -> list[ExpertPost]:
        found = [
            p
            for (owner, _), p in self._posts.items()
            if owner == expert_id and (since is None or p.date >= since)
        ]
        return sorted(found, key=lambda p: (p.date, p.post_id), reverse=True)

    def posts_by_id(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertPost]:
        return [
            self._posts[(expert_id, pid)] for pid in post_ids if (expert_id, pid) in self._posts
        ]

    def links(self, expert_id: str, post_ids: Sequence[int]) -> list[PostLink]:
        wanted = set(post_ids)
        return [
            link
            for link in self._links
            if link.expert_id == expert_id
            and (link.source_id in wanted or link.target_id in wanted)
        ]

    def comments(self, expert_id: str, post_ids: Sequence[int]) -> list[ExpertComment]:
        wanted = set(post_ids)
        return sorted(
            (c for c in self.all_comments(expert_id) if c.post_id in wanted),
            key=lambda c: (c.date, c.comment_id),
        )

    def all_comments(self, expert_id: str) -> list[ExpertComment]:
        return sorted(
            (c for (owner, _), c in self._comments.items() if owner == expert_id),
            key=lambda c: (c.date, c.comment_id),
        )

    def drift_groups(self, expert_id: str, *, since: datetime | None = None) -> list[DriftGroup]:
        return [g for g in self._drift.get(expert_id, []) if since is None or g.date >= since]

    def replace_drift_groups(self, expert_id: str, groups: Sequence[DriftGroup]) -> None:
        self._drift[expert_id] = [g for g in groups if g.expert_id == expert_id]
