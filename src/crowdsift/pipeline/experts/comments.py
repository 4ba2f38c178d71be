"""Comment groups (seed 001, phase 6): which discussion-group comments belong next to the answer.

Three sources, in the seed's priority order:

1. **Author clarifications** — the expert's own comments under the main-source posts (the posts
   the answer rests on). HIGH by construction: the author explaining their own post. No model.
2. **Community on main sources** — everyone else's comments under those posts. HIGH, no model,
   but capped at ``max_comments_per_section``: comments shorter than ``comment_min_words``
   words ("+1", "thanks!") are dropped, and the longest ones are kept, because in a comment
   thread length is the cheapest honest proxy for substance. Kept comments read in date order.
3. **Drift groups** — discussions under *other* posts that wandered onto a new topic (found
   offline by ``crowdsift experts drift``). Only these need judging: a ``CommentGroupsTask``
   shows the engine the question and each group's topic and excerpts (fenced) and gets back the
   relevant group ids; ids it was not shown make the reply invalid. The local strategy scores
   question-to-group similarity (embedding plus a lexical share) against a threshold.

A failing engine costs only source 3: sources 1 and 2 never depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineError, EngineOutputError
from crowdsift.core.log import get_logger
from crowdsift.core.sentences import truncate_words
from crowdsift.engines.base import (
    FENCE_NOTE,
    ChatMessage,
    Engine,
    LocalKit,
    Phase,
    Task,
    Usage,
    fence,
)
from crowdsift.engines.embedding import Embedder, blended_relevance
from crowdsift.sources.experts.models import DriftGroup, ExpertComment, ExpertStore

log = get_logger(__name__)

EXCERPTS_PER_GROUP = 5
EXCERPT_CHARS = 200


class DriftGroupWithComments(BaseModel):
    """A drift group and its comments (date order), as the comment synthesis needs them."""

    group: DriftGroup
    comments: list[ExpertComment] = Field(default_factory=list)


class CommentGroups(BaseModel):
    """The comment groups' selection, by source, and what judging the drift groups cost."""

    author_clarifications: list[ExpertComment] = Field(default_factory=list)
    community: list[ExpertComment] = Field(default_factory=list)
    drift: list[DriftGroupWithComments] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list, description="degradations, e.g. a failed filter")


class GroupDigest(BaseModel):
    """What the judge sees of one drift group."""

    group_id: str
    topic: str
    keywords: list[str] = Field(default_factory=list)
    excerpts: list[str] = Field(default_factory=list)

    def plain(self) -> str:
        """Topic, keywords and excerpts as one text, for similarity."""
        return " \n".join([self.topic, " ".join(self.keywords), *self.excerpts])

    def text(self) -> str:
        """The same, labelled, for a prompt."""
        excerpts = "\n".join(f"- {e}" for e in self.excerpts)
        return f"Topic: {self.topic}\nKeywords: {', '.join(self.keywords)}\n{excerpts}"


class RelevantGroups(BaseModel):
    """Ids of the drift groups that help answer the question, most relevant first."""

    group_ids: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class CommentGroupsTask(Task[RelevantGroups]):
    """Which of these comment discussions help answer the question?"""

    question: str
    groups: tuple[GroupDigest, ...]
    threshold: float = 0.3

    phase: ClassVar[Phase] = "comment_groups"
    output_model: ClassVar[type[BaseModel]] = RelevantGroups

    def messages(self) -> list[ChatMessage]:
        listed = "\n".join(fence(f"group:{g.group_id}", g.text()) for g in self.groups)
        system = (
            "You pick the comment discussions that help answer a question. Each group below is "
            "a side discussion from a Telegram channel's comments, with its topic and a few "
            "comments. Choose only groups whose discussion bears directly on the question; "
            'return JSON {"group_ids": [...]} with the ids (the id="group:..." suffix) of the '
            "relevant groups, most relevant first, or an empty list. Never invent an id. "
            + FENCE_NOTE
        )
        user = f"Question:\n{fence('question', self.question)}\n\nGroups:\n{listed}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def parse(self, data: Any) -> RelevantGroups:
        """Accept a bare list and numeric ids; reject ids that were not offered."""
        if isinstance(data, list):
            data = {"group_ids": data}
        if isinstance(data, dict) and isinstance(data.get("group_ids"), list):
            data = {**data, "group_ids": [str(g).removeprefix("group:") for g in data["group_ids"]]}
        return self.checked(super().parse(data))

    def checked(self, output: RelevantGroups) -> RelevantGroups:
        """``output`` without repeats; an EngineOutputError if it names a group not offered."""
        known = {g.group_id for g in self.groups}
        unknown = [g for g in output.group_ids if g not in known]
        if unknown:
            raise EngineOutputError(
                f"the comment-groups reply names groups that were not offered: {unknown[:5]}",
                raw=str(output.group_ids)[:500],
            )
        return RelevantGroups(group_ids=list(dict.fromkeys(output.group_ids)))

    def run_local(self, kit: LocalKit) -> RelevantGroups:
        """Groups scoring at least ``threshold``, best first (ties: offered order)."""
        scores = relevance_scores(self.question, [g.plain() for g in self.groups], kit.embedder)
        ranked = sorted(range(len(self.groups)), key=lambda i: (-scores[i], i))
        return RelevantGroups(
            group_ids=[self.groups[i].group_id for i in ranked if scores[i] >= self.threshold]
        )


def relevance_scores(question: str, texts: Sequence[str], embedder: Embedder) -> list[float]:
    """``blended_relevance``, as the plain list the local comment groups and synthesis sort."""
    return [round(float(score), 6) for score in blended_relevance(question, texts, embedder)]


def word_count(comment: ExpertComment) -> int:
    return len(comment.text.split())


def prefer_substantive(
    comments: Sequence[ExpertComment], limit: int, *, min_words: int = 0
) -> list[ExpertComment]:
    """At most ``limit`` comments with ``min_words`` words or more, longest first when cutting,
    returned in date order (ties: newer first when cutting, comment id when reading)."""
    kept = [c for c in comments if word_count(c) >= min_words]
    if len(kept) > limit:
        kept = sorted(kept, key=lambda c: (-word_count(c), -c.date.timestamp(), c.comment_id))
        kept = kept[:limit]
    return sorted(kept, key=lambda c: (c.date, c.comment_id))


def digest(group: DriftGroupWithComments) -> GroupDigest:
    return GroupDigest(
        group_id=group.group.group_id,
        topic=group.group.topic,
        keywords=group.group.keywords,
        excerpts=[
            truncate_words(" ".join(c.text.split()), EXCERPT_CHARS)
            for c in group.comments[:EXCERPTS_PER_GROUP]
        ],
    )


async def select_comment_groups(
    question: str,
    expert_id: str,
    main_post_ids: Sequence[int],
    store: ExpertStore,
    engine: Engine,
    config: ExpertsConfig,
    *,
    since: datetime | None = None,
) -> CommentGroups:
    """Author clarifications and community notes on the main sources (no model),
    then the drift groups of other posts the engine judges relevant (``since`` filters them)."""
    main = list(dict.fromkeys(main_post_ids))
    on_main = store.comments(expert_id, main) if main else []
    cap = config.max_comments_per_section
    result = CommentGroups(
        author_clarifications=prefer_substantive([c for c in on_main if c.author_is_expert], cap),
        community=prefer_substantive(
            [c for c in on_main if not c.author_is_expert], cap, min_words=config.comment_min_words
        ),
    )
    candidates = drift_candidates(expert_id, set(main), store, config, since=since)
    if candidates and config.max_drift_groups > 0:
        task = CommentGroupsTask(
            question, tuple(digest(c) for c in candidates), config.comment_groups_threshold
        )
        try:
            reply = await engine.run(task)
            result.usage = reply.usage
            chosen = task.checked(reply.output).group_ids[: config.max_drift_groups]
        except EngineError as exc:
            log.warning("comment_groups_failed", expert_id=expert_id, error=str(exc))
            result.notes.append(f"drift comment groups left out: the filter failed ({exc})")
        else:
            by_id = {c.group.group_id: c for c in candidates}
            result.drift = [by_id[group_id] for group_id in chosen]
    log.info(
        "comment_groups", expert_id=expert_id, author=len(result.author_clarifications),
        community=len(result.community), drift_candidates=len(candidates),
        drift=len(result.drift),
    )  # fmt: skip
    return result


def drift_candidates(
    expert_id: str,
    main_ids: set[int],
    store: ExpertStore,
    config: ExpertsConfig,
    *,
    since: datetime | None = None,
) -> list[DriftGroupWithComments]:
    """The newest drift groups of posts other than the main sources, with their comments.

    A group whose comments are all gone (re-import dropped them) is skipped: there is nothing
    left to show.
    """
    groups = [g for g in store.drift_groups(expert_id, since=since) if g.post_id not in main_ids]
    groups.sort(key=lambda g: (g.date, g.group_id), reverse=True)
    groups = groups[: config.comment_groups_max_candidates]
    if not groups:
        return []
    comments = store.comments(expert_id, sorted({g.post_id for g in groups}))
    by_key = {(c.post_id, c.comment_id): c for c in comments}
    found = []
    for group in groups:
        members = [
            by_key[(group.post_id, i)] for i in group.comment_ids if (group.post_id, i) in by_key
        ]
        if members:
            members.sort(key=lambda c: (c.date, c.comment_id))
            found.append(DriftGroupWithComments(group=group, comments=members))
    return found
