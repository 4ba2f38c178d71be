"""The first live question that names no community builds the subreddit directory itself, from
Arctic Shift (the local protocol server), says so, and later questions reuse it; a build that
cannot reach anything fails the question plainly and saves nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from crowdsift.cli.main import app
from crowdsift.sources.reddit.directory import DEFAULT_PREFIXES, SubredditDirectory
from crowdsift.testing.factories import raw_comment, raw_post
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.net import free_port

QUESTION = "How do I back up my Home Assistant configuration?"
SUBREDDITS = [
    {"display_name": "homeassistant", "title": "Home Assistant",
     "public_description": "Open source home automation: Home Assistant backups, add-ons, "
     "automations", "subscribers": 600_000, "over18": False},
    {"display_name": "Sourdough", "title": "Sourdough",
     "public_description": "Bread baking with wild yeast starters", "subscribers": 900_000,
     "over18": False},
    {"display_name": "bicycling", "title": "Bicycling", "public_description": "Bikes and rides",
     "subscribers": 2_000_000, "over18": False},
]  # fmt: skip


def ask(*extra: str) -> Result:
    return CliRunner().invoke(
        app, ["ask", QUESTION, "--source", "arctic-shift", "--no-store", "--json", *extra],
        catch_exceptions=False,
    )  # fmt: skip


def directory_requests(server: ArcticShiftServer) -> int:
    return sum(r.path == "/api/subreddits/search" for r in server.requests)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CROWDSIFT_HOME", str(tmp_path))
    monkeypatch.setenv("CROWDSIFT_CACHE_TTL", "0")  # every question asks the server
    return tmp_path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer() as arctic:
        post = raw_post(
            "ha1", subreddit="homeassistant", title="How I back up my Home Assistant config",
            selftext="Nightly backups of the Home Assistant configuration to a NAS.",
            created_utc=1_790_000_000,
        )  # fmt: skip
        arctic.add_posts("homeassistant", [post])
        arctic.add_comments("ha1", [raw_comment(
            "hac1", "ha1", subreddit="homeassistant", created_utc=1_790_003_600,
            body="Use the built-in backup with the Google Drive add-on; it keeps seven copies.",
        )])  # fmt: skip
        monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", arctic.base_url)
        yield arctic


def test_the_first_question_builds_the_directory_and_searches_its_closest_community(
    home: Path, server: ArcticShiftServer
) -> None:
    server.add_subreddits(SUBREDDITS)
    first = ask()
    assert first.exit_code == 0, first.stderr
    assert "no subreddit directory yet: building it" in first.stderr
    assert "saved 3 subreddits" in first.stderr
    assert directory_requests(server) == len(DEFAULT_PREFIXES)  # one per prefix, once
    saved = SubredditDirectory.load(home / "subreddits.json")
    assert saved is not None and {e.name for e in saved.entries} == {
        "homeassistant",
        "sourdough",
        "bicycling",
    }
    searched = {
        r.params.get("subreddit") for r in server.requests if r.path.startswith("/api/posts")
    }
    assert searched == {"homeassistant"}
    sources = json.loads(first.stdout)["summary"]["sources"]
    assert [s["post_id"] for s in sources] == ["ha1"]  # answered from the community it chose

    second = ask()
    assert second.exit_code == 0, second.stderr
    assert "building it" not in second.stderr
    assert directory_requests(server) == len(DEFAULT_PREFIXES)  # reused, not rebuilt


def test_named_communities_need_no_directory(home: Path, server: ArcticShiftServer) -> None:
    done = ask("-r", "homeassistant")
    assert done.exit_code == 0, done.stderr
    assert directory_requests(server) == 0
    assert not (home / "subreddits.json").exists()


def test_an_unreachable_arctic_shift_fails_the_question_at_the_first_request(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("CROWDSIFT_MAX_RETRIES", "0")
    done = ask()
    assert done.exit_code == 1 and done.stdout == ""
    assert f"arctic-shift unreachable: 127.0.0.1:{port} refused the connection" in done.stderr
    assert "no matching" not in done.output.lower()
    assert not (home / "subreddits.json").exists()


def test_a_source_listing_no_subreddit_saves_nothing_and_says_what_to_do(
    home: Path, server: ArcticShiftServer
) -> None:
    done = ask()
    assert done.exit_code == 1 and done.stdout == ""
    assert "Arctic Shift listed no subreddit for any prefix" in done.stderr
    assert "-r NAME" in done.stderr and "crowdsift subreddits update" in done.stderr
    assert not (home / "subreddits.json").exists()


def test_a_partial_build_is_saved_and_says_which_prefixes_to_fill_in(
    home: Path, server: ArcticShiftServer
) -> None:
    server.add_subreddits(SUBREDDITS)
    server.add_fault("/api/subreddits/search", "status", status=404)  # the first prefix only
    done = ask()
    assert done.exit_code == 0, done.stderr
    assert "prefixes a failed (`crowdsift subreddits update --prefixes a`)" in done.stderr
    saved = SubredditDirectory.load(home / "subreddits.json")
    assert saved is not None and set(saved.failed_prefixes) == {"a"}
