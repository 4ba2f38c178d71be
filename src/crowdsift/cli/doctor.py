"""``crowdsift doctor``: one line per check with its fix; exit 0 when the default path works.

The checks live in ``crowdsift.service.doctor`` (imported inside the command, so ``--help``
stays instant); this module only prints them: a line each (status, name, what was found, and
for anything not ``ok`` what to do), then one line on what a plain ``crowdsift ask`` would use.
``--json`` prints the ``DoctorReport`` instead. Exit 1 when any check failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from crowdsift.core.config import get_settings

if TYPE_CHECKING:
    from crowdsift.service.doctor import DoctorReport

_LABELS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skipped": "skip"}


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the main app."""
    app.command("doctor")(doctor)


def doctor(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (one object per check).")
    ] = False,
) -> None:
    """Check what a run needs; each line says what works and what to do.

    Reddit credentials, Arctic Shift, your archive, the LLM endpoint, the embedding model and
    the stores in use. Exit 1 when the default path (`crowdsift ask` with no flags) would not
    work.
    """
    from crowdsift.service.doctor import DoctorContext, run_doctor

    report = run_doctor(DoctorContext(get_settings()))
    if json_output:
        typer.echo(report.model_dump_json(indent=2))
    else:
        for line in render_lines(report):
            typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)


def render_lines(report: DoctorReport) -> list[str]:
    """The terminal form: ``<status> <name> <detail>[ — fix: <fix>]`` per check, then the
    default path and the verdict."""
    from crowdsift.service.doctor import default_path

    width = max((len(c.name) for c in report.checks), default=0)
    lines = []
    for check in report.checks:
        line = f"{_LABELS[check.status]:<4}  {check.name:<{width}}  {check.detail}"
        if check.fix and check.status != "ok":
            line += f" — fix: {check.fix}"
        lines.append(line)
    failed = [c.name for c in report.checks if c.status == "fail"]
    lines.append(default_path(report))
    lines.append(
        f"{len(failed)} check(s) failed: {', '.join(failed)}" if failed else "all checks passed"
    )
    return lines
