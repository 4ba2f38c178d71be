"""A live source's communities for a question come from the user's directory of real
subreddits, closest first; the formulation keeps that order."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.reddit.branch import RedditDeps, run_reddit
from crowdsift.pipeline.reddit.formulate import formulate
from crowdsift.pipeline.reddit.topicality import SubredditProfile
from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditInfo
from crowdsift.testing.memory_source import MemorySource

NOW = datetime(2026, 11, 27, tzinfo=UTC)
RANKED = (
    SubredditProfile(name="homeassistant", description="Home Assistant automations"),
    SubredditProfile(name="homelab", description="servers at home"),
    SubredditProfile(name="cooking", description="recipes"),
)


def _formulate(engine: Any, *, ranked: bool) -> list[str]:
    outcome = asyncio.run(
        formulate(
            "How do I back up Home Assistant?", engine=engine, candidates=RANKED,
            config=RedditConfig(max_subreddits=2), closed=False, ranked=ranked,
        )
    )  # fmt: skip
    return outcome.analysis.subreddits


def test_the_local_formulation_keeps_the_directorys_order() -> None:
    """The directory ranked names and meaning together: the local engine takes its best."""
    assert _formulate(LocalEngine(embedder=HashingEmbedder()), ranked=True) == [
        "homeassistant",
        "homelab",
    ]


def test_an_engines_valid_picks_among_the_ranked_candidates_win() -> None:
    reply = {"english_question": "", "keywords": ["home assistant"], "subreddits": ["homelab"]}
    assert _formulate(ScriptedEngine([reply]), ranked=True) == ["homelab"]
    nothing = {"english_question": "", "keywords": ["home assistant"], "subreddits": ["!!"]}
    assert _formulate(ScriptedEngine([nothing]), ranked=True) == ["homeassistant", "homelab"]
    # a community it was not shown is checked against what it was shown, and replaced
    unknown = {"english_question": "", "keywords": ["home assistant"], "subreddits": ["crypto"]}
    assert _formulate(ScriptedEngine([unknown]), ranked=True) == ["homeassistant", "homelab"]


def _info(name: str, description: str) -> SubredditInfo:
    return SubredditInfo(
        name=name.lower(), display_name=name, title=name, description=description,
        subscribers=50_000, over18=False,
    )  # fmt: skip


def test_a_live_question_searches_the_directorys_closest_communities(tmp_path: Path) -> None:
    """Not the built-in list: the community the question names, from the user's directory."""
    directory = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            _info("HomeAssistant", "Home Assistant: open source home automation"),
            _info("Sourdough", "bread baking with wild yeast"),
            _info("Cycling", "bikes and rides"),
        ],
    )
    loads: list[int] = []

    def load() -> SubredditDirectory:
        loads.append(1)
        return directory

    source = MemorySource(name="reddit-api")  # a live source, not an archive
    deps = RedditDeps(
        source=source, engine=LocalEngine(embedder=HashingEmbedder()),
        config=RedditConfig(max_subreddits=1), candidates=RANKED[1:], candidates_closed=False,
        directory=load, embedder=HashingEmbedder(), directory_cache=tmp_path,
        clock=lambda: NOW, search=SearchOptions(page_size=25),
    )  # fmt: skip
    run = asyncio.run(run_reddit("How do I back up Home Assistant?", deps))
    assert run.analysis is not None and run.analysis.subreddits == ["homeassistant"]
    assert len(loads) == 1
    # the user's own subreddits never consult (nor build) the directory
    mine = asyncio.run(run_reddit("How do I back up Home Assistant?", deps, subreddits=["x1x"]))
    assert mine.analysis is not None and mine.analysis.subreddits == ["x1x"]
    assert len(loads) == 1
