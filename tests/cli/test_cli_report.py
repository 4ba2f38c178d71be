"""``crowdsift ask --format text|json|md|html`` and ``-o FILE``, in-process.

One real run on the bundled demo archive (the "X vs Y" question) prints Markdown; the rest
replace the research with a crafted result, since they test only where the answer goes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

import crowdsift.pipeline.research as research_module
from crowdsift.cli.main import app
from crowdsift.pipeline.result import ResearchResult
from tests.pipeline.report.results import comparison_result

runner = CliRunner()
QUESTION = "Airflow vs Dagster for a small team?"


def ask(*args: str) -> Result:
    return runner.invoke(app, ["ask", QUESTION, *args], catch_exceptions=False)


@pytest.fixture
def crafted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The research returns ``comparison_result()``; the list records each question asked."""
    asked: list[str] = []

    async def research(question: str, **_kwargs: Any) -> ResearchResult:
        asked.append(question)
        return comparison_result()

    monkeypatch.setattr(research_module, "research_async", research)
    return asked


def test_the_demo_comparison_prints_as_markdown() -> None:
    result = ask("--engine", "local", "--source", "archive", "--no-store", "--format", "md")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith(f"# {QUESTION}\n\n> **SAMPLE DATA:**")
    for heading in ("## Answer", "## Comparison", "## Sources"):
        assert f"\n{heading}\n" in text
    cited = set(re.findall(r"\]\(#source-(\d+)\)", text))
    listed = set(re.findall(r'<a id="source-(\d+)"></a>', text))
    assert cited and cited <= listed
    assert "| airflow |" in text.lower() and "| dagster |" in text.lower()
    assert "[post:" not in text and "[comment:" not in text
    assert re.search(r"^status: ok · engine: local .* · source: archive", text, re.MULTILINE)


def test_html_goes_to_the_file_and_stdout_stays_empty(crafted: list[str], tmp_path: Path) -> None:
    out = tmp_path / "answer.html"
    result = ask("--format", "html", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert f"wrote {out} (html)" in result.stderr
    page = out.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<h1>Airflow vs Dagster for a small team?</h1>" in page


@pytest.mark.parametrize(
    ("name", "start"),
    [("a.md", "# Airflow"), ("a.HTML", "<!DOCTYPE html>"), ("a.json", "{"), ("a.txt", "Airflow")],
)
def test_the_file_suffix_chooses_the_format(
    crafted: list[str], tmp_path: Path, name: str, start: str
) -> None:
    out = tmp_path / name
    assert ask("-o", str(out)).exit_code == 0
    assert out.read_text("utf-8").startswith(start)


def test_json_is_an_alias_of_format_json(crafted: list[str]) -> None:
    old, new = ask("--json"), ask("--format", "json")
    assert old.stdout == new.stdout
    assert json.loads(new.stdout)["question"] == QUESTION


def test_the_text_answer_is_unchanged_by_default(crafted: list[str]) -> None:
    from crowdsift.cli.render import render_research

    assert ask().stdout == render_research(comparison_result()) + "\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "pdf"), "unknown --format 'pdf': use text, json, md, html"),
        (("--json", "--format", "md"), "--json means --format json"),
        (("-o", "/nonexistent-dir/answer.md"), "the folder /nonexistent-dir does not exist"),
    ],
)
def test_a_bad_format_or_file_is_a_usage_error_before_any_search(
    crafted: list[str], args: tuple[str, ...], message: str
) -> None:
    result = ask(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert crafted == []
