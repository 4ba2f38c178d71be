"""Opening the feed collection: local persistent by default, a real Chroma server by URL."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from crowdsift.config import Settings
from crowdsift.errors import ConfigError, StoreError
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.feed.store import open_client, open_collection, parse_chroma_url
from crowdsift.testing.factories import make_post

CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` server on 127.0.0.1 (the binary ships with the chromadb package)."""
    if not CHROMA.exists():
        pytest.fail(f"{CHROMA} missing: chromadb's server binary should be installed")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    process = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("chroma server did not start within 30 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(home=tmp_path / "home", feed_embedder="hashing", **values)  # type: ignore[arg-type]


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
    url = f"http://127.0.0.1:{_free_port()}"
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
