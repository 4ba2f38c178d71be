"""``sample_data``: every result the bundled demo archive answered says so (``ask --json``,
``fetch --json``, the API, MCP's models), and no other source's result does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.models import SearchPlan
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps
from crowdsift.pipeline.wiring import ResearchOptions, research_deps
from crowdsift.service.api.app import create_app
from crowdsift.service.facade import fetch
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.reddit.factory import build_source
from crowdsift.testing.factories import raw_comment, raw_post
from crowdsift.testing.memory_source import MemorySource
from tests.pipeline.synthesis.test_abstain import PLAUD, _scripted

PLAN = SearchPlan(search_terms=["plaud note"], subreddits=["gadgets"])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with no imported archive: the demo archive answers."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def own_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive the user imported (one Plaud thread in r/gadgets), not the sample."""
    folder = tmp_path_factory.mktemp("own")
    posts = folder / "RS_own.ndjson"
    posts.write_text(json.dumps(raw_post("own1")) + "\n")
    comments = folder / "RC_own.ndjson"
    comments.write_text(json.dumps(raw_comment("oc1", "own1")) + "\n")
    target = folder / "own.sqlite"
    assert import_files([posts, comments], target).ok
    return target


def _settings(home: Path, **overrides: object) -> Settings:
    return Settings(home=home, engine="local", **overrides)  # type: ignore[arg-type]


def test_the_factory_flags_the_demo_archive_and_nothing_else(home: Path, own_archive: Path) -> None:
    demo = build_source(_settings(home))
    explicit = build_source(_settings(home), archive=demo.source.path)  # type: ignore[attr-defined]
    own = build_source(_settings(home), archive=own_archive)
    env = build_source(_settings(home, archive_path=own_archive))
    try:
        assert demo.sample_data and demo.notice and "SAMPLE DATA" in demo.notice
        assert explicit.sample_data  # the demo file named with --archive is still sample data
        assert not own.sample_data and own.notice is None
        assert not env.sample_data
    finally:
        for built in (demo, explicit, own, env):
            built.source.close()


def test_fetch_results_say_when_the_sample_answered(home: Path, own_archive: Path) -> None:
    heard: list[str] = []
    sample, _ = fetch(_settings(home), PLAN, persist=False, notice=heard.append)
    own, _ = fetch(_settings(home), PLAN, persist=False, archive=own_archive)

    assert sample.posts and sample.sample_data and heard
    assert own.posts and not own.sample_data


@pytest.fixture
def cli_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CROWDSIFT_HOME", str(home))
    monkeypatch.delenv("CROWDSIFT_ARCHIVE", raising=False)
    monkeypatch.delenv("CROWDSIFT_SOURCE", raising=False)
    get_settings.cache_clear()
    yield home
    get_settings.cache_clear()


def test_cli_fetch_json_carries_sample_data(cli_home: Path, own_archive: Path) -> None:
    plan = cli_home / "plan.json"
    plan.write_text(PLAN.model_dump_json())
    runner = CliRunner()
    args = ["fetch", "--plan", str(plan), "--json", "--no-store"]

    sample = runner.invoke(app, args, catch_exceptions=False)
    own = runner.invoke(app, [*args, "--archive", str(own_archive)], catch_exceptions=False)

    assert sample.exit_code == 0 and json.loads(sample.stdout)["sample_data"] is True
    assert "SAMPLE DATA" in sample.stderr
    assert own.exit_code == 0 and json.loads(own.stdout)["sample_data"] is False


def test_the_api_fetch_result_carries_sample_data(tmp_path: Path) -> None:
    with TestClient(create_app(_settings(tmp_path, feed_embedder="hashing"))) as client:
        response = client.post("/api/fetch", json=PLAN.model_dump(mode="json"))
    assert response.status_code == 200
    assert response.json()["sample_data"] is True


def _research(settings: Settings, archive: Path | None = None) -> tuple[bool, bool]:
    """(deps.sample_data, result.sample_data) of a scripted run built by the real wiring."""

    async def run() -> tuple[bool, bool]:
        options = ResearchOptions(
            archive=archive, persist=False, shared_engine=_scripted(["plaud note"], answer=True)
        )
        async with research_deps(settings, options) as deps:
            result = (await run_research(PLAUD, deps)).result
            return deps.sample_data, result.sample_data

    return asyncio.run(run())


def test_research_results_say_when_the_sample_answered(home: Path, own_archive: Path) -> None:
    assert _research(_settings(home)) == (True, True)
    assert _research(_settings(home), own_archive) == (False, False)


def test_a_run_without_the_sample_is_not_flagged() -> None:
    source = MemorySource(posts={("gadgets", "plaud note"): [raw_post("m1")]})
    deps = AskDeps(
        settings=Settings(), engine=_scripted(["plaud note"], answer=True), source=source
    )
    result = asyncio.run(run_research(PLAUD, deps)).result
    assert result.sample_data is False
    flagged = AskDeps(
        settings=Settings(), engine=_scripted(["plaud note"], answer=True), source=source,
        sample_data=True,
    )  # fmt: skip
    assert asyncio.run(run_research(PLAUD, flagged)).result.sample_data is True
