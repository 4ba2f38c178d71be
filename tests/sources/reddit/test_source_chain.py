"""``--source auto``: the chain falls through on a failing source, never on an empty one, and
every result says what each source did (``source_status``).

Real HTTP on 127.0.0.1 (the Reddit and Arctic Shift protocol servers); the "dead" Arctic Shift
is the suite's refused local port (``tests/conftest.py``). Sleeps are injected or unneeded:
retries are off where a failure is the point.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import ArchiveError
from crowdsift.core.models import SearchPlan, SourceStatus
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.wiring import ResearchOptions, research_deps
from crowdsift.service.facade import fetch
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.reddit import factory
from crowdsift.sources.reddit.chain import AllSourcesFailedError, Link, one_per_source
from crowdsift.sources.reddit.factory import build_source
from crowdsift.testing.factories import raw_comment, raw_post
from tests.pipeline.synthesis.test_abstain import PLAUD, _scripted
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.reddit_server import RedditProtocolServer

PLAN = SearchPlan(search_terms=["plaud note"], subreddits=["gadgets"])
GADGETS = {
    "display_name": "gadgets", "title": "Gadgets",
    "public_description": "Gadgets, voice recorders and note takers, reviewed",
    "subscribers": 20_000_000, "over18": False,
}  # fmt: skip


@pytest.fixture
def arctic() -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer() as server:
        server.add_posts("gadgets", [raw_post("as1"), raw_post("as2")])
        server.add_comments("as1", [raw_comment("asc1", "as1")])
        server.add_subreddits([GADGETS])  # the directory a live question chooses from
        yield server


@pytest.fixture
def reddit() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id="cid", client_secret="chain-secret-42") as server:
        server.add_posts("gadgets", [raw_post("rd1")])
        yield server


@pytest.fixture(scope="module")
def own_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive the user imported: one Plaud thread in r/gadgets."""
    folder = tmp_path_factory.mktemp("own")
    posts, comments = folder / "RS_own.ndjson", folder / "RC_own.ndjson"
    posts.write_text(json.dumps(raw_post("own1")) + "\n")
    comments.write_text(json.dumps(raw_comment("oc1", "own1")) + "\n")
    target = folder / "own.sqlite"
    assert import_files([posts, comments], target).ok
    return target


def _settings(home: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {"home": home, "engine": "local", "cache_ttl": 0}
    return Settings(**{**values, **overrides})  # type: ignore[arg-type]


def _reddit_settings(
    server: RedditProtocolServer, secret: str = "chain-secret-42"
) -> dict[str, str]:
    return {
        "reddit_client_id": "cid",
        "reddit_client_secret": secret,
        "reddit_api_base_url": server.base_url,
        "reddit_auth_url": server.auth_url,
    }


def _by_status(statuses: list[SourceStatus]) -> list[tuple[str, str]]:
    return [(s.source, s.status) for s in statuses]


# --- the default without keys ------------------------------------------------------------------


def test_keyless_default_uses_a_reachable_arctic_shift(
    tmp_path: Path, arctic: ArcticShiftServer
) -> None:
    result, report = fetch(
        _settings(tmp_path, arctic_shift_base_url=arctic.base_url), PLAN, persist=False
    )

    assert {p.id for p in result.posts} == {"as1", "as2"}
    assert report.source == "arctic-shift" and all(p.source == "arctic-shift" for p in result.posts)
    assert not result.sample_data
    assert _by_status(result.source_status) == [
        ("reddit-api", "not_configured"),
        ("arctic-shift", "ok"),
        ("archive", "skipped"),  # your archive (not set up) and the sample: one source
    ]
    arctic_status = result.source_status[1]
    assert arctic_status.requests == len(arctic.requests)  # the probe and every search, counted
    assert arctic.requests[0].path == "/api/posts/ids"  # asked once before it was relied on
    assert "REDDIT_CLIENT_ID" in result.source_status[0].detail


def test_a_dead_arctic_shift_hands_over_to_the_sample_which_stays_flagged(tmp_path: Path) -> None:
    result, _ = fetch(_settings(tmp_path), PLAN, persist=False)  # ARCTIC_SHIFT_BASE_URL: dead

    assert result.posts and result.sample_data
    assert _by_status(result.source_status) == [
        ("reddit-api", "not_configured"),
        ("arctic-shift", "unreachable"),
        ("archive", "ok"),  # one entry, not "not_configured" and then "ok"
    ]
    dead = result.source_status[1]
    assert dead.requests == 1 and "refused the connection" in dead.detail
    assert "SAMPLE DATA" in result.source_status[2].detail


def test_the_users_archive_comes_before_the_sample(tmp_path: Path, own_archive: Path) -> None:
    result, _ = fetch(_settings(tmp_path, archive_path=own_archive), PLAN, persist=False)

    assert [p.id for p in result.posts] == ["own1"] and not result.sample_data
    assert _by_status(result.source_status)[1:] == [
        ("arctic-shift", "unreachable"),
        ("archive", "ok"),
    ]


def test_an_empty_answer_is_not_a_failure(tmp_path: Path) -> None:
    with ArcticShiftServer() as empty:
        result, report = fetch(
            _settings(tmp_path, arctic_shift_base_url=empty.base_url), PLAN, persist=False
        )

    assert result.posts == [] and not result.sample_data and not report.errors
    assert _by_status(result.source_status)[1:] == [
        ("arctic-shift", "empty"),
        ("archive", "skipped"),
    ]


# --- failures during the run hand the rest over --------------------------------------------------


def test_unreachable_mid_run_hands_the_remaining_queries_over(
    tmp_path: Path, arctic: ArcticShiftServer
) -> None:
    settings = _settings(tmp_path, arctic_shift_base_url=arctic.base_url, max_retries=0)
    built = build_source(settings)
    try:
        assert built.source.name == "arctic-shift"  # the probe answered
        arctic.stop()  # ...and then Arctic Shift went away
        page = built.source.search_subreddit("gadgets", "plaud note")
        assert page.posts and built.sample_data
        statuses = built.statuses()
    finally:
        built.source.close()
    assert _by_status(statuses)[1] == ("arctic-shift", "unreachable")
    assert statuses[2].status == "ok" and statuses[1].requests == 2  # probe + the failed search


def test_a_429_beyond_the_wait_cap_hands_over(
    tmp_path: Path, arctic: ArcticShiftServer, own_archive: Path
) -> None:
    arctic.add_fault("/api/posts/search", "rate_limited", retry_after=3600, times=50)
    settings = _settings(
        tmp_path, arctic_shift_base_url=arctic.base_url, archive_path=own_archive,
        max_retry_wait=5,
    )  # fmt: skip
    result, report = fetch(settings, PLAN, persist=False)

    assert [p.id for p in result.posts] == ["own1"] and not report.errors
    rate_limited = result.source_status[1]
    assert (rate_limited.source, rate_limited.status) == ("arctic-shift", "rate_limited")
    assert "Retry-After" in rate_limited.detail and rate_limited.requests == 2
    assert result.source_status[2].status == "ok"


def test_bad_credentials_hand_over_to_arctic_shift(
    tmp_path: Path, reddit: RedditProtocolServer, arctic: ArcticShiftServer
) -> None:
    settings = _settings(
        tmp_path, arctic_shift_base_url=arctic.base_url, **_reddit_settings(reddit, "wrong")
    )
    result, _ = fetch(settings, PLAN, persist=False)

    assert {p.id for p in result.posts} == {"as1", "as2"}
    assert _by_status(result.source_status)[:2] == [
        ("reddit-api", "auth_failed"),
        ("arctic-shift", "ok"),
    ]
    assert "REDDIT_CLIENT_SECRET" in result.source_status[0].detail


def test_a_blanket_403_hands_over_but_a_private_subreddit_does_not(
    tmp_path: Path, reddit: RedditProtocolServer, arctic: ArcticShiftServer
) -> None:
    settings = _settings(
        tmp_path, arctic_shift_base_url=arctic.base_url, **_reddit_settings(reddit)
    )
    plan = SearchPlan(search_terms=["plaud note"], subreddits=["gadgets", "secretclub"])
    reddit.mark_unavailable("secretclub", 403, "private")  # Reddit's reason body: one subreddit
    answered, report = fetch(settings, plan, persist=False)
    assert [p.id for p in answered.posts] == ["rd1"] and report.skipped_subreddits
    assert _by_status(answered.source_status)[:2] == [
        ("reddit-api", "ok"),
        ("arctic-shift", "skipped"),
    ]

    reddit.add_fault("/r/*", "status", code=403, times=10)  # a bare 403: we are blocked
    blocked, _ = fetch(settings, PLAN, persist=False)
    assert {p.id for p in blocked.posts} == {"as1", "as2"}
    assert _by_status(blocked.source_status)[:2] == [
        ("reddit-api", "auth_failed"),
        ("arctic-shift", "ok"),
    ]


def test_a_named_source_is_a_chain_of_one_that_keeps_its_own_errors(
    tmp_path: Path, arctic: ArcticShiftServer
) -> None:
    arctic.add_fault("/api/posts/search", "rate_limited", retry_after=3600, times=1)
    settings = _settings(tmp_path, arctic_shift_base_url=arctic.base_url, max_retry_wait=5)
    plan = SearchPlan(search_terms=["plaud note", "meetings"], subreddits=["gadgets"])
    result, report = fetch(settings, plan, persist=False, source="arctic-shift")

    assert {p.id for p in result.posts} == {"as1", "as2"}  # the other query still ran there
    assert len(report.errors) == 1 and "Retry-After" in report.errors[0]
    assert _by_status(result.source_status) == [("arctic-shift", "rate_limited")]
    assert arctic.requests[0].path == "/api/posts/search"  # a named source is not probed


# --- every source failed --------------------------------------------------------------------------


@pytest.fixture
def nothing_answers(
    reddit: RedditProtocolServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Wrong Reddit credentials, a dead Arctic Shift, no archive, and a damaged sample."""

    def broken_sample(_settings: Settings) -> Link:
        def build() -> object:
            raise ArchiveError("the sample archive is damaged; reinstall crowdsift")

        return Link("archive", "the bundled sample archive", build, sample=True)  # type: ignore[arg-type]

    monkeypatch.setattr(factory, "_sample", broken_sample)
    for name, value in _reddit_settings(reddit, "wrong").items():
        monkeypatch.setenv(name.upper(), value)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_all_failed_fetch_exits_1_with_one_line_per_source(
    tmp_path: Path, nothing_answers: None
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(PLAN.model_dump_json())
    done = CliRunner().invoke(
        app, ["fetch", "--plan", str(plan), "--no-store"], catch_exceptions=False
    )

    assert done.exit_code == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: no Reddit source answered")
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "reddit-api auth failed",
        "arctic-shift unreachable",
        "archive unreachable",
    ]
    archive = lines[-1]  # one line, saying both what is missing and what failed
    assert "no archive imported" in archive and "sample" in archive
    assert "no matching discussion" not in done.output.lower()


def test_all_failed_ask_exits_1_and_never_says_nothing_was_found(
    tmp_path: Path, nothing_answers: None
) -> None:
    done = CliRunner().invoke(
        app, ["ask", "Is the Plaud Note worth it?", "--no-store", "--engine", "local", "-r",
              "gadgets"],
        catch_exceptions=False,
    )  # fmt: skip

    assert done.exit_code == 1 and done.stdout == ""
    assert "no Reddit source answered" in done.stderr
    assert sum(line.startswith("  ") for line in done.stderr.splitlines()) == 3
    assert "no matching discussion" not in done.output.lower()


def test_all_failed_chain_error_lists_every_source(tmp_path: Path, nothing_answers: None) -> None:
    with pytest.raises(AllSourcesFailedError) as failed:
        fetch(get_settings(), PLAN, persist=False)
    assert [s.status for s in failed.value.statuses] == [
        "auth_failed",
        "unreachable",
        "unreachable",
    ]


# --- the front ends say it ------------------------------------------------------------------------


def test_cli_fetch_warns_once_per_failed_source_and_carries_the_status(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(PLAN.model_dump_json())
    done = CliRunner().invoke(
        app, ["fetch", "--plan", str(plan), "--json", "--no-store"], catch_exceptions=False
    )

    assert done.exit_code == 0
    body = json.loads(done.stdout)
    assert [s["status"] for s in body["source_status"]] == [
        "not_configured", "unreachable", "ok",
    ]  # fmt: skip
    assert set(body["source_status"][0]) == {"source", "status", "detail", "requests"}
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: arctic-shift unreachable: ")


def test_research_result_says_which_source_answered(
    tmp_path: Path, arctic: ArcticShiftServer
) -> None:
    settings = _settings(tmp_path, arctic_shift_base_url=arctic.base_url)

    async def run() -> list[SourceStatus]:
        options = ResearchOptions(
            persist=False, shared_engine=_scripted(["plaud note"], answer=True)
        )
        async with research_deps(settings, options) as deps:
            result = (await run_research(PLAUD, deps)).result
            assert result.reddit_response is not None
            assert result.reddit_response.source == "arctic-shift" and not result.sample_data
            return result.source_status

    statuses = asyncio.run(run())
    assert _by_status(statuses)[1] == ("arctic-shift", "ok")
    searched = [r for r in arctic.requests if r.path != "/api/subreddits/search"]
    assert statuses[1].requests == len(searched)  # the directory, built once, is not the run's


def test_the_api_fetch_result_carries_source_status(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from crowdsift.service.api.app import create_app

    with TestClient(create_app(_settings(tmp_path, feed_embedder="hashing"))) as client:
        response = client.post("/api/fetch", json=PLAN.model_dump(mode="json"))
    assert response.status_code == 200
    statuses = response.json()["source_status"]
    assert [s["status"] for s in statuses][1:] == ["unreachable", "ok"]


def test_keys_without_a_user_agent_are_passed_over_with_a_warning_saying_why(
    tmp_path: Path, arctic: ArcticShiftServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set up but not usable as set up: the chain goes on, and the person who set the keys
    hears on stderr what is missing (not only in ``--json``'s ``source_status``)."""
    monkeypatch.delenv("REDDIT_USER_AGENT", raising=False)
    settings = _settings(
        tmp_path, arctic_shift_base_url=arctic.base_url, reddit_client_id="cid",
        reddit_client_secret="chain-secret-42", reddit_user_agent=None, reddit_username=None,
    )  # fmt: skip
    with capture_logs() as logs:
        result, _ = fetch(settings, PLAN, persist=False)
    assert {p.id for p in result.posts} == {"as1", "as2"}
    assert _by_status(result.source_status)[0] == ("reddit-api", "not_configured")
    (warning,) = [e for e in logs if e["event"] == "source_not_usable"]
    assert warning["log_level"] == "warning" and "REDDIT_USER_AGENT" in warning["detail"]


def test_one_entry_per_source_the_one_that_answered_with_every_request() -> None:
    mine = SourceStatus(source="archive", status="not_configured", detail="no archive imported")
    sample = SourceStatus(source="archive", status="ok", detail="the sample: 3 posts", requests=5)
    dead = SourceStatus(source="arctic-shift", status="unreachable", detail="down", requests=1)
    merged = one_per_source([dead, mine, sample])
    assert [(s.source, s.status, s.requests) for s in merged] == [
        ("arctic-shift", "unreachable", 1),
        ("archive", "ok", 5),
    ]
    assert merged[1].detail == "the sample: 3 posts"
    assert one_per_source([sample, mine]) == [sample]  # answering outranks a later "not set up"
