"""``crowdsift simulate``: agents read feeds for N rounds and act; every action is recorded.

Each round, every agent gets a feed (preference: its interests; random: a uniform sample;
mixed: one or the other by a seeded coin), the feed is formatted for the prompt, and the agent
decides. Feeds are drawn one after another (``FeedRetriever`` is not thread-safe), decisions
run concurrently (LLM latency overlaps), and records are emitted in agent order, so the same
seed and the same index give byte-identical JSONL. No wall-clock time goes into a record.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crowdsift.core.errors import ConfigError
from crowdsift.core.models import Post
from crowdsift.engines.base import Engine
from crowdsift.feed.agent import Action, Decision, SocialAgent
from crowdsift.feed.formatting import format_feed_for_prompt
from crowdsift.feed.retriever import FeedMode, FeedRetriever

SimulationMode = Literal["preference", "random", "mixed"]


class AgentSpec(BaseModel):
    """One agent in ``agents.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    interests: list[str] = Field(min_length=1)
    persona: str = ""

    @field_validator("interests")
    @classmethod
    def _non_blank(cls, interests: list[str]) -> list[str]:
        cleaned = [i.strip() for i in interests if i.strip()]
        if not cleaned:
            raise ValueError("at least one non-blank interest is needed")
        return cleaned


class ActionRecord(BaseModel):
    """One line of the actions JSONL."""

    round: int
    agent: str
    mode: FeedMode
    feed: list[str] = Field(description="post ids shown, in feed order")
    action: Action
    post_id: str | None
    text: str | None
    reason: str
    engine: str


class PostEngagement(BaseModel):
    post_id: str
    title: str
    url: str
    actions: int
    by_action: dict[str, int]


class SimulationSummary(BaseModel):
    """Actions per agent and the most-engaged posts (likes, comments and shares)."""

    rounds: int
    mode: SimulationMode
    seed: int
    engine: str
    per_agent: dict[str, dict[str, int]]
    top_posts: list[PostEngagement]


def load_agents(path: Path) -> list[AgentSpec]:
    """Read ``agents.yaml``: a list of agents, or ``{agents: [...]}``; errors name the field."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"agents file {path} does not exist") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{path} is not valid YAML: {exc.problem}{where}") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read agents file {path}: {exc}") from exc
    if isinstance(data, dict) and "agents" in data:
        data = data["agents"]
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{path} must hold a non-empty list of agents "
            "(each with name, interests and persona); see examples/agents.yaml"
        )
    agents = []
    for index, item in enumerate(data, start=1):
        try:
            agents.append(AgentSpec.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "agent"
            raise ConfigError(f"{path}: agent #{index}: {where}: {first['msg']}") from exc
    names = Counter(agent.name for agent in agents)
    if duplicated := [name for name, count in names.items() if count > 1]:
        raise ConfigError(f"{path}: agent names must be unique; repeated: {duplicated}")
    return agents


async def run_simulation(
    specs: Sequence[AgentSpec],
    retriever: FeedRetriever,
    engine: Engine,
    *,
    rounds: int,
    mode: SimulationMode = "preference",
    seed: int = 0,
    emit: Callable[[ActionRecord], None] = lambda _record: None,
) -> SimulationSummary:
    """Run the rounds; ``emit`` receives each record as soon as its round is done."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    coin = random.Random(f"{seed}:mode")
    agents = [SocialAgent(s.name, s.interests, s.persona, engine) for s in specs]
    shown: dict[str, Post] = {}
    records: list[ActionRecord] = []
    for round_number in range(1, rounds + 1):
        feeds: list[tuple[FeedMode, list[Post]]] = []
        for agent in agents:
            chosen = _mode_for(mode, coin)
            feed = retriever.get_feed(agent.interests if chosen == "preference" else None, chosen)
            shown.update((post.id, post) for post in feed)
            feeds.append((chosen, feed))
        decisions = await asyncio.gather(
            *(
                agent.decide(format_feed_for_prompt(feed))
                for agent, (_, feed) in zip(agents, feeds, strict=True)
            )
        )
        for agent, (chosen, feed), decision in zip(agents, feeds, decisions, strict=True):
            record = _record(round_number, agent, chosen, feed, decision, engine.name)
            records.append(record)
            emit(record)
    return summarise(records, shown, rounds=rounds, mode=mode, seed=seed, engine=engine.name)


def _mode_for(mode: SimulationMode, coin: random.Random) -> FeedMode:
    if mode == "mixed":
        return "preference" if coin.random() < 0.5 else "random"
    return mode


def _record(
    round_number: int,
    agent: SocialAgent,
    mode: FeedMode,
    feed: list[Post],
    decision: Decision,
    engine: str,
) -> ActionRecord:
    return ActionRecord(
        round=round_number,
        agent=agent.name,
        mode=mode,
        feed=[post.id for post in feed],
        action=decision.action,
        post_id=decision.post_id,
        text=decision.text,
        reason=decision.reason,
        engine=engine,
    )


def summarise(
    records: Sequence[ActionRecord],
    posts: dict[str, Post],
    *,
    rounds: int,
    mode: SimulationMode,
    seed: int,
    engine: str,
    top: int = 5,
) -> SimulationSummary:
    """Pure: counts per agent and action, and the posts with the most non-skip actions."""
    per_agent: dict[str, dict[str, int]] = {}
    engaged: dict[str, Counter[str]] = {}
    for record in records:
        counts = per_agent.setdefault(
            record.agent, dict.fromkeys(("like", "comment", "share", "skip"), 0)
        )
        counts[record.action] += 1
        if record.action != "skip" and record.post_id is not None:
            engaged.setdefault(record.post_id, Counter())[record.action] += 1
    ranked = sorted(engaged.items(), key=lambda item: (-sum(item[1].values()), item[0]))[:top]
    top_posts = [
        PostEngagement(
            post_id=post_id,
            title=posts[post_id].title if post_id in posts else "",
            url=posts[post_id].url if post_id in posts else "",
            actions=sum(counter.values()),
            by_action=dict(sorted(counter.items())),
        )
        for post_id, counter in ranked
    ]
    return SimulationSummary(
        rounds=rounds, mode=mode, seed=seed, engine=engine, per_agent=per_agent, top_posts=top_posts
    )
