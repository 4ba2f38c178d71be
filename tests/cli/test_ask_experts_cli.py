"""``crowdsift ask --experts`` and ``crowdsift experts drift`` end to end through the main CLI.

These run the real local engine (the offline all-MiniLM-L6-v2 model), as `make demo` does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.sources.experts.db import SqlExpertStore

runner = CliRunner()
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def test_ask_experts_answers_per_expert_with_own_sources(isolated_environment: Path) -> None:
    result = runner.invoke(
        app,
        ["ask", QUESTION, "--experts", "desk_gear_weekly,homelab_field_notes", "--json"],
        catch_exceptions=False,
    )

    assert result.exit_code == 0, result.output
    research = json.loads(result.stdout)
    assert research["reddit_response"]["status"] in ("ok", "partial")  # Reddit ran beside them
    responses = research["expert_responses"]
    assert [r["expert_id"] for r in responses] == ["desk_gear_weekly", "homelab_field_notes"]
    for response in responses:
        assert response["engine"] == "local"
        assert response["status"] in ("ok", "partial")
        assert "local engine (not an LLM)" in response["answer"]
        channel = f"https://t.me/{response['expert_id']}/"
        assert response["main_sources"]
        assert all(s["url"].startswith(channel) for s in response["main_sources"])
        cited = {int(n) for n in re.findall(r"\[post:(\d+)\]", response["answer"])}
        assert cited <= {s["post_id"] for s in response["main_sources"]}


def test_ask_experts_text_output_and_unknown_expert(isolated_environment: Path) -> None:
    text = runner.invoke(app, ["ask", QUESTION, "--experts", "desk_gear_weekly", "--no-reddit"])
    assert text.exit_code == 0, text.output
    assert "== Expert desk_gear_weekly · status" in text.stdout
    assert "Community insights" not in text.stdout and "Reddit not searched" in text.stdout
    assert "Sources:" in text.stdout and "https://t.me/desk_gear_weekly/" in text.stdout

    unknown = runner.invoke(app, ["ask", QUESTION, "--experts", "nobody_here"])
    assert unknown.exit_code == 2  # a usage problem, as the README says
    assert "unknown expert(s) nobody_here" in unknown.stderr
    assert "desk_gear_weekly" in unknown.stderr  # says which ones exist


def test_experts_drift_stores_groups(isolated_environment: Path) -> None:
    first = runner.invoke(app, ["ask", QUESTION, "--experts", "homelab_field_notes", "--no-reddit"])
    assert first.exit_code == 0, first.output

    drift = runner.invoke(
        app, ["experts", "drift", "--expert", "homelab_field_notes", "--json"],
        catch_exceptions=False,
    )  # fmt: skip

    assert drift.exit_code == 0, drift.output
    found = json.loads(drift.stdout)
    store = SqlExpertStore(f"sqlite:///{isolated_environment / 'crowdsift.sqlite'}")
    try:
        stored = store.drift_groups("homelab_field_notes")
    finally:
        store.close()
    assert found == {"homelab_field_notes": len(stored)}
    assert stored, "the demo channel's comment threads drift (off-topic groups are seeded)"
    assert all(g.expert_id == "homelab_field_notes" and len(g.comment_ids) >= 2 for g in stored)
