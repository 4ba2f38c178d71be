"""Simulations: agents.yaml loading, seeded rounds over a real Chroma index, and the summary."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import ConfigError, EngineOutputError
from crowdsift.core.models import Post
from crowdsift.engines.base import Engine, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.feed import commands
from crowdsift.feed.agent import DecideTask
from crowdsift.feed.commands import EmptyIndexError, open_retriever, run_simulate
from crowdsift.feed.formatting import parse_feed
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.feed.simulation import (
    ActionRecord,
    AgentSpec,
    SimulationMode,
    SimulationSummary,
    load_agents,
    run_simulation,
    summarise,
)
from crowdsift.testing.factories import make_post

EXAMPLE_AGENTS = Path(__file__).resolve().parents[2] / "examples" / "agents.yaml"
SPECS = [
    AgentSpec(name="baker", interests=["sourdough bread", "dutch oven"]),
    AgentSpec(name="hodler", interests=["bitcoin wallet", "crypto exchange"]),
    AgentSpec(name="grower", interests=["tomatoes", "raised garden beds"], persona="Green thumb."),
]
TOPIC_OF = {"baker": "cooking", "hodler": "crypto", "grower": "gardening"}


# --- agents.yaml -----------------------------------------------------------------------------


def test_the_example_agents_file_loads() -> None:
    agents = load_agents(EXAMPLE_AGENTS)

    assert [a.name for a in agents] == ["maya", "dev", "sam", "priya"]
    assert agents[0].interests == ["voice recorder", "meeting transcription", "note taking"]
    assert agents[0].persona.startswith("A journalist")
    assert all(a.interests and a.persona for a in agents)


@pytest.mark.parametrize(
    "content",
    [
        "- name: ann\n  interests: [crypto]\n- name: bob\n  interests: [' tomatoes ', '']\n",
        "agents:\n  - name: ann\n    interests: [crypto]\n  - {name: bob, interests: [tomatoes]}\n",
    ],
    ids=["list", "mapping"],
)
def test_agents_may_be_a_list_or_under_an_agents_key(tmp_path: Path, content: str) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(content)

    agents = load_agents(path)

    assert agents == [
        AgentSpec(name="ann", interests=["crypto"], persona=""),
        AgentSpec(name="bob", interests=["tomatoes"], persona=""),
    ]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, ["does not exist"]),
        ("agents: [name: ann\n  - {", ["is not valid YAML", "line 2"]),
        ("", ["must hold a non-empty list of agents", "examples/agents.yaml"]),
        ("agents: []\n", ["must hold a non-empty list of agents"]),
        ("agents:\n", ["must hold a non-empty list"]),
        ("just a string\n", ["must hold a non-empty list"]),
        ("{ann: {interests: [x]}}\n", ["must hold a non-empty list"]),
        (
            "- {name: ann, interests: [x]}\n- {name: bob, persona: no interests}\n",
            ["agent #2: interests: Field required"],
        ),
        (
            "- {name: ann, interests: [x]}\n- {name: bob, interests: ['  ', '']}\n",
            ["agent #2: interests", "non-blank interest"],
        ),
        ("- {name: ann, interests: []}\n", ["agent #1: interests", "at least 1 item"]),
        ("- {name: ann, interests: crypto}\n", ["agent #1: interests", "valid list"]),
        ("- {name: '', interests: [x]}\n", ["agent #1: name"]),
        ("- {name: ann, interests: [x], mood: grumpy}\n", ["agent #1: mood", "Extra inputs"]),
        ("- ann\n", ["agent #1: agent", "valid dictionary"]),
        (
            "- {name: ann, interests: [x]}\n- {name: bob, interests: [y]}\n"
            "- {name: ann, interests: [z]}\n",
            ["agent names must be unique", "'ann'"],
        ),
    ],
)
def test_bad_agents_files_are_config_errors_naming_the_file(
    tmp_path: Path, content: str | None, words: list[str]
) -> None:
    path = tmp_path / "agents.yaml"
    if content is not None:
        path.write_text(content)

    with pytest.raises(ConfigError) as caught:
        load_agents(path)

    message = str(caught.value)
    assert str(path) in message
    for word in words:
        assert word in message


def test_an_unreadable_agents_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_bytes(b"- name: \xff\xfe\n")

    with pytest.raises(ConfigError, match="cannot read agents file"):
        load_agents(path)


# --- run_simulation over a real Chroma collection --------------------------------------------


@pytest.fixture
def indexed(ephemeral_collection: Any, topic_posts: list[Post]) -> Any:
    FeedRetriever(ephemeral_collection).add_posts(topic_posts)
    return ephemeral_collection


def simulate(
    collection: Any,
    *,
    rounds: int = 3,
    mode: SimulationMode = "preference",
    seed: int = 0,
    engine: Engine | None = None,
    specs: list[AgentSpec] = SPECS,
) -> tuple[list[ActionRecord], SimulationSummary]:
    """Seed the retriever as ``run_simulate`` does, and collect the emitted records."""
    retriever = FeedRetriever(collection, feed_size=3, rng=random.Random(seed))
    records: list[ActionRecord] = []
    summary = asyncio.run(
        run_simulation(
            specs,
            retriever,
            engine or LocalEngine(embedder=HashingEmbedder()),
            rounds=rounds,
            mode=mode,
            seed=seed,
            emit=records.append,
        )
    )
    return records, summary


def test_every_round_every_agent_gets_a_feed_and_one_record(indexed: Any) -> None:
    records, summary = simulate(indexed, rounds=3)

    assert [(r.round, r.agent) for r in records] == [
        (n, spec.name) for n in (1, 2, 3) for spec in SPECS
    ]
    for record in records:
        assert record.mode == "preference"
        assert record.engine == "local"
        assert len(record.feed) == 3
        assert {post_id.rstrip("012") for post_id in record.feed} == {TOPIC_OF[record.agent]}
        if record.action != "skip":
            assert record.post_id in record.feed
        assert (record.text is not None) == (record.action == "comment")
        assert "local engine" in record.reason
    assert summary.rounds == 3 and summary.mode == "preference" and summary.seed == 0
    assert summary.engine == "local"
    assert (
        summary.per_agent
        == summarise(records, {}, rounds=3, mode="preference", seed=0, engine="local").per_agent
    )


def test_agents_move_on_to_new_posts_across_rounds(indexed: Any) -> None:
    records, _ = simulate(indexed, rounds=4)

    for spec in SPECS:
        acted = [r.post_id for r in records if r.agent == spec.name and r.action != "skip"]
        assert len(acted) == len(set(acted))  # never the same post twice
    busiest = max(
        sum(1 for r in records if r.agent == s.name and r.action != "skip") for s in SPECS
    )
    assert busiest >= 2  # the check above had something to check


def test_the_same_seed_gives_identical_records(indexed: Any) -> None:
    for mode in ("preference", "random", "mixed"):
        first, first_summary = simulate(indexed, mode=mode, seed=11)
        second, second_summary = simulate(indexed, mode=mode, seed=11)

        assert [r.model_dump() for r in first] == [r.model_dump() for r in second]
        assert first_summary == second_summary


def test_a_different_seed_gives_different_random_feeds(indexed: Any) -> None:
    one, _ = simulate(indexed, mode="random", seed=1)
    two, _ = simulate(indexed, mode="random", seed=2)

    assert [r.feed for r in one] != [r.feed for r in two]
    assert all(r.mode == "random" for r in one + two)
    assert all(len(set(r.feed)) == 3 for r in one + two)


def test_mixed_mode_uses_both_feeds_by_a_seeded_coin(indexed: Any) -> None:
    records, summary = simulate(indexed, mode="mixed", seed=0, rounds=4)
    again, _ = simulate(indexed, mode="mixed", seed=0, rounds=4)
    other, _ = simulate(indexed, mode="mixed", seed=1, rounds=4)

    assert summary.mode == "mixed"
    assert {r.mode for r in records} == {"preference", "random"}
    assert [r.mode for r in records] == [r.mode for r in again]
    assert [r.mode for r in records] != [r.mode for r in other]
    for record in records:
        if record.mode == "preference":
            assert {p.rstrip("012") for p in record.feed} == {TOPIC_OF[record.agent]}


def test_the_engine_sees_each_agent_its_own_formatted_feed(indexed: Any) -> None:
    engine = ScriptedEngine(function=lambda _task: {"action": "skip", "reason": "scripted"})

    records, summary = simulate(indexed, rounds=2, engine=engine)

    assert len(engine.requests) == 2 * len(SPECS)
    for task, record in zip(engine.requests, records, strict=True):
        assert isinstance(task, DecideTask)
        assert task.agent == record.agent
        assert [i.post_id for i in parse_feed(task.feed_text)] == record.feed
    grower = next(t for t in engine.requests if isinstance(t, DecideTask) and t.agent == "grower")
    assert grower.persona == "Green thumb."
    assert grower.interests == ("tomatoes", "raised garden beds")
    assert summary.engine == "scripted"
    assert summary.top_posts == []
    assert all(r.action == "skip" and r.engine == "scripted" for r in records)


def test_top_posts_carry_the_shown_posts_titles_and_links(
    indexed: Any, topic_posts: list[Post]
) -> None:
    records, summary = simulate(indexed, rounds=2)
    by_id = {post.id: post for post in topic_posts}

    assert summary.top_posts
    engaged = {r.post_id for r in records if r.action != "skip"}
    for post in summary.top_posts:
        assert post.post_id in engaged
        assert post.title == by_id[post.post_id].title
        assert post.url == by_id[post.post_id].url


@pytest.mark.parametrize("rounds", [0, -1])
def test_rounds_below_one_are_refused(indexed: Any, rounds: int) -> None:
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        simulate(indexed, rounds=rounds)


# --- summarise is pure -----------------------------------------------------------------------


def record(agent: str, action: str, post_id: str | None, round_: int = 1) -> ActionRecord:
    return ActionRecord(
        round=round_,
        agent=agent,
        mode="preference",
        feed=["p1", "p2", "p3"],
        action=action,
        post_id=post_id,
        text="hi" if action == "comment" else None,
        reason="",
        engine="scripted",
    )


HAND_MADE = [
    record("ann", "like", "p2"),
    record("ann", "share", "p1"),
    record("ann", "skip", None),
    record("bob", "comment", "p1"),
    record("bob", "like", "p3"),
    record("bob", "skip", "p2"),  # a skip that names a post is not engagement
    record("cat", "like", "p2"),
    record("cat", "like", "p1"),
    record("cat", "share", "p9"),  # never shown: no title or link to give
]


def test_summarise_counts_actions_per_agent() -> None:
    summary = summarise(HAND_MADE, {}, rounds=1, mode="preference", seed=5, engine="scripted")

    assert summary.per_agent == {
        "ann": {"like": 1, "comment": 0, "share": 1, "skip": 1},
        "bob": {"like": 1, "comment": 1, "share": 0, "skip": 1},
        "cat": {"like": 2, "comment": 0, "share": 1, "skip": 0},
    }
    assert list(summary.per_agent) == ["ann", "bob", "cat"]
    assert (summary.rounds, summary.mode, summary.seed, summary.engine) == (
        1,
        "preference",
        5,
        "scripted",
    )


def test_summarise_ranks_posts_by_engagement_then_id() -> None:
    posts = {p.id: p for p in (make_post("p1", "One"), make_post("p2", "Two"))}

    summary = summarise(HAND_MADE, posts, rounds=1, mode="random", seed=0, engine="scripted")

    assert [(p.post_id, p.actions) for p in summary.top_posts] == [
        ("p1", 3),
        ("p2", 2),
        ("p3", 1),
        ("p9", 1),
    ]
    first = summary.top_posts[0]
    assert first.by_action == {"comment": 1, "like": 1, "share": 1}
    assert first.title == "One" and first.url == posts["p1"].url
    assert summary.top_posts[3].title == "" and summary.top_posts[3].url == ""


def test_summarise_by_action_and_top_limit() -> None:
    summary = summarise(HAND_MADE, {}, rounds=1, mode="random", seed=0, engine="x", top=2)

    assert [p.post_id for p in summary.top_posts] == ["p1", "p2"]
    assert summary.top_posts[0].by_action == {"comment": 1, "like": 1, "share": 1}
    assert summary.top_posts[1].by_action == {"like": 2}


def test_summarise_of_nothing_is_empty() -> None:
    summary = summarise([], {}, rounds=1, mode="preference", seed=0, engine="local")

    assert summary.per_agent == {}
    assert summary.top_posts == []


def test_summarise_does_not_touch_its_inputs() -> None:
    records = list(HAND_MADE)
    dumped = [r.model_dump() for r in records]
    posts = {"p1": make_post("p1", "One")}

    summarise(records, posts, rounds=1, mode="preference", seed=0, engine="x")

    assert [r.model_dump() for r in records] == dumped
    assert list(posts) == ["p1"]


# --- run_simulate: the command's seeded run over the configured index -------------------------


@pytest.fixture
def hashing_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("CROWDSIFT_FEED_EMBEDDER", "hashing")
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.fixture
def engines(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``build_engine`` gives a hashing local engine (no 7 s model load); records choices."""
    built: list[Any] = []

    def build(_settings: Settings, choice: str | None = None) -> Engine:
        engine = LocalEngine(embedder=HashingEmbedder())
        built.append((choice, engine))
        return engine

    monkeypatch.setattr(commands, "build_engine", build)
    return built


def index_topics(settings: Settings, posts: list[Post]) -> None:
    open_retriever(settings).add_posts(posts)


def simulate_command(settings: Settings, out: Path, **options: Any) -> SimulationSummary:
    values: dict[str, Any] = {"rounds": 2, "mode": "random", "seed": 0, "size": 3, **options}
    return asyncio.run(run_simulate(settings, agents_file=EXAMPLE_AGENTS, out=out, **values))


def test_run_simulate_writes_byte_identical_jsonl_for_the_same_seed(
    hashing_settings: Settings, engines: list[Any], topic_posts: list[Post], tmp_path: Path
) -> None:
    index_topics(hashing_settings, topic_posts)

    simulate_command(hashing_settings, tmp_path / "a.jsonl", seed=4, engine_choice="local")
    simulate_command(hashing_settings, tmp_path / "b.jsonl", seed=4)
    simulate_command(hashing_settings, tmp_path / "c.jsonl", seed=5)

    a, b, c = ((tmp_path / f"{n}.jsonl").read_text() for n in "abc")
    assert a == b
    lines = [ActionRecord.model_validate_json(line) for line in a.splitlines()]
    assert len(lines) == 2 * 4  # rounds x agents in examples/agents.yaml
    others = [ActionRecord.model_validate_json(line) for line in c.splitlines()]
    assert [r.feed for r in lines] != [r.feed for r in others]
    assert [choice for choice, _ in engines] == ["local", None, None]


def test_run_simulate_on_an_empty_index_says_what_to_run(
    hashing_settings: Settings, engines: list[Any], tmp_path: Path
) -> None:
    out = tmp_path / "actions.jsonl"

    with pytest.raises(EmptyIndexError, match="run `crowdsift index`"):
        simulate_command(hashing_settings, out)

    assert not out.exists()


def test_run_simulate_keeps_finished_rounds_when_the_engine_fails(
    hashing_settings: Settings,
    topic_posts: list[Post],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index_topics(hashing_settings, topic_posts)
    calls: list[Task[Any]] = []
    closed: list[bool] = []

    def reply(task: Task[Any]) -> Any:
        calls.append(task)
        if len(calls) > 4:  # round 2
            return EngineOutputError("the model went off script")
        return {"action": "skip", "reason": "round one"}

    class ClosingEngine(ScriptedEngine):
        async def aclose(self) -> None:
            closed.append(True)

    monkeypatch.setattr(commands, "build_engine", lambda *_a: ClosingEngine(function=reply))
    out = tmp_path / "actions.jsonl"

    with pytest.raises(EngineOutputError, match="off script"):
        simulate_command(hashing_settings, out)

    kept = [ActionRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [(r.round, r.agent) for r in kept] == [(1, n) for n in ("maya", "dev", "sam", "priya")]
    assert closed == [True]
