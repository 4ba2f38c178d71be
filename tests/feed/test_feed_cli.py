"""`crowdsift index`, `feed` and `simulate` in-process, over a real persistent Chroma store.

Most tests index with the hashing embedder (CROWDSIFT_FEED_EMBEDDER=hashing) and give `simulate`
a hashing local engine, so nothing loads the 7 s model; one test runs the real offline MiniLM
model end to end.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from typer.testing import CliRunner, Result

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.models import FetchResult, Post
from crowdsift.engines.base import Engine
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.feed import commands
from crowdsift.feed.simulation import ActionRecord
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.testing.factories import BASE_TIME, make_post

runner = CliRunner()
EXAMPLE_AGENTS = Path(__file__).resolve().parents[2] / "examples" / "agents.yaml"
EXAMPLE_NAMES = ["maya", "dev", "sam", "priya"]


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def one_line_error(result: Result) -> str:
    """The stderr of a failed command: exactly one 'error: ...' line."""
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def write_fetch_result(path: Path, posts: list[Post]) -> Path:
    result = FetchResult(
        query="what do people bake, grow and hold?",
        plan_id=UUID("12345678-1234-5678-1234-567812345678"),
        search_terms=["bread"],
        subreddits=["gadgets"],
        fetched_at=BASE_TIME,
        posts=posts,
    )
    path.write_text(result.model_dump_json())
    return path


@pytest.fixture
def hashing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Index and query with the fast hashing embedder."""
    monkeypatch.setenv("CROWDSIFT_FEED_EMBEDDER", "hashing")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def hashing_engine(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """`simulate` gets a hashing local engine; the --engine choices it was asked for are kept."""
    choices: list[str | None] = []

    def build(_settings: Settings, choice: str | None = None) -> Engine:
        choices.append(choice)
        return LocalEngine(embedder=HashingEmbedder())

    monkeypatch.setattr(commands, "build_engine", build)
    return choices


@pytest.fixture
def topics_file(tmp_path: Path, topic_posts: list[Post]) -> Path:
    return write_fetch_result(tmp_path / "result.json", topic_posts)


@pytest.fixture
def demo_indexed(hashing: None) -> dict[str, Any]:
    """The bundled demo archive, indexed; the JSON report."""
    result = invoke("index", "--json")
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


# --- index -----------------------------------------------------------------------------------


def test_index_without_arguments_indexes_the_bundled_demo_archive(
    hashing: None, isolated_environment: Path
) -> None:
    result = invoke("index")

    assert result.exit_code == 0, result.stderr
    match = re.fullmatch(
        r"indexed (\d+) posts from (.+) \(bundled demo archive\) into collection "
        r"'crowdsift_posts' at (.+) \(.* posts/s; (\d+) in the index\)\n",
        result.stdout,
    )
    assert match is not None, result.stdout
    indexed, source, location, total = match.groups()
    assert int(indexed) == int(total) > 100
    assert Path(source).parent == isolated_environment
    assert location == str(isolated_environment / "chroma")
    skipped = result.stderr.splitlines()
    assert re.fullmatch(r"skipped \d+ posts:", skipped[0])
    assert re.fullmatch(r"  \w+: (nsfw_or_ad|metadata_veto|deleted_or_removed)", skipped[1])

    again = json.loads(invoke("index", "--json").stdout)  # upsert: indexing twice adds nothing

    assert again["indexed"] == int(indexed)
    assert again["total_in_index"] == int(total)
    assert again["source"].endswith("(bundled demo archive)")
    assert again["read"] == again["indexed"] + len(again["skipped"])
    assert int(skipped[0].split()[1]) == len(again["skipped"])
    assert all(re.fullmatch(r"\w+: \w+.*", line) for line in again["skipped"])


def test_index_an_explicit_archive(hashing: None, tmp_path: Path) -> None:
    archive = ensure_demo_archive(tmp_path / "elsewhere")

    report = json.loads(invoke("index", "--archive", str(archive), "--json").stdout)

    assert report["source"] == str(archive)
    assert report["indexed"] == report["total_in_index"] > 100


def test_index_a_fetch_result_then_feed_by_interests(
    hashing: None, topics_file: Path, topic_posts: list[Post]
) -> None:
    result = invoke("index", str(topics_file))

    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"indexed 12 posts from {topics_file} into collection")
    assert "12 in the index" in result.stdout
    assert result.stderr == ""

    feed = invoke("feed", "--interests", "sourdough,bread,baking", "--size", "3", "--json")

    assert feed.exit_code == 0, feed.stderr
    posts = [Post.model_validate(p) for p in json.loads(feed.stdout)]
    assert sorted(p.id for p in posts) == ["cooking0", "cooking1", "cooking2"]
    originals = {p.id: p for p in topic_posts}
    assert all(post == originals[post.id] for post in posts)


def test_index_clear_replaces_what_was_indexed(
    hashing: None, topics_file: Path, tmp_path: Path
) -> None:
    invoke("index", str(topics_file))
    small = write_fetch_result(tmp_path / "small.json", [make_post("solo1", "Only me")])

    report = json.loads(invoke("index", str(small), "--clear", "--json").stdout)

    assert report["indexed"] == 1
    assert report["total_in_index"] == 1


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "is not a FetchResult (document: Invalid JSON"),
        ('{"query": "q"}', "is not a FetchResult (plan_id: Field required)"),
        ('{"posts": "nope"}', "is not a FetchResult"),
        (None, "does not exist"),
    ],
)
def test_index_a_bad_fetch_result_is_one_line_and_indexes_nothing(
    hashing: None, tmp_path: Path, isolated_environment: Path, content: str | None, words: str
) -> None:
    path = tmp_path / "result.json"
    if content is not None:
        path.write_text(content)

    result = invoke("index", str(path))

    assert result.exit_code == 1
    assert words in one_line_error(result)
    assert str(path) in result.stderr
    assert result.stdout == ""
    assert not (isolated_environment / "chroma").exists()  # no store was even opened
    assert "no posts yet" in invoke("feed", "--mode", "random").stderr


def test_index_a_file_and_an_archive_is_a_usage_error(hashing: None, topics_file: Path) -> None:
    result = invoke("index", str(topics_file), "--archive", "other.sqlite")

    assert result.exit_code == 2
    assert "give a FetchResult file or --archive, not both" in one_line_error(result)


# --- feed ------------------------------------------------------------------------------------


def test_feed_prints_numbered_posts_with_subreddit_karma_and_link(
    hashing: None, tmp_path: Path
) -> None:
    post = make_post(
        "v1", "Voice recorder for meetings", "Battery is great", subreddit="gadgets", karma=77
    )
    invoke("index", str(write_fetch_result(tmp_path / "r.json", [post])))

    result = invoke("feed", "-i", "voice recorder")

    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"1. Voice recorder for meetings\n   r/gadgets · 77 karma · {post.url}\n"
    )


def test_feed_by_interests_on_the_demo_archive(demo_indexed: dict[str, Any]) -> None:
    result = invoke("feed", "--interests", "voice recorder,meeting transcription", "--json")

    posts = [Post.model_validate(p) for p in json.loads(result.stdout)]
    assert len(posts) == 5  # the default feed size
    assert len({p.id for p in posts}) == 5
    assert "voice recorder" in posts[0].text.lower()
    assert sum("record" in p.text.lower() for p in posts) >= 3


def test_random_feeds_with_a_seed_are_reproducible(hashing: None, topics_file: Path) -> None:
    invoke("index", str(topics_file))

    first = invoke("feed", "--mode", "random", "--seed", "3", "--json")
    second = invoke("feed", "--mode", "random", "--seed", "3", "--json")
    other = invoke("feed", "--mode", "random", "--seed", "4", "--json")

    assert first.exit_code == 0, first.stderr
    assert first.stdout == second.stdout
    ids = [p["id"] for p in json.loads(first.stdout)]
    assert len(set(ids)) == 5
    assert ids != [p["id"] for p in json.loads(other.stdout)]


def test_random_mode_needs_no_interests_and_ignores_them(hashing: None, topics_file: Path) -> None:
    invoke("index", str(topics_file))

    with_interests = invoke("feed", "-m", "random", "--seed", "9", "-i", "bread", "--json")
    without = invoke("feed", "-m", "random", "--seed", "9", "--json")

    assert with_interests.exit_code == 0
    assert with_interests.stdout == without.stdout


@pytest.mark.parametrize("interests", [None, "", " , ,"])
def test_preference_feed_without_interests_is_a_usage_error(
    hashing: None, topics_file: Path, interests: str | None
) -> None:
    invoke("index", str(topics_file))
    args = ["feed"] if interests is None else ["feed", "--interests", interests]

    result = invoke(*args)

    assert result.exit_code == 2
    assert "preference mode needs --interests" in one_line_error(result)


@pytest.mark.parametrize("size", ["30", "21", "-1"])
def test_feed_size_out_of_range_is_a_usage_error(
    hashing: None, topics_file: Path, size: str
) -> None:
    invoke("index", str(topics_file))

    result = invoke("feed", "-i", "bread", "--size", size)

    assert result.exit_code == 2
    assert "feed_size must be between 1 and 20" in one_line_error(result)


def test_feed_size_zero_is_a_usage_error(hashing: None, topics_file: Path) -> None:
    invoke("index", str(topics_file))

    result = invoke("feed", "-i", "bread", "--size", "0")

    assert result.exit_code == 2
    assert "feed_size must be between 1 and 20" in result.stderr


def test_feed_size_picks_how_many_posts(hashing: None, topics_file: Path) -> None:
    invoke("index", str(topics_file))

    for size in (1, 12, 20):
        result = invoke("feed", "-i", "bread", "--size", str(size), "--json")
        assert len(json.loads(result.stdout)) == min(size, 12)


def test_feed_unknown_mode_is_a_usage_error(hashing: None) -> None:
    result = invoke("feed", "--mode", "chronological", "-i", "x")

    assert result.exit_code == 2
    assert "unknown --mode 'chronological'" in one_line_error(result)


def test_feed_on_an_empty_index_says_to_run_index(hashing: None) -> None:
    for args in (["feed", "-i", "bread"], ["feed", "--mode", "random"]):
        result = invoke(*args)

        assert result.exit_code == 1
        message = one_line_error(result)
        assert "the feed index has no posts yet" in message
        assert "run `crowdsift index`" in message
        assert result.stdout == ""


# --- simulate --------------------------------------------------------------------------------


def per_agent_table(stdout: str) -> dict[str, list[int]]:
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 5 and cells[0] in EXAMPLE_NAMES:
            rows[cells[0]] = [int(c) for c in cells[1:]]
    return rows


def test_simulate_writes_jsonl_and_prints_the_table_and_top_posts(
    demo_indexed: dict[str, Any], hashing_engine: list[str | None], tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "actions.jsonl"

    result = invoke("simulate", "--agents", str(EXAMPLE_AGENTS), "--rounds", "2", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    records = [ActionRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [(r.round, r.agent) for r in records] == [(n, a) for n in (1, 2) for a in EXAMPLE_NAMES]
    assert all(r.engine == "local" and r.mode == "preference" for r in records)
    assert result.stdout.startswith("2 rounds · preference feeds · seed 0 · engine local\n")
    table = per_agent_table(result.stdout)
    for name in EXAMPLE_NAMES:
        counts = Counter(r.action for r in records if r.agent == name)
        assert table[name] == [counts[a] for a in ("like", "comment", "share", "skip")]
    engaged = Counter(r.post_id for r in records if r.action != "skip")
    assert engaged  # the demo archive has posts for these agents
    assert "most-engaged posts:" in result.stdout
    top_id, top_count = sorted(engaged.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    assert f"  {top_count} (" in result.stdout and f"[{top_id}]" in result.stdout
    assert result.stderr == f"actions written to {out}\n"
    assert hashing_engine == [None]


def test_simulate_json_summary_and_default_actions_path(
    demo_indexed: dict[str, Any],
    hashing_engine: list[str | None],
    isolated_environment: Path,
) -> None:
    options = ["-r", "1", "-m", "mixed", "--seed", "7", "--size", "3", "--engine", "local"]
    result = invoke("simulate", "-a", str(EXAMPLE_AGENTS), *options, "--json")

    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    default_out = isolated_environment / "simulations" / "agents-seed7.jsonl"
    assert result.stderr == f"actions written to {default_out}\n"
    records = [ActionRecord.model_validate_json(x) for x in default_out.read_text().splitlines()]
    assert (summary["rounds"], summary["mode"], summary["seed"]) == (1, "mixed", 7)
    assert all(len(r.feed) == 3 for r in records)
    assert summary["per_agent"] == {
        name: {
            a: sum(1 for r in records if r.agent == name and r.action == a)
            for a in ("like", "comment", "share", "skip")
        }
        for name in EXAMPLE_NAMES
    }
    assert hashing_engine == ["local"]


def test_simulate_with_the_same_seed_writes_the_same_actions(
    demo_indexed: dict[str, Any], hashing_engine: list[str | None], tmp_path: Path
) -> None:
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        args = ["simulate", "-a", str(EXAMPLE_AGENTS), "-r", "2", "-m", "random", "--seed", "5"]
        assert invoke(*args, "--out", str(out)).exit_code == 0
        outputs.append(out.read_text())

    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == 2 * len(EXAMPLE_NAMES)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "does not exist"),
        ("agents: []\n", "must hold a non-empty list of agents"),
        ("- {name: ann, interests: [x]}\n- {name: bob}\n", "agent #2: interests: Field required"),
    ],
)
def test_simulate_with_a_bad_agents_file_exits_1_with_its_message(
    hashing: None, hashing_engine: list[str | None], tmp_path: Path, content: str | None, words: str
) -> None:
    agents = tmp_path / "agents.yaml"
    if content is not None:
        agents.write_text(content)
    out = tmp_path / "actions.jsonl"

    result = invoke("simulate", "--agents", str(agents), "--out", str(out))

    assert result.exit_code == 1
    message = one_line_error(result)
    assert words in message and str(agents) in message
    assert not out.exists()
    assert hashing_engine == []  # nothing was built for a run that could not start


def test_simulate_with_invalid_yaml_is_one_line_with_the_position(
    hashing: None, tmp_path: Path
) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text("agents: [name: ann\n  - {\n")

    result = invoke("simulate", "--agents", str(agents))

    assert result.exit_code == 1
    message = one_line_error(result)
    assert "line 2" in message


def test_simulate_on_an_empty_index_says_to_run_index(
    hashing: None, hashing_engine: list[str | None], tmp_path: Path
) -> None:
    result = invoke("simulate", "-a", str(EXAMPLE_AGENTS), "--out", str(tmp_path / "x.jsonl"))

    assert result.exit_code == 1
    assert "run `crowdsift index`" in one_line_error(result)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--mode", "chaos"], "unknown --mode 'chaos'"),
        (["--engine", "gpt"], "unknown --engine 'gpt'"),
    ],
)
def test_simulate_usage_errors(hashing: None, args: list[str], words: str) -> None:
    result = invoke("simulate", "-a", str(EXAMPLE_AGENTS), *args)

    assert result.exit_code == 2
    assert words in one_line_error(result)


def test_simulate_needs_at_least_one_round(hashing: None) -> None:
    result = invoke("simulate", "-a", str(EXAMPLE_AGENTS), "--rounds", "0")

    assert result.exit_code == 2
    assert "--rounds" in result.stderr


# --- the real offline model, end to end ------------------------------------------------------


def test_minilm_index_feed_and_simulate_end_to_end(
    topics_file: Path, tmp_path: Path, isolated_environment: Path
) -> None:
    """Default embedder (all-MiniLM-L6-v2, offline) and default engine (no key: local).

    The one test in this directory that loads the real model (~4-7 s).
    """
    assert get_settings().feed_embedder == "minilm"

    indexed = invoke("index", str(topics_file), "--json")

    assert indexed.exit_code == 0, indexed.stderr
    assert json.loads(indexed.stdout)["total_in_index"] == 12

    # Words that are not in the posts: only a real semantic model finds the bread posts.
    feed = invoke("feed", "--interests", "artisan loaves,fermentation", "--size", "3", "--json")

    assert feed.exit_code == 0, feed.stderr
    assert sorted(p["id"] for p in json.loads(feed.stdout)) == ["cooking0", "cooking1", "cooking2"]

    agents = tmp_path / "agents.yaml"
    agents.write_text("- {name: saver, interests: [cryptocurrency custody]}\n")
    out = tmp_path / "actions.jsonl"
    simulated = invoke("simulate", "-a", str(agents), "-r", "1", "-n", "3", "--out", str(out))

    assert simulated.exit_code == 0, simulated.stderr
    (record,) = [ActionRecord.model_validate_json(x) for x in out.read_text().splitlines()]
    assert record.engine == "local"
    assert {post_id.rstrip("012") for post_id in record.feed} == {"crypto"}
    assert "local engine" in record.reason
    assert "engine local" in simulated.stdout
