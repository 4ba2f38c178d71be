"""``crowdsift subreddits``: update and profile from the local Arctic Shift emulator (HTTP),
search, stats."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from crowdsift.cli import subreddits as subreddits_cli
from crowdsift.cli.main import app
from crowdsift.engines.embedding import Embedder, HashingEmbedder
from crowdsift.sources.reddit import directory_match
from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditInfo
from tests.support.arctic_shift_server import ArcticShiftServer

runner = CliRunner()


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def about(name: str, subscribers: int, description: str = "", **extra: Any) -> dict[str, Any]:
    item = {
        "display_name": name,
        "title": name,
        "public_description": description or f"Everything about {name}.",
        "subscribers": subscribers,
        "over18": False,
        "created_utc": 1_300_000_000,
    }
    item.update(extra)
    return item


SUBREDDITS = [
    about("AskScience", 25_000_000, "Ask a science question, get a science answer."),
    about("aquariums", 900_000, "Fish tanks, water chemistry and aquarium plants."),
    about("adultstuff", 800_000, "Grown-up things.", over18=True),
    about("atiny", 12, "Too small to keep."),
    about("buildapc", 7_000_000, "Planning a computer build? Ask for parts advice here."),
    about("cooking", 4_000_000, "Recipes and techniques for home cooks."),
    about("vllm", 3_000, "A high-throughput inference and serving engine for LLMs."),
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer() as arctic:
        arctic.add_subreddits(SUBREDDITS)
        monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", arctic.base_url)
        monkeypatch.setenv("CROWDSIFT_CACHE_TTL", "0")  # every command asks the server
        yield arctic


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Search embeds with the hashing fake, not the model (the model has its own tests)."""

    def build(_settings: object) -> Embedder:
        return HashingEmbedder()

    monkeypatch.setattr(subreddits_cli, "_embedder", build)
    directory_match._MEMORY.clear()
    yield
    directory_match._MEMORY.clear()


def saved(home: Path) -> SubredditDirectory:
    directory = SubredditDirectory.load(home / "subreddits.json")
    assert directory is not None
    return directory


def test_update_fetches_each_prefix_over_http_and_saves_the_directory(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    result = invoke("subreddits", "update", "--prefixes", "ab", "--profiles", "0")
    assert result.exit_code == 0, result.stderr
    path = isolated_environment / "subreddits.json"
    assert result.stdout == (f"saved 3 subreddits (SFW, at least 1,000 subscribers) to {path}\n")
    assert result.stderr.splitlines() == [
        "subreddits 'a': 1/2 prefixes, 2 so far",
        "subreddits 'b': 2/2 prefixes, 3 so far",
    ]
    searches = [r.params for r in server.requests if r.path == "/api/subreddits/search"]
    assert searches == [
        {"subreddit_prefix": "a", "limit": "1000"},
        {"subreddit_prefix": "b", "limit": "1000"},
    ]
    assert [r for r in server.requests if r.path == "/api/posts/search"] == []  # no profiles
    directory = saved(isolated_environment)
    assert [e.name for e in directory.entries] == ["askscience", "buildapc", "aquariums"]
    assert directory.get("AskScience") == SubredditInfo(
        name="askscience",
        display_name="AskScience",
        title="AskScience",
        description="Ask a science question, get a science answer.",
        subscribers=25_000_000,
    )
    assert (directory.counts.over18, directory.counts.small) == (1, 1)

    more = invoke("subreddits", "update", "--prefixes", "c,v", "--json")
    assert more.exit_code == 0, more.stderr
    report = json.loads(more.stdout)
    assert report["subreddits"] == 5 and report["prefixes"] == "abcv"
    assert report["profiled"] == 5 and report["profiled_without_posts"] == 5  # none has posts
    assert [e.name for e in saved(isolated_environment).entries] == [
        "askscience", "buildapc", "cooking", "aquariums", "vllm",
    ]  # fmt: skip


def test_a_failing_prefix_is_reported_and_the_rest_saved(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    server.add_fault(r"/api/subreddits/search", "api_error", status=400, message="Bad prefix")
    result = invoke("subreddits", "update", "--prefixes", "ab")
    assert result.exit_code == 1
    assert "error: prefix 'a' failed:" in result.stderr and "Bad prefix" in result.stderr
    assert "crowdsift subreddits update --prefixes a` to fill them in" in result.stderr
    assert "saved 1 subreddit (" in result.stdout
    directory = saved(isolated_environment)
    assert [e.name for e in directory.entries] == ["buildapc"]
    assert list(directory.failed_prefixes) == ["a"]


def test_nothing_fetched_says_why_and_what_to_check(
    isolated_environment: Path, dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROWDSIFT_MAX_RETRIES", "0")  # refused at once, nothing to wait for
    result = invoke("subreddits", "update", "--prefixes", "ab")
    assert result.exit_code == 1
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert "no subreddit could be fetched: all 2 prefixes failed" in line
    assert f"127.0.0.1:{dead_port}" in line and "ARCTIC_SHIFT_BASE_URL" in line
    assert "then run `crowdsift subreddits update` again" in line
    assert not (isolated_environment / "subreddits.json").exists()


@pytest.mark.parametrize("value", ["a!", "", "é"])
def test_bad_prefixes_are_a_usage_error(value: str) -> None:
    result = invoke("subreddits", "update", "--prefixes", value)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --prefixes") and "letters a-z and digits 0-9" in (
        result.stderr
    )


@pytest.mark.usefixtures("fake_embedder")
def test_search_shows_the_matches_and_why(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    assert invoke("subreddits", "update", "--prefixes", "abcv").exit_code == 0
    result = invoke("subreddits", "search", "Is vLLM good for serving an LLM?", "--limit", "3")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "score  meaning  words  name  size  subreddit"
    assert len(lines) == 4 and "r/vllm (3,000, 0 recent posts): vllm" in lines[1]
    assert "embedding 5 subreddit descriptions once" in result.stderr
    assert list((isolated_environment).glob("subreddit-vectors-*.npy"))

    as_json = invoke("subreddits", "search", "Is vLLM good for serving an LLM?", "--json")
    payload = json.loads(as_json.stdout)
    assert payload["weights"] == {"meaning": 1.0, "words": 0.5, "name": 0.5, "size": 0.05}
    top = payload["matches"][0]
    assert top["info"]["name"] == "vllm" and top["name"] == 1.0
    assert set(top) == {"info", "score", "meaning", "words", "name", "size"}
    assert len(payload["matches"]) == 5  # every SFW entry, no more
    assert "embedding" not in as_json.stderr  # the vectors were kept


def test_search_without_a_directory_says_to_update() -> None:
    result = invoke("subreddits", "search", "which aquarium filter?")
    assert result.exit_code == 1
    assert "no subreddit directory at" in result.stderr
    assert "run `crowdsift subreddits update` to build it" in result.stderr


def test_search_of_a_damaged_directory_says_to_update(isolated_environment: Path) -> None:
    isolated_environment.mkdir(parents=True, exist_ok=True)
    (isolated_environment / "subreddits.json").write_text("{half a file")
    result = invoke("subreddits", "search", "which aquarium filter?")
    assert result.exit_code == 1
    assert "is damaged" in result.stderr and "crowdsift subreddits update" in result.stderr


def test_search_needs_a_question() -> None:
    assert invoke("subreddits", "search", "x").exit_code == 2


@pytest.mark.usefixtures("fake_embedder")
def test_stats_and_a_stale_directory(isolated_environment: Path) -> None:
    old = datetime.now(UTC) - timedelta(days=45)
    SubredditDirectory(
        fetched_at=old,
        entries=[SubredditInfo(name="cooking", display_name="cooking", subscribers=4_000_000)],
        prefixes=["c"],
        failed_prefixes={"d": "timed out"},
    ).save(isolated_environment / "subreddits.json")
    stats = invoke("subreddits", "stats")
    assert stats.exit_code == 0
    assert stats.stdout.splitlines()[0] == (
        f"{isolated_environment / 'subreddits.json'}: 1 subreddit from arctic-shift, "
        f"fetched {old.date().isoformat()} (45 days ago)"
    )
    assert "failed prefix 'd': timed out" in stats.stdout
    assert "profiled: 0 (0 without recent posts); last profile failed for 0" in stats.stdout
    assert "stale: run `crowdsift subreddits update`" in stats.stdout
    summary = json.loads(invoke("subreddits", "stats", "--json").stdout)
    assert summary["subreddits"] == 1 and summary["stale"] is True
    search = invoke("subreddits", "search", "home cooking recipes")
    assert search.exit_code == 0
    assert "warning: fetched" in search.stderr and "45 days ago" in search.stderr


def test_stats_without_a_directory() -> None:
    result = invoke("subreddits", "stats")
    assert result.exit_code == 1 and "crowdsift subreddits update" in result.stderr


# --- profiles ----------------------------------------------------------------------------------


def thread(subreddit: str, n: int, title: str, score: int = 10, body: str = "") -> dict[str, Any]:
    return {
        "id": f"{subreddit.lower()}{n}",
        "title": title,
        "selftext": body,
        "score": score,
        "num_comments": 2,
        "created_utc": 1_750_000_000 + n,
        "over_18": False,
        "subreddit": subreddit,
        "author": "someone",
    }


AQUARIUM_THREADS = [
    thread("aquariums", 1, "Fluval FX6 loud at night, normal?", 40),
    thread("aquariums", 2, "My Fluval FX6 impeller rattles", 25, body="Any fix for the FX6?"),
    thread("aquariums", 3, "Cycling a new tank with plants", 5),
]


def posts_asked(server: ArcticShiftServer, since: int = 0) -> list[dict[str, str]]:
    """The parameters of the server's post searches, from the ``since``-th request on."""
    return [r.params for r in server.requests[since:] if r.path == "/api/posts/search"]


def test_update_profiles_the_biggest_communities_from_their_recent_posts(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    server.add_posts("buildapc", [thread("buildapc", 1, "First build with a 9800X3D", 90)])
    server.add_posts("aquariums", AQUARIUM_THREADS)
    result = invoke("subreddits", "update", "--prefixes", "abcv", "--profiles", "3")
    assert result.exit_code == 0, result.stderr
    assert posts_asked(server) == [
        {"subreddit": name, "over_18": "false", "sort": "desc", "limit": "100"}
        for name in ("AskScience", "buildapc", "cooking")  # the three biggest
    ]
    assert result.stderr.splitlines()[-1] == "profiles: 3/3 (r/cooking), 0 failed"
    assert result.stdout.splitlines()[-1] == "profiled 3 of 3 subreddits from their recent posts"
    directory = saved(isolated_environment)
    build = directory.get("buildapc")
    assert build is not None and build.recent_titles == ["First build with a 9800X3D"]
    assert build.profile_posts == 1 and build.profiled_at is not None
    quiet = directory.get("askscience")
    assert quiet is not None and quiet.profiled and quiet.profile_posts == 0
    assert not directory.get("aquariums").profiled  # type: ignore[union-attr]  # 4th biggest

    # a later update without profiles keeps them; `profile` adds the rest
    assert invoke("subreddits", "update", "--prefixes", "b", "--profiles", "0").exit_code == 0
    assert saved(isolated_environment).get("buildapc") == build
    since = len(server.requests)
    again = invoke("subreddits", "profile", "--limit", "4")
    assert again.exit_code == 0, again.stderr
    assert [p["subreddit"] for p in posts_asked(server, since)] == [
        "AskScience", "buildapc", "cooking", "aquariums",
    ]  # fmt: skip
    assert again.stdout.startswith("profiled 4 of 4 subreddits from their recent posts in ")
    fish = saved(isolated_environment).get("aquariums")
    assert fish is not None and fish.recent_titles[0] == "Fluval FX6 loud at night, normal?"
    assert fish.recent_terms == {"fluval": 2, "fx6": 2}


def test_profile_progress_comes_every_ten_entries_and_for_the_last(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subreddits_cli, "SAVE_EVERY", 7)  # saved in four parts
    with ArcticShiftServer() as arctic:
        arctic.add_subreddits(about(f"topic{n:02d}", 100_000 - n) for n in range(23))
        arctic.add_fault(r"/api/posts/search", "api_error", status=400, message="no", times=2)
        monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", arctic.base_url)
        result = invoke("subreddits", "update", "--prefixes", "t")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("profiles:")] == [
        "profiles: 10/23 (r/topic09), 2 failed",
        "profiles: 20/23 (r/topic19), 2 failed",
        "profiles: 23/23 (r/topic22), 2 failed",
    ]
    assert result.stdout.splitlines()[-1] == (
        "profiled 21 of 23 subreddits from their recent posts (2 failed)"
    )
    directory = saved(isolated_environment)
    assert sum(e.profiled for e in directory.entries) == 21
    assert sorted(directory.failed_profiles) == ["topic00", "topic01"]


def test_a_failing_profile_is_reported_the_rest_saved_and_retried_alone(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    server.add_posts("AskScience", [thread("AskScience", 1, "Why is the sky blue?")])
    server.add_posts("aquariums", AQUARIUM_THREADS)
    assert invoke("subreddits", "update", "--prefixes", "a").exit_code == 0
    server.add_fault(r"/api/posts/search", "api_error", status=400, message="Bad subreddit")
    since = len(server.requests)
    result = invoke("subreddits", "profile")
    assert result.exit_code == 1
    assert len(posts_asked(server, since)) == 2  # the failure did not stop the others
    assert "profiles: 2/2 (r/aquariums), 1 failed" in result.stderr
    assert "error: profile of r/AskScience failed:" in result.stderr
    assert "Bad subreddit" in result.stderr
    assert (
        "1 profile failed; they keep their last profile. Run `crowdsift subreddits profile "
        "--failed` to try them again"
    ) in result.stderr
    assert result.stdout.startswith("profiled 1 of 2 subreddits from their recent posts (1 failed)")
    directory = saved(isolated_environment)
    assert list(directory.failed_profiles) == ["askscience"]
    sky = directory.get("askscience")
    assert sky is not None and sky.recent_titles == ["Why is the sky blue?"]  # the earlier one
    assert directory.get("aquariums").recent_titles  # type: ignore[union-attr]

    since = len(server.requests)
    retry = invoke("subreddits", "profile", "--failed")
    assert retry.exit_code == 0, retry.stderr
    assert [p["subreddit"] for p in posts_asked(server, since)] == ["AskScience"]
    assert saved(isolated_environment).failed_profiles == {}


def test_profile_needs_a_directory() -> None:
    result = invoke("subreddits", "profile")
    assert result.exit_code == 1 and "crowdsift subreddits update" in result.stderr


@pytest.mark.usefixtures("fake_embedder")
def test_search_finds_a_community_by_what_its_threads_say(
    server: ArcticShiftServer, isolated_environment: Path
) -> None:
    """No description says "Fluval"; r/aquariums' recent threads do."""
    server.add_posts("aquariums", AQUARIUM_THREADS)
    question = "Is the Fluval FX6 too loud for a bedroom?"
    assert invoke("subreddits", "update", "--prefixes", "abcv", "--profiles", "0").exit_code == 0
    before = invoke("subreddits", "search", question, "--json")
    assert json.loads(before.stdout)["matches"][0]["info"]["name"] != "aquariums"
    assert invoke("subreddits", "profile").exit_code == 0
    after = invoke("subreddits", "search", question, "--limit", "2")
    assert after.exit_code == 0, after.stderr
    top = after.stdout.splitlines()[1]
    assert "r/aquariums (900,000, 3 recent posts)" in top
    assert top.split()[2] == "1.000"  # the words column: the best
