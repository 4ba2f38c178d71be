"""Search by meaning in an archive: vectors stored per thread, made incrementally, searched."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crowdsift.cli.archive import app
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.models import SearchPlan
from crowdsift.engines.embedding import HashingEmbedder, MiniLMEmbedder, Vectors
from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.strategies import build_plan
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.archive.vectors import (
    archive_missing_vectors,
    embed_archive,
    thread_text,
)

Dump = Callable[[str, list[Any]], Path]
runner = CliRunner()

# Threads written for these tests: the answering one is titled unlike the question asked.
THREADS = [
    (
        "m1",
        "homelab",
        "Inconsistent quality between runs",
        "Same settings, sometimes great, sometimes garbage. Temperature is 0.7 and seed is random.",
    ),
    ("m2", "homelab", "Best rack for a small closet", "Looking for a 12U rack under 60 cm deep."),
    ("m3", "homelab", "UPS battery swap", "My APC unit beeps; replacing the battery pack."),
    ("m4", "cooking", "Sourdough starter smells like acetone", "Fed it twice a day, still off."),
]
QUESTION = "Why does the same prompt give a much worse answer some of the time?"


def _posts(kit: Any) -> list[dict[str, Any]]:
    return [
        kit.post(pid, subreddit=sub, title=title, selftext=body, created=kit.NOW_TS - i * kit.DAY)
        for i, (pid, sub, title, body) in enumerate(THREADS)
    ]


@pytest.fixture
def archive(tmp_path: Path, dump: Dump, kit: Any) -> Path:
    target = tmp_path / "meaning.sqlite"
    assert import_files([dump("RS_m.ndjson", _posts(kit))], target).ok
    return target


class Renamed:
    """Another model: the same vectors under another identity (what a changed
    CROWDSIFT_EMBEDDING_MODEL looks like to the archive)."""

    def __init__(self, inner: HashingEmbedder, identity: str) -> None:
        self.inner, self.identity, self.name = inner, identity, identity

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)


def test_a_question_phrased_unlike_its_thread_is_found_by_meaning(archive: Path, kit: Any) -> None:
    embedder = MiniLMEmbedder()
    report = embed_archive(archive, embedder)
    assert (report.embedded, report.total) == (4, 4)
    with ArchiveSource(archive, clock=kit.clock, embedder=embedder) as source:
        assert source.searches_meaning()
        by_words = source.search_subreddit("homelab", "prompt OR worse OR answer OR time")
        by_meaning = source.search_meaning("homelab+cooking", QUESTION, limit=3)
    assert by_words.posts == []  # no word of the question is in the thread
    assert [p["id"] for p in by_meaning.posts][:1] == ["m1"]


def test_embedding_is_incremental_and_a_deleted_post_loses_its_vector(
    archive: Path, dump: Dump, kit: Any
) -> None:
    embedder = HashingEmbedder()
    assert embed_archive(archive, embedder).embedded == 4
    assert embed_archive(archive, embedder).embedded == 0  # nothing new: nothing embedded
    more = dump("RS_n.ndjson", [kit.post("m5", subreddit="homelab", title="PoE switch noise")])
    assert import_files([more], archive).ok
    assert archive_missing_vectors(archive) == 1
    assert embed_archive(archive, embedder).embedded == 1
    conn = db.connect(archive)
    try:
        conn.execute("DELETE FROM posts WHERE id = 'm5'")
        assert conn.execute("SELECT count(*) FROM post_vectors").fetchone()[0] == 4
    finally:
        conn.close()


def test_vectors_of_another_model_are_not_compared_and_are_rebuilt(archive: Path, kit: Any) -> None:
    old = Renamed(HashingEmbedder(), "old-model")
    embed_archive(archive, old)
    new = Renamed(HashingEmbedder(), "new-model")
    with ArchiveSource(archive, clock=kit.clock, embedder=new) as source:
        assert not source.searches_meaning()
        assert source.search_meaning("homelab", "rack closet").posts == []
    report = embed_archive(archive, new)
    assert report.rebuilt and report.embedded == 4
    with ArchiveSource(archive, clock=kit.clock, embedder=new) as source:
        assert source.searches_meaning()


def test_no_vectors_or_no_embedder_means_no_search_by_meaning(archive: Path, kit: Any) -> None:
    with ArchiveSource(archive, clock=kit.clock, embedder=HashingEmbedder()) as source:
        assert not source.searches_meaning()  # never embedded
    embed_archive(archive, HashingEmbedder())
    with ArchiveSource(archive, clock=kit.clock) as source:
        assert not source.searches_meaning()  # vectors, but nothing to embed the question


def test_search_by_meaning_keeps_to_the_subreddits_window_and_a_floor(
    archive: Path, kit: Any
) -> None:
    embedder = HashingEmbedder()
    embed_archive(archive, embedder)
    since = kit.NOW - timedelta(days=1, hours=12)  # m1 and m2 only
    with ArchiveSource(archive, clock=kit.clock, embedder=embedder) as source:
        everything = source.search_meaning("homelab+cooking", "sourdough starter acetone")
        homelab = source.search_meaning("homelab", "sourdough starter acetone")
        recent = source.search_meaning("homelab", "rack closet", time_filter="week", limit=10)
        anytime = source.search_meaning("homelab", "UPS battery swap")
        newest = source.search_meaning("homelab", "UPS battery swap", since=since)
    assert [p["id"] for p in everything.posts][:1] == ["m4"]
    assert "m4" not in [p["id"] for p in homelab.posts]  # another subreddit
    assert "m3" not in [p["id"] for p in homelab.posts]  # shares no meaning: under the floor
    assert [p["id"] for p in recent.posts][:1] == ["m2"]
    assert [p["id"] for p in anytime.posts][:1] == ["m3"]
    assert "m3" not in [p["id"] for p in newest.posts]  # older than since


def test_thread_text_is_the_title_and_the_opening() -> None:
    text = thread_text({"title": "A title", "selftext": "word " * 500})
    assert text.startswith("A title word") and len(text) < 320
    assert thread_text({"title": "Only", "selftext": "[removed]"}) == "Only"


def test_cli_import_embeds_a_small_import_and_embed_fills_in(
    dump: Dump, tmp_path: Path, kit: Any, settings_env: Path
) -> None:
    posts = dump("RS_c.ndjson", _posts(kit))
    target = tmp_path / "cli.sqlite"
    skipped = runner.invoke(app, ["import", str(posts), "--archive", str(target), "--no-embed"])
    assert skipped.exit_code == 0, skipped.output
    assert archive_missing_vectors(target) == 4
    filled = runner.invoke(app, ["embed", "--archive", str(target), "--json"])
    assert filled.exit_code == 0, filled.output
    assert json.loads(filled.stdout)["embedded"] == 4
    other = tmp_path / "auto.sqlite"
    auto = runner.invoke(app, ["import", str(posts), "--archive", str(other)])
    assert auto.exit_code == 0, auto.output
    assert "search by meaning: 4 threads embedded" in auto.stderr
    assert archive_missing_vectors(other) == 0


def test_cli_embed_on_a_missing_archive_says_what_to_do(tmp_path: Path, settings_env: Path) -> None:
    result = runner.invoke(app, ["embed", "--archive", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 1
    assert "does not exist" in result.stderr and "crowdsift archive import" in result.stderr


def _plan(kit: Any, *, by_meaning: bool) -> SearchPlan:
    analysis = QueryAnalysis(
        question=QUESTION, language="en", english_question=QUESTION, intent="troubleshooting",
        ai_mode="none", temporal="evergreen", time_filter="all", keywords=["prompt"],
        ai_queries=[], subreddits=["homelab"],
    )  # fmt: skip
    return build_plan(analysis, RedditConfig(), page_size=25, now=kit.NOW, by_meaning=by_meaning)


def test_the_fetcher_runs_the_search_by_meaning_and_keeps_what_it_finds(
    archive: Path, kit: Any
) -> None:
    """The thread that shares no word with the question is searched by meaning, passes the
    fetch's word filter (the relevance gate judges it), and carries its fused rank."""
    embedder = MiniLMEmbedder()
    embed_archive(archive, embedder)
    with ArchiveSource(archive, clock=kit.clock, embedder=embedder) as source:
        fetcher = RedditFetcher(source, options=SearchOptions(), clock=kit.clock)
        words_only = fetcher.search(_plan(kit, by_meaning=False))
        both = fetcher.search(_plan(kit, by_meaning=True))
    assert "m1" not in [c.post.id for c in words_only.candidates]
    found = {c.post.id: c for c in both.candidates}
    assert found["m1"].strategies == ["meaning"] and found["m1"].retrieval == 1.0


class FailsAfter(HashingEmbedder):
    """An embedder that dies after ``batches`` batches (a crash, a Ctrl-C)."""

    def __init__(self, batches: int) -> None:
        super().__init__()
        self.left = batches

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return super().embed(texts)


def test_an_interrupted_embed_keeps_its_finished_batches_and_resumes(
    tmp_path: Path, dump: Dump, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crowdsift.sources.archive import vectors

    monkeypatch.setattr(vectors, "EMBED_BATCH", 2)
    target = tmp_path / "batches.sqlite"
    posts = [kit.post(f"b{n}", title=f"thread number {n}") for n in range(7)]
    assert import_files([dump("RS_b.ndjson", posts)], target).ok
    with pytest.raises(KeyboardInterrupt):
        embed_archive(target, FailsAfter(batches=2))
    assert archive_missing_vectors(target) == 3  # two whole batches of two kept
    assert embed_archive(target, HashingEmbedder()).embedded == 3
