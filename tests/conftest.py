"""Fixtures shared by the whole suite: isolated data dirs and the real local PostgreSQL."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from crowdsift.core.config import get_settings
from crowdsift.core.log import configure_logging
from tests.support.net import free_port, wait_for_http

POSTGRES_URL = os.environ.get(
    "CROWDSIFT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
_CROWDSIFT_VARS = (
    "REDDIT_CLIENT_ID", "REDDIT_CLIENT_SECRET", "REDDIT_USERNAME", "REDDIT_PASSWORD",
    "REDDIT_USER_AGENT", "REDDIT_API_BASE_URL", "REDDIT_AUTH_URL", "ARCTIC_SHIFT_BASE_URL",
    "CROWDSIFT_DATABASE_URL", "CROWDSIFT_ARCHIVE", "CROWDSIFT_SOURCE", "CROWDSIFT_ENGINE",
    "CROWDSIFT_LLM_BASE_URL", "CROWDSIFT_LLM_API_KEY", "CROWDSIFT_EMBEDDING_MODEL",
    "MAP_MAX_PARALLEL", "MEDIUM_SCORE_THRESHOLD", "MEDIUM_MAX_SELECTED_POSTS",
    "MODEL_FILTER", "MODEL_SYNTHESIS", "MODEL_ANALYSIS", "MODEL_MAP", "MODEL_MEDIUM_SCORING",
    "MODEL_COMMENT_GROUPS", "MODEL_DRIFT_ANALYSIS", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "YOUTUBE_API_KEY", "YOUTUBE_API_BASE_URL", "AMAZON_CREDENTIAL_ID", "AMAZON_CREDENTIAL_SECRET",
    "AMAZON_CREDENTIAL_VERSION", "AMAZON_PARTNER_TAG", "AMAZON_MARKETPLACE",
    "AMAZON_API_BASE_URL", "AMAZON_AUTH_URL", "OTEL_EXPORTER_OTLP_ENDPOINT",
)  # fmt: skip


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own CROWDSIFT_HOME and none of the developer's credentials."""
    home = tmp_path / "crowdsift-home"
    monkeypatch.setenv("CROWDSIFT_HOME", str(home))
    for name in _CROWDSIFT_VARS:
        monkeypatch.delenv(name, raising=False)
    # reddit-api refuses to run without a user agent naming its operator; tests talk to local
    # servers only, so they say so (a test of that refusal deletes it)
    monkeypatch.setenv("REDDIT_USER_AGENT", "test:crowdsift-tests:0 (local protocol servers)")
    # no test downloads the embedding model from huggingface.co (a test of the download path
    # unsets this and serves its own model on 127.0.0.1)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in [n for n in os.environ if n.startswith("CROWDSIFT_") and n != "CROWDSIFT_HOME"]:
        if not name.startswith("CROWDSIFT_TEST_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield home
    get_settings.cache_clear()
    configure_logging()  # a test may have pointed logs at a stream that is now closed


@pytest.fixture(scope="session")
def dead_port() -> Iterator[int]:
    """A loopback port bound but never listening: every connection is refused at once, and
    nothing else can take the port while the suite runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(autouse=True)
def no_real_arctic_shift(
    isolated_environment: Path, dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--source auto`` (the default) tries Arctic Shift: unless a test points it at a server
    of its own, it gets a dead local address, never the real API."""
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://127.0.0.1:{dead_port}")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema in the machine's PostgreSQL (database `test`), dropped afterwards."""
    schema = f"crowdsift_test_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(sqlalchemy.text(f'CREATE SCHEMA "{schema}"'))
    except sqlalchemy.exc.OperationalError as exc:  # pragma: no cover - environment problem
        admin.dispose()
        pytest.fail(f"PostgreSQL at {POSTGRES_URL} is not reachable: {exc}")
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(sqlalchemy.text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


CHROMA = Path(sys.executable).with_name("chroma")


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` server on 127.0.0.1 (the binary ships with the chromadb package)."""
    if not CHROMA.exists():
        pytest.fail(f"{CHROMA} missing: chromadb's server binary should be installed")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    process = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/api/v2/heartbeat", timeout=30)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)
