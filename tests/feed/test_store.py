"""Opening the feed collection: local persistent by default, a real Chroma server by URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError, StoreError
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.feed.store import open_client, open_collection, parse_chroma_url
from crowdsift.testing.factories import make_post
from tests.support.net import free_port


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(home=tmp_path / "home", feed_embedder="hashing", **values)  # type:
    # ignore[arg-type]


def test_default_is_a_persistent_store_under_the_data_dir(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    FeedRetriever(open_collection(settings)).add_post(make_post("loc1", "bitcoin wallets"))

    assert (settings.chroma_dir / "chroma.sqlite3").is_file()
    assert FeedRetriever(open_collection(settings)).count() == 1


def test_chroma_url_uses_the_server(tmp_path: Path, chroma_server: str) -> None:
    settings = _settings(tmp_path, chroma_url=chroma_server, chroma_collection="served_posts")
    retriever = FeedRetriever(open_collection(settings), feed_size=2)
    retriever.clear()
    retriever.add_posts([make_post(f"s{n}", f"sourdough bread {n}") for n in range(3)])

    other_client = open_client(settings)
    assert other_client.get_collection("served_posts").count() == 3
    assert len(retriever.get_feed(["sourdough"])) == 2
    assert len(retriever.get_feed(mode="random")) == 2
    assert not settings.chroma_dir.exists()  # nothing written locally


def test_unreachable_server_is_a_store_error_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StoreError, match=r"cannot reach the Chroma server at http://127\.0\.0\.1"):
        open_collection(_settings(tmp_path, chroma_url=url))


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://host:1", "http://", "http://h:99999"])
def test_bad_chroma_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="CROWDSIFT_CHROMA_URL"):
        parse_chroma_url(url)


def test_chroma_url_defaults() -> None:
    assert parse_chroma_url("http://chroma.internal") == ("chroma.internal", 8000, False)
    assert parse_chroma_url("https://chroma.example.com") == ("chroma.example.com", 443, True)


def test_reopening_with_another_embedder_is_refused(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    open_collection(settings)
    minilm = CrowdsiftEmbeddingFunction(
        "minilm", embedder=CrowdsiftEmbeddingFunction("hashing")._embedder
    )

    with pytest.raises(ConfigError, match="CROWDSIFT_FEED_EMBEDDER"):
        open_collection(settings, embedding_function=minilm)


def test_collection_remembers_its_embedder(tmp_path: Path) -> None:
    """Reopened without an embedding function, Chroma rebuilds ours from the stored config."""
    settings = _settings(tmp_path)
    FeedRetriever(open_collection(settings)).add_post(make_post("cfg1", "garden tomatoes"))

    collection = open_client(settings).get_collection(settings.chroma_collection)

    assert FeedRetriever(collection).get_feed(["tomatoes"])[0].id == "cfg1"
