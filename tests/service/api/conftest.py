"""A real app over the bundled demo data, shared by the API tests of a module (the local
engine loads its model once), and small helpers to read jobs and event streams."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from crowdsift.core.config import Settings
from crowdsift.service.api.app import create_app


def demo_settings(home: Path, **overrides: Any) -> Settings:
    """Local engine, demo archive, fast hashing feed index, all under ``home``."""
    return Settings(home=home, engine="local", feed_embedder="hashing", **overrides)


@pytest.fixture(scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("api-home")


@pytest.fixture(scope="module")
def client(module_home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(demo_settings(module_home))) as test_client:
        yield test_client


def wait_done(client: TestClient, job_id: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/api/research/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")


def read_events(
    client: TestClient, job_id: str, headers: dict[str, str] | None = None
) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(event, id, data) for every message of the job's stream, until it closes."""
    messages: list[tuple[str, str | None, dict[str, Any]]] = []
    with client.stream("GET", f"/api/research/{job_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if fields:
                    messages.append((fields["event"], fields.get("id"), json.loads(fields["data"])))
                fields = {}
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
    return messages
