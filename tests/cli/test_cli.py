"""The command line, in-process: plan errors, schema output, fetch on the bundled demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.question import MAX_QUESTION_CHARS
from crowdsift.service.jobs.models import ResearchRequest
from tests.support.net import free_port
from tests.support.offline_dns import UNRESOLVABLE, unresolvable_hosts

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
        "SearchPlan", "Post", "Comment", "FetchResult", "FetchReport", "SourceStatus",
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
    """A source chosen without its credentials is a usage problem (exit 2), for both commands."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"search_terms": ["x"], "subreddits": ["gadgets"]}')
    fetched = invoke("fetch", "--plan", str(plan), "--source", "reddit-api")
    asked = invoke("ask", "is the Plaud Note worth it?", "--source", "reddit-api")
    for result in (fetched, asked):
        assert result.exit_code == 2  # type: ignore[attr-defined]
        stderr = result.stderr  # type: ignore[attr-defined]
        assert stderr.startswith("error: ") and stderr.count("\n") == 1
        assert "REDDIT_CLIENT_ID" in stderr and "--source archive" in stderr
        assert result.stdout == ""  # type: ignore[attr-defined]


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


# --- ask: usage errors (exit 2) and a source that cannot be reached (exit 1) ---------------------


@pytest.mark.parametrize("question", ["ab", "  x  ", "", "   "])
def test_ask_refuses_a_question_under_3_characters_like_the_api(question: str) -> None:
    result = invoke("ask", question)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    stderr = result.stderr  # type: ignore[attr-defined]
    assert stderr.startswith("error: ") and stderr.count("\n") == 1
    assert "too short" in stderr and "at least 3 characters" in stderr
    assert result.stdout == ""  # type: ignore[attr-defined]


def test_ask_refuses_a_question_over_the_apis_2000_characters() -> None:
    schema = ResearchRequest.model_json_schema()["properties"]["question"]
    assert schema["maxLength"] == MAX_QUESTION_CHARS == 2000  # one limit, the API's
    # at the cap the question passes, and the next check (a bad budget) answers
    at_the_cap = invoke("ask", "x" * MAX_QUESTION_CHARS, "--budget-usd", "0")
    assert "--budget-usd must be more than 0" in at_the_cap.stderr  # type: ignore[attr-defined]
    result = invoke("ask", "is it worth it? " + "x" * MAX_QUESTION_CHARS)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    stderr = result.stderr  # type: ignore[attr-defined]
    assert stderr.startswith("error: ") and stderr.count("\n") == 1
    assert "2,016 characters long" in stderr and "at most 2,000" in stderr
    assert result.stdout == ""  # type: ignore[attr-defined]


def test_ask_with_an_unknown_expert_is_a_usage_error_naming_the_known_ones() -> None:
    result = invoke("ask", "Airflow vs Dagster?", "--experts", "nobody", "--no-reddit")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    stderr = result.stderr  # type: ignore[attr-defined]
    assert "error: unknown expert(s) nobody; known: " in stderr and "desk_gear_weekly" in stderr
    assert result.stdout == ""  # type: ignore[attr-defined]


UNREACHABLE_LINE = (
    f"error: arctic-shift unreachable: {UNRESOLVABLE} does not resolve (DNS); check the "
    "network or use --source archive\n"
)


def test_ask_with_an_unresolvable_source_fails_in_one_line_without_retrying(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://{UNRESOLVABLE}")
    monkeypatch.setenv("CROWDSIFT_CONCURRENCY", "1")  # one search at a time: an exact count
    with unresolvable_hosts() as lookups:
        result = invoke(
            "ask", "how do I fix airflow scheduler lag?", "--source", "arctic-shift",
            "-r", "dataengineering",
        )  # fmt: skip
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    assert result.stderr == UNREACHABLE_LINE  # type: ignore[attr-defined]
    assert lookups[UNRESOLVABLE] == 1  # the first search; no retry, no other search


def test_ask_unresolvable_at_full_concurrency_asks_at_most_once_per_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://{UNRESOLVABLE}")
    monkeypatch.setenv("CROWDSIFT_CONCURRENCY", "4")
    with unresolvable_hosts() as lookups:
        result = invoke(
            "ask", "how do I fix airflow scheduler lag?", "--source", "arctic-shift",
            "-r", "dataengineering",
        )  # fmt: skip
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert result.stderr == UNREACHABLE_LINE  # type: ignore[attr-defined]
    assert 1 <= lookups[UNRESOLVABLE] <= 4  # searches already in flight; none retried


def test_ask_with_a_refusing_source_says_so_and_never_claims_no_discussion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("CROWDSIFT_MAX_RETRIES", "0")  # the policy's retries would sleep for real
    result = invoke(
            "ask", "how do I fix airflow scheduler lag?", "--source", "arctic-shift",
            "-r", "dataengineering",
        )  # fmt: skip
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    assert result.stderr == (  # type: ignore[attr-defined]
        f"error: arctic-shift unreachable: 127.0.0.1:{port} refused the connection; check the "
        "network or use --source archive\n"
    )


def test_beside_experts_an_unreachable_reddit_is_a_failed_part_not_an_empty_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://{UNRESOLVABLE}")
    with unresolvable_hosts():
        result = invoke(
            "ask", "Is a standing desk worth it?", "--source", "arctic-shift",
            "-r", "homeoffice", "--experts", "desk_gear_weekly", "--json",
        )  # fmt: skip
    assert result.exit_code == 0  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    reddit = data["reddit_response"]
    assert reddit["status"] == "failed"
    assert reddit["errors"] == [UNREACHABLE_LINE.removeprefix("error: ").strip()]
    assert data["status"] == "partial" and data["expert_responses"][0]["status"] == "ok"
    assert "No matching Reddit discussion" not in result.stdout  # type: ignore[attr-defined]


def test_fetch_from_an_unresolvable_source_is_one_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"search_terms": ["airflow", "dagster"], "subreddits": ["dataengineering"]}')
    monkeypatch.setenv("ARCTIC_SHIFT_BASE_URL", f"http://{UNRESOLVABLE}")
    monkeypatch.setenv("CROWDSIFT_CONCURRENCY", "1")
    with unresolvable_hosts() as lookups:
        result = invoke("fetch", "--plan", str(plan), "--source", "arctic-shift")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    assert result.stderr == UNREACHABLE_LINE  # type: ignore[attr-defined]
    assert lookups[UNRESOLVABLE] == 1
