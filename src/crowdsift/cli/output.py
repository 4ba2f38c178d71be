"""``ask --format text|json|md|html`` and ``-o FILE``: which form the answer takes, and where.

The choice is checked before the run starts (a typo should not cost a minute of searching):
``--json`` is kept as the old spelling of ``--format json``; without ``--format``, ``-o`` takes
the format from the file's suffix (``.md``/``.markdown``, ``.html``/``.htm``, ``.json``, anything
else text). The terminal text keeps ``--full``; a Markdown or HTML report is always the whole
answer (``crowdsift.pipeline.report``), since a kept answer is read later, not on a screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from crowdsift.core.errors import CrowdsiftError, PlanError
from crowdsift.pipeline.result import ResearchResult

OutputFormat = Literal["text", "json", "md", "html"]
FORMATS: tuple[str, ...] = get_args(OutputFormat)
SUFFIXES: dict[str, OutputFormat] = {
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
}
"""What ``-o FILE`` means without ``--format``; any other suffix is text."""


def choose_format(value: str | None, *, as_json: bool, output: Path | None) -> OutputFormat:
    """The format asked for, or a usage error saying what to ask instead."""
    if value is not None:
        chosen = value.strip().lower()
        if chosen not in FORMATS:
            raise PlanError(f"unknown --format {value!r}: use {', '.join(FORMATS)}")
        if as_json and chosen != "json":
            raise PlanError(f"--json means --format json; drop one of --json, --format {chosen}")
        return chosen  # type: ignore[return-value]
    if as_json:
        return "json"
    if output is not None:
        return SUFFIXES.get(output.suffix.lower(), "text")
    return "text"


def check_output(output: Path | None) -> None:
    """Refuse, before the run, a file that could not be written: no such folder, or a folder."""
    if output is None:
        return
    if output.is_dir():
        raise PlanError(f"-o {output} is a folder: name a file, e.g. -o {output / 'answer.md'}")
    if not output.parent.is_dir():
        raise PlanError(f"-o {output}: the folder {output.parent} does not exist; create it first")


def render_output(result: ResearchResult, fmt: OutputFormat, *, full: bool) -> str:
    """``result`` in ``fmt``, ending in one newline."""
    if fmt == "json":
        text = result.model_dump_json(indent=2)
    elif fmt == "text":
        from crowdsift.cli.render import render_research

        text = render_research(result, full=full)
    else:
        from crowdsift.pipeline.report import render_report

        text = render_report(result, fmt)
    return text if text.endswith("\n") else text + "\n"


def write_output(text: str, output: Path) -> None:
    """Write the answer to ``output`` (UTF-8, replacing what was there)."""
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CrowdsiftError(
            f"could not write {output}: {exc.strerror or exc}; choose another -o file"
        ) from None


def emit(result: ResearchResult, fmt: OutputFormat, output: Path | None, *, full: bool) -> None:
    """Print the answer, or write it to ``output`` and say so on stderr (stdout stays empty,
    so ``-o`` composes with scripts that read stdout)."""
    import typer

    text = render_output(result, fmt, full=full)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_output(text, output)
    typer.echo(f"wrote {output} ({fmt})", err=True)
