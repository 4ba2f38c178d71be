"""The README's front page is short, and every command it shows runs on the bundled sample and
prints a non-empty answer, as a newcomer would type it."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.demo import demo_dump_files
from tests.cli.test_cli_help import README, readme_command_lines

FRONT_PAGE_LINES = 150
runner = CliRunner()


def test_the_front_page_reads_in_two_minutes() -> None:
    assert len(README.read_text().splitlines()) <= FRONT_PAGE_LINES


@pytest.mark.parametrize("line", sorted(readme_command_lines(README)))
def test_every_front_page_command_runs_on_the_sample(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = shlex.split(line)[1:]
    if args[:2] == ["archive", "import"]:  # the dump files it names: the sample's, renamed
        for name, dump in zip(args[2:], demo_dump_files(), strict=True):
            shutil.copy(dump, tmp_path / name)
        args.append("--no-embed")  # search by meaning is tested elsewhere; this is the import
    env = {"CROWDSIFT_HOME": str(tmp_path / "home"), "COLUMNS": "100"}
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 0, (line, result.output)
    assert result.stdout.strip(), line
