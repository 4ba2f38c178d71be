"""Fixtures for feed tests: real Chroma collections (ephemeral and persistent) and posts."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from crowdsift.core.models import Post
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.testing.factories import make_post

TOPICS = {
    "crypto": "Bitcoin wallet security and crypto exchange fees",
    "cooking": "Sourdough bread baking with a cast iron dutch oven",
    "gardening": "Growing tomatoes in raised garden beds with compost",
    "laptops": "Choosing a lightweight laptop for programming and battery life",
}


@pytest.fixture
def topic_posts() -> list[Post]:
    """Three posts per topic, ids like 'crypto0'."""
    return [
        make_post(f"{topic}{n}", f"{text} part {n}", f"More about {text.lower()} ({n}).")
        for topic, text in TOPICS.items()
        for n in range(3)
    ]


@pytest.fixture
def hashing_function() -> CrowdsiftEmbeddingFunction:
    return CrowdsiftEmbeddingFunction("hashing")


@pytest.fixture
def ephemeral_collection(hashing_function: CrowdsiftEmbeddingFunction) -> Iterator[Any]:
    """A fresh collection in Chroma's in-process client (clients share state: unique names)."""
    client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
    name = f"test_{uuid.uuid4().hex[:12]}"
    collection = client.create_collection(name, embedding_function=hashing_function)  # type:
    # ignore[arg-type]
    yield collection
    client.delete_collection(name)


@pytest.fixture
def persistent_factory(
    tmp_path: Path, hashing_function: CrowdsiftEmbeddingFunction
) -> Callable[[], Any]:
    """Opens (or reopens) one on-disk collection, as a later process would."""
    path = tmp_path / "chroma"

    def open_it() -> Any:
        client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        open_it.client = client  # type: ignore[attr-defined]
        return client.get_or_create_collection("posts", embedding_function=hashing_function)  # type: ignore[arg-type]

    return open_it


SLOT_TABLES: dict[Any, Any] = {}


def new_retriever(collection: Any, *args: Any, **kwargs: Any) -> FeedRetriever:
    """A FeedRetriever with the slot table when the fixture gave the collection one."""
    return FeedRetriever(collection, *args, slots=SLOT_TABLES.get(collection.id), **kwargs)


@pytest.fixture(params=["ephemeral", "persistent", "persistent+slots"])
def collection(
    request: pytest.FixtureRequest, ephemeral_collection: Any, persistent_factory: Callable[[], Any]
) -> Iterator[Any]:
    """Real Chroma collections: in-process, on disk, and on disk with a slot table."""
    if request.param == "ephemeral":
        yield ephemeral_collection
        return
    main = persistent_factory()
    if request.param == "persistent+slots":
        SLOT_TABLES[main.id] = persistent_factory.client.get_or_create_collection("posts_slots")  # type: ignore[attr-defined]
    yield main
    SLOT_TABLES.pop(main.id, None)
