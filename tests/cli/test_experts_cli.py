"""``crowdsift experts import|list`` in-process with typer's CliRunner, on the default store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.experts import experts_app
from crowdsift.sources.experts.demo import demo_experts_dir, demo_manifest

runner = CliRunner()


def demo_files(channel: str) -> tuple[Path, Path]:
    base = demo_experts_dir()
    entry = next(e for e in demo_manifest() if e.channel == channel)
    return base / entry.result, base / entry.discussion


def test_import_prints_a_report_and_list_shows_the_expert(isolated_environment: Path) -> None:
    result, discussion = demo_files("homelab_field_notes")
    imported = runner.invoke(
        experts_app, ["import", str(result), "--discussion", str(discussion)],
        catch_exceptions=False,
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert "imported homelab_field_notes (Homelab Field Notes" in imported.stdout
    assert "inferred from its own links" in imported.stdout
    assert (isolated_environment / "crowdsift.sqlite").is_file()  # the default store

    listed = runner.invoke(experts_app, ["list"], catch_exceptions=False)
    assert listed.exit_code == 0
    assert "homelab_field_notes" in listed.stdout and "2026-11-09" in listed.stdout

    as_json = runner.invoke(experts_app, ["list", "--json"], catch_exceptions=False)
    (expert,) = json.loads(as_json.stdout)
    assert expert["expert_id"] == "homelab_field_notes"
    assert expert["posts"] > 30 and expert["comments"] > 50
    assert expert["first_post_at"].startswith("2025-05") and expert["language"] == "en"


def test_import_json_with_options(isolated_environment: Path) -> None:
    result, discussion = demo_files("desk_gear_weekly")
    args = ["import", str(result), "--discussion", str(discussion), "--expert-id", "priya",
            "--channel", "desk_gear_weekly", "--author-id", "user6021947530", "--json"]  # fmt: skip
    imported = runner.invoke(experts_app, args, catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    report = json.loads(imported.stdout)
    assert (report["expert_id"], report["channel_source"]) == ("priya", "option")
    assert report["expert_comments"] > 10  # the author's personal account, named by id
    without = runner.invoke(
        experts_app,
        ["import", str(result), "--discussion", str(discussion), "--expert-id", "p2", "--json"],
        catch_exceptions=False,
    )
    assert json.loads(without.stdout)["expert_comments"] == 0  # signature "Priya" ≠ "Priya Raman"


def test_errors_are_one_line_and_exit_1(tmp_path: Path) -> None:
    missing = runner.invoke(experts_app, ["import", str(tmp_path / "nope.json")])
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: channel export ")
    assert missing.stderr.count("\n") == 1
    bad_id = runner.invoke(
        experts_app, ["import", str(demo_files("dannye_bez_boli")[0]), "--expert-id", "BAD ID"]
    )
    assert bad_id.exit_code == 1 and "--expert-id 'BAD ID'" in bad_id.stderr


def test_malformed_messages_go_to_stderr(tmp_path: Path) -> None:
    messages = [
        {"id": 2, "type": "message", "date_unixtime": "1780000000", "text": "see t.me/abcd_e/3"},
        {"id": 3, "type": "message", "date_unixtime": "1780000100", "text": "ok"},
        *({"id": 10 + i, "type": "message", "text": "no date"} for i in range(25)),
    ]
    path = tmp_path / "result.json"
    doc = {"name": "A", "type": "public_channel", "id": 1, "messages": messages}
    path.write_text(json.dumps(doc))
    result = runner.invoke(experts_app, ["import", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert f"{path} messages[2] (id 10): missing 'date' and 'date_unixtime'" in result.stderr
    assert "… and 5 more malformed messages" in result.stderr
    assert "25 malformed" in result.stdout


def test_list_when_empty() -> None:
    result = runner.invoke(experts_app, ["list"], catch_exceptions=False)
    assert result.exit_code == 0 and "no experts yet" in result.stdout
    assert json.loads(runner.invoke(experts_app, ["list", "--json"]).stdout) == []


def test_an_unusable_database_is_exit_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CROWDSIFT_DATABASE_URL", f"sqlite:///{blocker / 'db.sqlite'}")
    result = runner.invoke(experts_app, ["list"])
    assert result.exit_code == 1 and result.stderr.startswith("error: ")


def test_a_channel_without_a_username_imports_with_a_note_on_public_links(tmp_path: Path) -> None:
    messages = [{"id": 2, "type": "message", "date_unixtime": "1780000000", "text": "Oil the saw"}]
    path = tmp_path / "result.json"
    path.write_text(
        json.dumps({"name": "Shop", "type": "private_channel", "id": 42, "messages": messages})
    )

    result = runner.invoke(experts_app, ["import", str(path)], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "imported c_42 (Shop, t.me/c/42, no username: linked by channel id)" in result.stdout
    (note,) = [line for line in result.stdout.splitlines() if line.strip().startswith("note:")]
    assert "https://t.me/c/<channel id>/<message id>" in note and "--channel USERNAME" in note
