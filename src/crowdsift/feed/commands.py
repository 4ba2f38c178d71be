"""What ``crowdsift index``, ``feed`` and ``simulate`` do, apart from argument parsing.

Kept out of ``cli.py`` so Chroma and the embedding model are imported only when a feed command
runs (``crowdsift --help`` stays instant), and so programs can call these directly.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.models import Post
from crowdsift.engines.factory import EngineChoice, build_engine
from crowdsift.feed.retriever import FeedMode, FeedRetriever
from crowdsift.feed.simulation import (
    ActionRecord,
    SimulationMode,
    SimulationSummary,
    load_agents,
    run_simulation,
)

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

    from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction

CHUNK = 256


class EmptyIndexError(CrowdsiftError):
    """The feed index has no posts yet."""


class IndexReport(BaseModel):
    """What ``crowdsift index`` did."""

    source: str
    collection: str
    location: str
    read: int = 0
    indexed: int = 0
    skipped: list[str] = Field(default_factory=list, description="'<id>: <why>' per dropped post")
    total_in_index: int = 0
    seconds: float = 0.0
    posts_per_second: float = 0.0


def location(settings: Settings) -> str:
    return settings.chroma_url or str(settings.chroma_dir)


def open_retriever(
    settings: Settings,
    *,
    feed_size: int | None = None,
    mode: FeedMode = "preference",
    seed: int | None = None,
    embedding_function: CrowdsiftEmbeddingFunction | None = None,
    client: ClientAPI | None = None,
) -> FeedRetriever:
    from crowdsift.feed.store import open_feed

    collection, slots = open_feed(settings, embedding_function=embedding_function, client=client)
    return FeedRetriever(
        collection,
        feed_size=settings.feed_size if feed_size is None else feed_size,
        default_mode=mode,
        rng=random.Random(seed) if seed is not None else None,
        slots=slots,
    )


def run_index(
    settings: Settings,
    *,
    fetch_result: Path | None = None,
    archive: Path | None = None,
    clear: bool = False,
    on_total: Callable[[int], None] = lambda _total: None,
    on_progress: Callable[[int], None] = lambda _done: None,
) -> IndexReport:
    """Index a FetchResult file, or an archive (explicit, configured, imported, else demo)."""
    skipped: list[str] = []
    posts, total, source = _posts_to_index(settings, fetch_result, archive, skipped)
    on_total(total)
    from crowdsift.feed.store import close_client, open_client

    client = open_client(settings)
    try:
        return _index(
            settings,
            open_retriever(settings, client=client),
            posts,
            skipped,
            source,
            clear,
            on_progress,
        )
    finally:
        close_client(client)


def _index(
    settings: Settings,
    retriever: FeedRetriever,
    posts: Iterable[Post],
    skipped: list[str],
    source: str,
    clear: bool,
    on_progress: Callable[[int], None],
) -> IndexReport:
    if clear:
        retriever.clear()
    report = IndexReport(
        source=source, collection=settings.chroma_collection, location=location(settings)
    )
    started = time.perf_counter()
    for chunk in _chunks(posts, CHUNK):
        retriever.add_posts(chunk)
        report.indexed += len(chunk)
        on_progress(report.indexed + len(skipped))
    report.seconds = round(time.perf_counter() - started, 3)
    report.read = report.indexed + len(skipped)
    report.skipped = skipped
    report.total_in_index = retriever.count()
    report.posts_per_second = round(report.indexed / report.seconds, 1) if report.seconds else 0.0
    return report


def _posts_to_index(
    settings: Settings, fetch_result: Path | None, archive: Path | None, skipped: list[str]
) -> tuple[Iterable[Post], int, str]:
    from crowdsift.feed.sources import (
        count_archive_posts,
        iter_archive_posts,
        posts_from_fetch_result,
    )

    if fetch_result is not None:
        posts = posts_from_fetch_result(fetch_result)
        return posts, len(posts), str(fetch_result)
    from crowdsift.pipeline.fetch.filtering import FilterConfig
    from crowdsift.sources.archive.paths import resolve_archive_path

    path, is_demo = resolve_archive_path(settings, archive)
    stream = iter_archive_posts(
        path,
        FilterConfig.from_settings(settings),
        max_comments=settings.max_comments_per_post,
        rejected=skipped,
    )
    label = f"{path} (bundled demo archive)" if is_demo else str(path)
    return stream, count_archive_posts(path), label


def _chunks(items: Iterable[Post], size: int) -> Iterator[list[Post]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def run_feed(
    settings: Settings,
    *,
    interests: list[str] | None,
    mode: FeedMode,
    size: int | None = None,
    seed: int | None = None,
) -> list[Post]:
    """One feed from the index; an empty index is a CrowdsiftError that says what to run."""
    retriever = open_retriever(settings, feed_size=size, mode=mode, seed=seed)
    return feed_or_explain(retriever, interests, mode)


def feed_or_explain(
    retriever: FeedRetriever,
    interests: list[str] | None,
    mode: FeedMode,
    *,
    size: int | None = None,
) -> list[Post]:
    """``get_feed``, with an empty index turned into an error that says what to run."""
    try:
        return retriever.get_feed(interests, mode, size=size)
    except RuntimeError as exc:
        raise EmptyIndexError(
            f"{exc}: the feed index has no posts yet; run `crowdsift index` (the bundled demo "
            "archive) or `crowdsift index RESULT.json` first"
        ) from exc


async def run_simulate(
    settings: Settings,
    *,
    agents_file: Path,
    rounds: int,
    mode: SimulationMode,
    seed: int,
    out: Path,
    size: int | None = None,
    engine_choice: EngineChoice | None = None,
) -> SimulationSummary:
    """Run a simulation over the index, writing one JSON line per action to ``out``."""
    specs = load_agents(agents_file)
    engine = build_engine(settings, engine_choice)
    try:
        retriever = open_retriever(
            settings,
            feed_size=size,
            seed=seed,
            embedding_function=_shared_embedding_function(settings, engine),
        )
        if retriever.count() == 0:
            feed_or_explain(retriever, None, "random")
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as sink:

            def emit(record: ActionRecord) -> None:
                sink.write(record.model_dump_json() + "\n")
                sink.flush()

            return await run_simulation(
                specs, retriever, engine, rounds=rounds, mode=mode, seed=seed, emit=emit
            )
    finally:
        await engine.aclose()


def _shared_embedding_function(
    settings: Settings, engine: object
) -> CrowdsiftEmbeddingFunction | None:
    """With the local engine and the MiniLM index, load the model once for both."""
    from crowdsift.engines.local import LocalEngine
    from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction

    if isinstance(engine, LocalEngine) and settings.feed_embedder == "minilm":
        return CrowdsiftEmbeddingFunction(
            "minilm", model=settings.embedding_model, embedder=engine.kit.embedder
        )
    return None


def default_actions_path(settings: Settings, agents_file: Path, seed: int) -> Path:
    return settings.data_dir / "simulations" / f"{agents_file.stem}-seed{seed}.jsonl"
