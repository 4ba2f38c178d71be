"""``crowdsift ask -v`` prints the telemetry block on stderr, with the same numbers the
``--json`` result reports (bundled demo archive, real local engine)."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from crowdsift.cli.main import app

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def pairs(line: str) -> dict[str, int]:
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)(?:\s|$)", line)}


def test_ask_verbose_prints_per_source_rejections_matching_the_json_fetch_block() -> None:
    outcome = CliRunner().invoke(
        app, ["ask", QUESTION, "-v", "--json", "--no-store"], catch_exceptions=False
    )
    assert outcome.exit_code == 0, outcome.stderr
    data = json.loads(outcome.stdout)
    fetch = data["fetch"]
    assert fetch["post_rejections"], "the demo archive should make the filters reject something"

    lines = outcome.stderr.splitlines()
    start = lines.index("telemetry:")
    source_line = next(line for line in lines[start:] if line.startswith(f"  {fetch['source']}:"))
    funnel = pairs(source_line)
    assert funnel["seen"] == fetch["posts_seen"]
    assert funnel["accepted"] == fetch["posts_accepted"]
    drilled = data["reddit_response"]["threads_drilled"]
    assert funnel["relevant"] == drilled  # what reached the answer
    assert funnel["comments"] == fetch["comments_accepted"]

    rejected_line = lines[lines.index(source_line) + 1]
    assert rejected_line.strip().startswith("rejected:")
    rejected = pairs(rejected_line)
    near = data["reddit_response"]["duplicates_removed"]
    for reason, count in fetch["post_rejections"].items():
        assert rejected.get(reason, 0) == (count - near if reason == "duplicate" else count)
    assert rejected.get("near_duplicate", 0) == near
    assert rejected.get("irrelevant", 0) == fetch["posts_judged"] - fetch["posts_relevant"]
    # Every post seen is either in the answer or rejected for a named reason.
    assert fetch["posts_seen"] - drilled == sum(rejected.values())

    llm = pairs(next(line for line in lines[start:] if line.startswith("  llm:")))
    assert llm["calls"] == data["usage"]["calls"]
