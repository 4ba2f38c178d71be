"""Agents that read feeds and decide: like, comment (with text), share, or skip.

``SocialAgent.decide(feed_text)`` runs one ``DecideTask`` on its engine. With an LLM the reply is
a JSON ``Decision`` validated in code: the post id must be one of the feed's (a model, or a
post pretending to be instructions, cannot make an agent act on a post it was not shown), and a
comment needs text. With the local engine the decision follows embedding similarity between the
agent's interests and each post (title and excerpt as the feed shows them): the closest post
the agent has not acted on yet, and an action by how close it is. Local comments are a plain
template and say they come from the local engine; nothing pretends to be written by a model.

An agent remembers the posts it acted on, so over several rounds it moves on to new ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crowdsift.core.errors import EngineOutputError
from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage
from crowdsift.feed.formatting import FeedItem, parse_feed

Action = Literal["like", "comment", "share", "skip"]


class Decision(BaseModel):
    """One agent's action on one feed."""

    model_config = ConfigDict(extra="ignore")

    action: Action
    post_id: str | None = Field(None, description="the post acted on; null only for skip")
    text: str | None = Field(None, description="the comment's text (comment only)")
    reason: str = Field("", max_length=1000)

    @model_validator(mode="after")
    def _consistent(self) -> Decision:
        if self.action != "skip" and not self.post_id:
            raise ValueError(f"a {self.action} needs the post_id it applies to")
        if self.action == "comment" and not (self.text and self.text.strip()):
            raise ValueError("a comment needs non-empty text")
        if self.action != "comment":
            self.text = None
        return self


@dataclass(frozen=True)
class LocalPolicy:
    """Cosine-similarity cut-offs of the local strategy (all-MiniLM-L6-v2 scale)."""

    share: float = 0.55
    comment: float = 0.45
    like: float = 0.30


@dataclass(frozen=True)
class DecideTask(Task[Decision]):
    """Pick one action for one agent on one feed."""

    agent: str
    persona: str
    interests: tuple[str, ...]
    feed_text: str
    acted_on: frozenset[str] = frozenset()
    policy: LocalPolicy = field(default_factory=LocalPolicy)

    phase = "agent"
    output_model = Decision

    def messages(self) -> list[ChatMessage]:
        seen = ", ".join(sorted(self.acted_on)) or "none"
        system = (
            f"You are {self.agent}, a social-media user. Persona: {self.persona or 'unspecified'}. "
            f"Interests: {', '.join(self.interests)}. Read the numbered feed and choose exactly "
            "one action: like, comment, share, or skip. Act on a post only if it fits your "
            "interests; prefer posts you have not acted on before (already acted on: "
            f"{seen}). Reply with JSON "
            '{"action": "like|comment|share|skip", "post_id": "<id from [post:ID]> or null '
            'for skip", "text": "<your comment, only for comment>", "reason": "<one sentence>"}. '
            + FENCE_NOTE
        )
        return [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=f"Feed:\n\n{self.feed_text}"),
        ]

    def parse(self, data: Any) -> Decision:
        if isinstance(data, dict) and isinstance(data.get("post_id"), str):
            # Models often echo the id as the feed prints it: "[post:abc]" or "post:abc".
            data = {**data, "post_id": data["post_id"].strip("[] ").removeprefix("post:")}
        decision = super().parse(data)
        known = {item.post_id for item in parse_feed(self.feed_text)}
        if decision.post_id is not None and decision.post_id not in known:
            if decision.action == "skip":
                return decision.model_copy(update={"post_id": None})
            raise EngineOutputError(
                f"decision names post {decision.post_id!r}, which is not in the feed "
                f"({', '.join(sorted(known)) or 'empty'})",
                raw=str(data)[:500],
            )
        return decision

    def run_local(self, kit: LocalKit) -> Decision:
        items = [i for i in parse_feed(self.feed_text) if i.post_id not in self.acted_on]
        if not items or not self.interests:
            return Decision(action="skip", reason="nothing new in the feed (local engine)")
        post_vectors = kit.embedder.embed([item.text for item in items])
        interest_vectors = kit.embedder.embed(list(self.interests))
        similarity = interest_vectors @ post_vectors.T  # interests x posts
        best_post = int(np.argmax(similarity.max(axis=0)))
        best_interest = int(np.argmax(similarity[:, best_post]))
        score = float(similarity[best_interest, best_post])
        return _local_decision(items[best_post], self.interests[best_interest], score, self.policy)


def _local_decision(item: FeedItem, interest: str, score: float, policy: LocalPolicy) -> Decision:
    why = f"similarity {score:.2f} to interest '{interest}' (local engine: embeddings, no LLM)"
    if score >= policy.share:
        return Decision(action="share", post_id=item.post_id, reason=why)
    if score >= policy.comment:
        text = f"[local engine] Saving this for anyone into {interest}: {item.title}"
        return Decision(action="comment", post_id=item.post_id, text=text, reason=why)
    if score >= policy.like:
        return Decision(action="like", post_id=item.post_id, reason=why)
    return Decision(action="skip", reason=f"best match only {why}")


class SocialAgent:
    """A named agent with interests and a persona, deciding through an injected engine."""

    def __init__(
        self,
        name: str,
        interests: Sequence[str],
        persona: str,
        engine: Engine,
        *,
        policy: LocalPolicy | None = None,
    ) -> None:
        cleaned = tuple(i.strip() for i in interests if i and i.strip())
        if not cleaned:
            raise ValueError(f"agent {name!r} needs at least one interest")
        self.name = name
        self.interests = list(cleaned)
        self.persona = persona
        self.engine = engine
        self.policy = policy or LocalPolicy()
        self.acted_on: set[str] = set()
        self.usage = Usage()

    async def decide(self, feed_text: str) -> Decision:
        """Read a formatted feed (``format_feed_for_prompt``) and decide one action."""
        task = DecideTask(
            agent=self.name,
            persona=self.persona,
            interests=tuple(self.interests),
            feed_text=feed_text,
            acted_on=frozenset(self.acted_on),
            policy=self.policy,
        )
        reply = await self.engine.run(task)
        self.usage.add(reply.usage)
        decision = reply.output
        if decision.action != "skip" and decision.post_id is not None:
            self.acted_on.add(decision.post_id)
        return decision
