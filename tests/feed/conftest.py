"""Fixtures for feed tests: real Chroma collections (ephemeral and persistent) and posts."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.models import Post
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
    collection = client.create_collection(name, embedding_function=hashing_function)  # type: ignore[arg-type]
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
        return client.get_or_create_collection("posts", embedding_function=hashing_function)  # type: ignore[arg-type]

    return open_it


@pytest.fixture(params=["ephemeral", "persistent"])
def collection(
    request: pytest.FixtureRequest, ephemeral_collection: Any, persistent_factory: Callable[[], Any]
) -> Any:
    """Both kinds of real Chroma collection."""
    if request.param == "ephemeral":
        return ephemeral_collection
    return persistent_factory()
