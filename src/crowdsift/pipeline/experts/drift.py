"""Offline drift analysis (``crowdsift experts drift``): comment threads that changed subject.

Under a post about backups, ten comments may end up debating ECC memory. Such a *drift group*
is invisible to a search over posts, yet it is exactly what someone asking about ECC memory
wants. This module finds them once, offline, for every post with at least
``drift_min_comments`` comments, and stores them (``store.replace_drift_groups``), so the comment
groups only have to judge them against a question.

One ``DriftTask`` per post (phase ``drift_analysis``, ``MODEL_DRIFT_ANALYSIS``) gets the post and
its newest ``drift_max_comments`` comments, fenced, and returns groups of
``{topic, keywords, comment_ids}``. The reply is checked in code: unknown or repeated comment
ids are dropped, a group needs two comments, ids are ``f"{post_id}-{n}"``, the date is the
group's newest comment. Re-running replaces the expert's groups, so the analysis is idempotent;
a post whose analysis fails keeps the groups it had.

The local strategy, deterministic and honest about being simple:

1. embed the post and every comment with at least ``drift_min_words`` words;
2. comments whose cosine to the post is below ``drift_post_similarity`` have drifted;
3. drifted comments, in date order, join the first group whose centroid they match best with
   cosine ≥ ``drift_cluster_similarity`` (else start one) — greedy single-pass clustering;
4. groups of two or more comments are kept, biggest first;
5. keywords are the group's words weighted tf-idf style against the whole thread (frequent in
   the group, rare elsewhere); the topic is the first three; the date is the newest comment's.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import CrowdsiftError, EngineError
from crowdsift.core.log import get_logger
from crowdsift.core.words import content_words
from crowdsift.engines.base import (
    FENCE_NOTE,
    ChatMessage,
    Engine,
    LocalKit,
    Phase,
    Task,
    fence,
)
from crowdsift.engines.embedding import Embedder, Vectors
from crowdsift.sources.experts.models import DriftGroup, ExpertComment, ExpertPost, ExpertStore

log = get_logger(__name__)

TOPIC_WORDS = 3
MAX_KEYWORDS = 6
MAX_TOPIC_CHARS = 120
PROMPT_COMMENT_CHARS = 600


class DriftGroupDraft(BaseModel):
    """One group as an engine proposes it."""

    topic: str = ""
    keywords: list[str] = Field(default_factory=list)
    comment_ids: list[int] = Field(default_factory=list)


class DriftDraft(BaseModel):
    """The groups found under one post (empty when the discussion stayed on topic)."""

    groups: list[DriftGroupDraft] = Field(default_factory=list)


@dataclass(frozen=True)
class DriftTask(Task[DriftDraft]):
    """Find the comment groups under one post that drifted to another topic."""

    post: ExpertPost
    comments: tuple[ExpertComment, ...]
    post_similarity: float = 0.3
    cluster_similarity: float = 0.35
    min_words: int = 4
    max_groups: int = 5

    phase: ClassVar[Phase] = "drift_analysis"
    output_model: ClassVar[type[BaseModel]] = DriftDraft

    def messages(self) -> list[ChatMessage]:
        listed = "\n".join(fence(f"comment:{c.comment_id}", _prompt_line(c)) for c in self.comments)
        system = (
            "You analyse the comment thread under a Telegram channel post. Find groups of "
            "comments that drifted away from the post's topic into a different subject of "
            "their own (a side discussion someone could search for). Comments that stay on the "
            "post's topic, greetings and thanks belong to no group. Each group needs at least 2 "
            f"comments; return at most {self.max_groups} groups as JSON "
            '{"groups": [{"topic": "<short noun phrase>", "keywords": ["3-6 words"], '
            '"comment_ids": [<ids>]}]} using only the ids shown (the id="comment:..." suffix), '
            'or {"groups": []} when the discussion stayed on topic. ' + FENCE_NOTE
        )
        user = f"Post:\n{fence('post', self.post.text)}\n\nComments:\n{listed}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def parse(self, data: Any) -> DriftDraft:
        """Accept a bare list of groups; ids are checked later against the thread."""
        if isinstance(data, list):
            data = {"groups": data}
        return super().parse(data)

    def run_local(self, kit: LocalKit) -> DriftDraft:
        return local_drift_groups(
            self.post.text,
            self.comments,
            kit.embedder,
            post_similarity=self.post_similarity,
            cluster_similarity=self.cluster_similarity,
            min_words=self.min_words,
            max_groups=self.max_groups,
        )


def _prompt_line(comment: ExpertComment) -> str:
    reply = (
        f" (reply to comment:{comment.reply_to_comment_id})" if comment.reply_to_comment_id else ""
    )
    text = " ".join(comment.text.split())[:PROMPT_COMMENT_CHARS]
    return f"{comment.author}{reply}: {text}"


def local_drift_groups(
    post_text: str,
    comments: Sequence[ExpertComment],
    embedder: Embedder,
    *,
    post_similarity: float,
    cluster_similarity: float,
    min_words: int,
    max_groups: int,
) -> DriftDraft:
    """The local strategy (see the module docstring); ``comments`` in date order."""
    eligible = [c for c in comments if len(c.text.split()) >= min_words]
    if len(eligible) < 2:
        return DriftDraft()
    vectors = embedder.embed([post_text, *(c.text for c in eligible)])
    to_post = np.asarray(vectors[1:] @ vectors[0]).tolist()
    drifted = [i for i, sim in enumerate(to_post) if sim < post_similarity]
    clusters = greedy_clusters(vectors[1:], drifted, cluster_similarity)
    kept = sorted((c for c in clusters if len(c) >= 2), key=lambda c: (-len(c), c[0]))
    thread = [post_text, *(c.text for c in comments)]
    groups = []
    for members in kept[:max_groups]:
        keywords = group_keywords([eligible[i].text for i in members], thread)
        groups.append(
            DriftGroupDraft(
                topic=", ".join(keywords[:TOPIC_WORDS]),
                keywords=keywords,
                comment_ids=[eligible[i].comment_id for i in members],
            )
        )
    return DriftDraft(groups=groups)


def greedy_clusters(vectors: Vectors, indices: Sequence[int], threshold: float) -> list[list[int]]:
    """Single pass in ``indices`` order: each item joins the group whose (normalised) centroid
    it is most similar to, if that cosine is ≥ ``threshold``, else starts a group. Ties go to
    the older group, so the result depends only on the input order."""
    clusters: list[list[int]] = []
    centroids: list[Vectors] = []
    for index in indices:
        vector = vectors[index]
        best, best_sim = -1, threshold
        for number, centroid in enumerate(centroids):
            sim = float(vector @ centroid)
            if sim > best_sim or (best < 0 and sim >= threshold):
                best, best_sim = number, sim
        if best < 0:
            clusters.append([index])
            centroids.append(vector.copy())
            continue
        clusters[best].append(index)
        mean = np.mean(vectors[clusters[best]], axis=0)
        norm = float(np.linalg.norm(mean))
        centroids[best] = mean / norm if norm > 0 else mean
    return clusters


def group_keywords(group: Sequence[str], thread: Sequence[str]) -> list[str]:
    """Words frequent in ``group`` and rare in ``thread``: g · log((1 + N) / (1 + df)), where g
    counts the group's comments using the word (one comment repeating a word is not a topic)
    and df the thread's texts using it.

    Ties keep the order in which words first appear in the group: people name the subject
    early ("ECC memory matters more…"), and equal inputs still give equal keywords.
    """
    documents = [set(content_words(text)) for text in thread]
    frequency: Counter[str] = Counter()
    for text in group:
        frequency.update(dict.fromkeys(content_words(text), 1))
    total = len(documents)
    weights = {
        word: count * math.log((1 + total) / (1 + sum(word in d for d in documents)))
        for word, count in frequency.items()
    }
    ranked = sorted(weights, key=lambda w: -weights[w])  # stable: first appearance
    return ranked[:MAX_KEYWORDS]


def build_groups(
    expert_id: str,
    post: ExpertPost,
    thread: Sequence[ExpertComment],
    draft: DriftDraft,
    max_groups: int,
) -> list[DriftGroup]:
    """Validated ``DriftGroup`` records from an engine's draft.

    Unknown ids (not in this post's thread) and ids already used by an earlier group are
    dropped; groups left with fewer than two comments are dropped; at most ``max_groups``.
    """
    by_id = {c.comment_id: c for c in thread}
    used: set[int] = set()
    groups: list[DriftGroup] = []
    for proposed in draft.groups:
        ids = [i for i in dict.fromkeys(proposed.comment_ids) if i in by_id and i not in used]
        unknown = [i for i in proposed.comment_ids if i not in by_id]
        if unknown:
            log.warning("drift_unknown_comment_ids", post_id=post.post_id, ids=unknown[:10])
        if len(ids) < 2:
            continue
        used.update(ids)
        members = sorted((by_id[i] for i in ids), key=lambda c: (c.date, c.comment_id))
        keywords = [k.strip() for k in proposed.keywords if k.strip()][:MAX_KEYWORDS]
        topic = " ".join(proposed.topic.split())[:MAX_TOPIC_CHARS]
        groups.append(
            DriftGroup(
                expert_id=expert_id,
                group_id=f"{post.post_id}-{len(groups) + 1}",
                post_id=post.post_id,
                topic=topic or ", ".join(keywords[:TOPIC_WORDS]) or "side discussion",
                keywords=keywords,
                comment_ids=[c.comment_id for c in members],
                date=members[-1].date,
            )
        )
        if len(groups) >= max_groups:
            break
    return groups


async def analyse_drift(
    expert_id: str, store: ExpertStore, engine: Engine, config: ExpertsConfig
) -> list[DriftGroup]:
    """Find and store the drift groups of every post of ``expert_id`` with enough comments.

    Posts run concurrently (at most ``drift_max_parallel`` in flight). Returns what was stored.
    """
    if store.get_expert(expert_id) is None:
        raise CrowdsiftError(
            f"no expert {expert_id!r} in the store; run `crowdsift experts list` to see the "
            "imported ones, or `crowdsift experts import` first"
        )
    threads: defaultdict[int, list[ExpertComment]] = defaultdict(list)
    for comment in store.all_comments(expert_id):
        threads[comment.post_id].append(comment)
    wanted = sorted(
        pid for pid, thread in threads.items() if len(thread) >= config.drift_min_comments
    )
    posts = store.posts_by_id(expert_id, wanted)
    limit = asyncio.Semaphore(config.drift_max_parallel)

    async def analyse(post: ExpertPost) -> list[DriftGroup] | None:
        thread = sorted(threads[post.post_id], key=lambda c: (c.date, c.comment_id))
        thread = thread[-config.drift_max_comments :]
        task = DriftTask(
            post, tuple(thread), config.drift_post_similarity, config.drift_cluster_similarity,
            config.drift_min_words, config.drift_max_groups_per_post,
        )  # fmt: skip
        async with limit:
            try:
                reply = await engine.run(task)
            except EngineError as exc:
                log.warning(
                    "drift_post_failed", expert_id=expert_id, post_id=post.post_id, error=str(exc)
                )
                return None
        return build_groups(expert_id, post, thread, reply.output, config.drift_max_groups_per_post)

    results = await asyncio.gather(*(analyse(post) for post in posts))
    failed = {post.post_id for post, found in zip(posts, results, strict=True) if found is None}
    groups = [group for found in results if found for group in found]
    if failed:  # keep what an earlier run found for posts that failed this time
        groups += [g for g in store.drift_groups(expert_id) if g.post_id in failed]
    groups.sort(key=_group_order)
    store.replace_drift_groups(expert_id, groups)
    log.info(
        "drift_analysis", expert_id=expert_id, posts=len(posts), failed=len(failed),
        groups=len(groups), engine=engine.name,
    )  # fmt: skip
    return groups


def _group_order(group: DriftGroup) -> tuple[int, int, str]:
    """Post id, then the group's number ("12-10" after "12-9"), then the id itself."""
    suffix = group.group_id.rsplit("-", 1)[-1]
    return group.post_id, int(suffix) if suffix.isdigit() else 0, group.group_id
