"""The command line, in-process: plan errors, schema output, fetch on the bundled demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app

runner = CliRunner()


def invoke(*args: str) -> object:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "is not valid JSON (line 1, column 2"),
        ('{"search_terms": [], "subreddits": ["gadgets"]}', "search_terms: List should have"),
        (
            '{"search_terms": ["x"], "subreddits": ["no spaces!"]}',
            "subreddits: Value error, 'no spaces!' is not a subreddit name",
        ),
        ('["a list"]', "is not a valid SearchPlan"),
    ],
)
def test_bad_plan_file_is_one_line_and_exit_2(
    tmp_path: Path, content: str | None, message: str
) -> None:
    plan = tmp_path / "plan.json"
    if content is not None:
        plan.write_text(content)
    result = invoke("fetch", "--plan", str(plan))
    assert result.exit_code == 2  # type: ignore[attr-defined]
    stderr = result.stderr  # type: ignore[attr-defined]
    assert message in stderr
    assert stderr.startswith("error: ") and stderr.count("\n") == 1
    assert result.stdout == ""  # type: ignore[attr-defined]


def test_unknown_source_is_a_usage_error(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"search_terms": ["x"], "subreddits": ["gadgets"]}')
    result = invoke("fetch", "--plan", str(plan), "--source", "myspace")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "unknown --source 'myspace'" in result.stderr  # type: ignore[attr-defined]


def test_schema_prints_every_model_and_one_model() -> None:
    everything = json.loads(invoke("schema").stdout)  # type: ignore[attr-defined]
    assert set(everything) == {
        "SearchPlan", "Post", "Comment", "FetchResult", "FetchReport",
        "ResearchResult", "RedditResponse", "ExpertResponse", "ResearchRequest", "Job",
    }  # fmt: skip
    one = json.loads(invoke("schema", "Post").stdout)  # type: ignore[attr-defined]
    assert one["title"] == "Post" and "author_hash" in one["properties"]
    assert invoke("schema", "Nope").exit_code == 2  # type: ignore[attr-defined]


def test_version_and_help_are_instant_and_clean() -> None:
    assert invoke("--version").stdout.startswith("crowdsift ")  # type: ignore[attr-defined]
    help_text = invoke("--help").stdout  # type: ignore[attr-defined]
    for command in ("fetch", "schema", "archive"):
        assert command in help_text


def test_reddit_api_without_credentials_names_the_variables(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"search_terms": ["x"], "subreddits": ["gadgets"]}')
    result = invoke("fetch", "--plan", str(plan), "--source", "reddit-api")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "REDDIT_CLIENT_ID" in result.stderr  # type: ignore[attr-defined]


def test_demo_fetch_json_from_the_bundled_archive(isolated_environment: Path) -> None:
    result = invoke("fetch", "--plan", "examples/demo_plan.json", "--json")
    assert result.exit_code == 0  # type: ignore[attr-defined]
    assert "SAMPLE DATA" in result.stderr  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    posts = data["posts"]
    assert len(posts) >= 20
    assert all(p["url"].startswith("https://www.reddit.com/r/") for p in posts)
    assert all(p["source"] == "archive" and p["subreddit"] == p["subreddit"].lower() for p in posts)
    assert len({p["id"] for p in posts}) == len(posts)
    assert any(p["comments"] for p in posts)

    from crowdsift.core.store import CommentStore

    store = CommentStore.from_url(f"sqlite:///{isolated_environment / 'crowdsift.sqlite'}")
    try:
        stored = store.count()
        assert stored == sum(len(p["comments"]) for p in posts)
    finally:
        store.close()


def test_human_output_lists_posts_with_whole_urls() -> None:
    result = invoke("fetch", "--plan", "examples/demo_plan.json", "--no-store")
    lines = result.stdout.splitlines()  # type: ignore[attr-defined]
    assert lines[0].endswith("posts for: plaud OR plaud.ai OR voice recorder")
    urls = [line.strip() for line in lines[1:] if line.startswith("     ")]
    assert urls and all(u.startswith("https://www.reddit.com/r/") for u in urls)
    assert "rejected:" in result.stderr  # type: ignore[attr-defined]
