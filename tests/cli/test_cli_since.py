"""``--since`` on the command line: a bad value is a usage error (exit 2) that lists the
accepted forms; ``fetch --since`` keeps older posts out and says the window it used."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.since import ACCEPTED_FORMS

runner = CliRunner()


def invoke(*args: str) -> object:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize("value", ["nope", "30", "0d", "2999-01-01", "2026-02-30"])
@pytest.mark.parametrize(
    "command",
    [("ask", "is the Plaud Note worth it?"), ("fetch", "--plan", "examples/demo_plan.json")],
)
def test_bad_since_is_a_usage_error_listing_the_forms(value: str, command: tuple[str, ...]) -> None:
    result = invoke(*command, "--since", value)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    (line,) = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert line.startswith("error: --since ") and ACCEPTED_FORMS in line
    assert result.stdout == ""  # type: ignore[attr-defined]


def test_fetch_since_keeps_older_posts_out_of_the_json() -> None:
    result = invoke(
        "fetch", "--plan", "examples/demo_plan.json", "--since", "2025-06-01", "--json",
        "--no-store",
    )  # fmt: skip
    assert result.exit_code == 0  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert data["since"] == "2025-06-01T00:00:00Z"
    bound = datetime.fromisoformat(data["since"])
    assert data["posts"]
    assert all(datetime.fromisoformat(p["created_at"]) >= bound for p in data["posts"])
    everything = json.loads(
        invoke("fetch", "--plan", "examples/demo_plan.json", "--json", "--no-store").stdout  # type: ignore[attr-defined]
    )
    assert everything["since"] is None
    assert any(datetime.fromisoformat(p["created_at"]) < bound for p in everything["posts"])


def test_fetch_since_says_the_window_in_its_first_line() -> None:
    result = invoke(
        "fetch", "--plan", "examples/demo_plan.json", "--since", "2025-06-01", "--no-store"
    )
    first = result.stdout.splitlines()[0]  # type: ignore[attr-defined]
    assert " posts since 2025-06-01 for: " in first


@pytest.mark.parametrize("value", ["6m", "1y", "all"])
def test_fetch_takes_months_years_and_all(value: str) -> None:
    result = invoke(
        "fetch", "--plan", "examples/demo_plan.json", "--since", value, "--json", "--no-store"
    )
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    bound = datetime.fromisoformat(data["since"])
    assert all(datetime.fromisoformat(p["created_at"]) >= bound for p in data["posts"])
    if value == "all":
        assert data["since"] == "1970-01-01T00:00:00Z"
