"""The gate judges a thread by its title, its text and its best-voted replies."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.engines.base import LocalKit
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.gate.judge import (
    GateItem,
    RelevanceTask,
    RelevanceVerdicts,
    judge,
)
from crowdsift.pipeline.reddit.branch import RedditDeps, run_reddit
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from tests.pipeline.gate.test_gate import post as gate_post
from tests.sources.archive.conftest import comment, post, write_dump

QUESTION = "Which kayak is the most stable for a beginner?"


def test_a_model_reads_the_best_replies_fenced_after_the_post() -> None:
    engine = ScriptedEngine([RelevanceVerdicts(relevant=[True])])
    item = gate_post("a", "Boats?", body="What should I buy?")
    result = asyncio.run(
        judge(QUESTION, [item], "archive", engine=engine, replies_of=lambda _: ["A Pelican!"] * 3)
    )
    assert result.relevant == [item]
    [task] = engine.requests
    assert isinstance(task, RelevanceTask)
    [gate_item] = task.items
    assert gate_item.replies == ["A Pelican!", "A Pelican!"]  # the best two
    prompt = task.messages()[1].content
    assert "reply: A Pelican!" in prompt
    assert prompt.index("What should I buy?") < prompt.index("reply: A Pelican!")


def test_the_local_judge_reads_replies_only_where_a_post_has_no_text_of_its_own() -> None:
    """Similarity cannot tell a reply on the subject from one sharing its words; a link post's
    replies are all it says."""
    with_body = GateItem(title="Distro?", snippet="Which Linux distro is stable?" * 3,
                         replies=["kayak kayak"])  # fmt: skip
    assert "kayak" not in with_body.own_text() and "kayak" in with_body.text()
    link = GateItem(title="Look at this", snippet="", replies=["a stable kayak for beginners"])
    assert "kayak" in link.own_text()
    task = RelevanceTask(QUESTION, "archive", (link, GateItem(title="Look at this", snippet="")))
    scores = task.run_local(LocalKit(embedder=HashingEmbedder())).scores
    assert scores[0] > scores[1]  # the replies say what the link post is about


def _dump(tmp_path: Path, records: list[Any], name: str) -> Path:
    return write_dump(tmp_path / name, records)


def test_an_archive_hands_the_judge_each_threads_best_replies(tmp_path: Path) -> None:
    """A link post with no text of its own is judged by what its community replied."""
    posts = [
        post("k1", subreddit="Kayaking", title="Look at this", num_comments=2),
        post(
            "k2",
            subreddit="Kayaking",
            title="Paddles",
            selftext="Carbon or wood paddles for my first kayak, and does the length matter?",
        ),
    ]
    comments = [
        comment("r1", "k1", subreddit="Kayaking", score=40,
                body="A wide sit-on-top kayak is the most stable for a beginner."),
        comment("r2", "k1", subreddit="Kayaking", body="Agreed, stable and cheap.", score=9),
    ]  # fmt: skip
    target = tmp_path / "a.sqlite"
    report = import_files(
        [_dump(tmp_path, posts, "RS.ndjson"), _dump(tmp_path, comments, "RC.ndjson")], target
    )
    assert report.ok
    seen: list[tuple[GateItem, ...]] = []

    def verdicts(task: Any) -> RelevanceVerdicts | dict[str, Any]:
        if isinstance(task, RelevanceTask):
            seen.append(task.items)
            return RelevanceVerdicts(relevant=[True] * len(task.items))
        return {"english_question": "", "keywords": ["kayak"]}

    source = ArchiveSource(target)
    deps = RedditDeps(
        source=source, engine=ScriptedEngine(function=verdicts), config=RedditConfig(),
        candidates=subreddit_profiles(target), search=SearchOptions(page_size=25),
    )  # fmt: skip
    try:
        asyncio.run(run_reddit(QUESTION, deps))
    finally:
        source.close()
    judged = {item.title: item for item in seen[0]}
    assert judged["Look at this"].replies[0].startswith("A wide sit-on-top kayak")
    assert judged["Paddles"].replies == []  # no replies stored, none invented
