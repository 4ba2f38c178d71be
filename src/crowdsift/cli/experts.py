"""``crowdsift experts import|list``: load Telegram channel exports and see which experts exist.

Mounted by the main CLI as a sub-app. Output is for people (a short report or a table) unless
``--json``. Exit status: 1 with a one-line ``error: ...`` when a file cannot be imported or the
store cannot be used; bad messages inside an export are reported, not fatal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from crowdsift.cli.support import engine_choice, exit_codes
from crowdsift.core.config import get_settings
from crowdsift.core.errors import CrowdsiftError

if TYPE_CHECKING:  # imported inside the commands: `crowdsift --help` stays fast
    from crowdsift.sources.experts.db import SqlExpertStore
    from crowdsift.sources.experts.importer import ExpertImportReport

MAX_MALFORMED_SHOWN = 20

experts_app = typer.Typer(
    help=(
        "Expert archives: Telegram channels (Telegram Desktop JSON exports) with their "
        "discussion groups, for the Experts Panel."
    ),
    no_args_is_help=True,
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _store() -> SqlExpertStore:
    """The store at CROWDSIFT_DATABASE_URL, else the SQLite file under the data directory."""
    from crowdsift.sources.experts.db import SqlExpertStore

    return SqlExpertStore(get_settings().resolved_database_url)


@experts_app.command("import")
def import_command(
    result: Annotated[
        Path, typer.Argument(help="The channel's result.json (or the export directory).")
    ],
    expert_id: Annotated[
        str | None,
        typer.Option("--expert-id", help="Id to store the expert under. Default: the username."),
    ] = None,
    discussion: Annotated[
        Path | None,
        typer.Option("--discussion", help="result.json of the channel's discussion group."),
    ] = None,
    channel: Annotated[
        str | None,
        typer.Option(
            "--channel",
            help="The channel's t.me username, for post links. Default: inferred from the "
            "channel's links to its own posts; without one, links use the channel's id "
            "(https://t.me/c/ID/POST, for members only).",
        ),
    ] = None,
    author_ids: Annotated[
        list[str] | None,
        typer.Option(
            "--author-id",
            help="from_id of the channel's author in the group (e.g. user123); repeatable. "
            "Their comments count as the expert's.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Import a channel export (re-importing the same files changes nothing)."""
    try:
        store = _store()
        try:
            from crowdsift.sources.experts.importer import import_channel

            report = import_channel(
                store,
                result,
                expert_id=expert_id,
                discussion=discussion,
                channel=channel,
                expert_user_ids=author_ids or (),
            )
        finally:
            store.close()
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(report)
    _print_malformed(report)


@experts_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """Experts in the store, with post and comment counts and the dates of their posts."""
    try:
        store = _store()
        try:
            experts = store.experts()
        finally:
            store.close()
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps([e.model_dump(mode="json") for e in experts], indent=2))
        return
    if not experts:
        typer.echo("no experts yet; add one with `crowdsift experts import RESULT.json`")
        return
    table = Table(title="experts", title_justify="left")
    table.add_column("expert id", no_wrap=True)
    table.add_column("name")
    for column in ("lang", "posts", "comments", "first", "last"):
        numeric = column in ("posts", "comments")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=True)
    for e in experts:
        table.add_row(
            e.expert_id,
            e.name,
            e.language or "-",
            f"{e.posts:,}",
            f"{e.comments:,}",
            e.first_post_at.date().isoformat() if e.first_post_at else "-",
            e.last_post_at.date().isoformat() if e.last_post_at else "-",
        )
    Console().print(table)


def _print_report(report: ExpertImportReport) -> None:
    """A few plain lines: what was stored, then what was skipped and why."""
    source = {
        "option": "--channel",
        "self-links": "inferred from its own links",
        "channel-id": "no username: linked by channel id",
    }[report.channel_source]
    kinds = ", ".join(f"{n} {kind}" for kind, n in report.links_by_kind.items()) or "none"
    lines = [
        f"imported {report.expert_id} ({report.name}, t.me/{report.channel}, {source}) "
        f"in {report.elapsed_seconds:.2f}s",
        f"  posts {report.posts:,}  links {report.links:,} ({kinds})  "
        f"comments {report.comments:,} ({report.expert_comments:,} by the expert)",
        f"  skipped: {report.skipped_service} service, {report.empty_posts} without text, "
        f"{report.skipped_unsupported} unsupported, {len(report.malformed)} malformed",
    ]
    if report.first_post_at and report.last_post_at:
        first, last = report.first_post_at.date(), report.last_post_at.date()
        lines.append(f"  posts from {first} to {last}; language {report.language or 'unknown'}")
    if report.unresolved_forwards or report.dangling_links:
        lines.append(
            f"  links not kept: {report.dangling_links} to posts outside the export, "
            f"{report.unresolved_forwards} forwards whose original was not found"
        )
    if report.naive_dates:
        lines.append(f"  {report.naive_dates} dates had no date_unixtime and were read as UTC")
    if report.note:
        lines.append(f"  note: {report.note}")
    if (d := report.discussion) is not None:
        lines.append(
            f"  discussion: {d.matched_copies}/{d.copies} post copies matched, "
            f"{d.threads} threads, {d.orphan_comments} orphan replies, "
            f"{d.unthreaded_messages} messages outside threads, {d.empty_comments} without text"
        )
    typer.echo("\n".join(lines))


def _print_malformed(report: ExpertImportReport) -> None:
    """``where: reason`` for the first malformed messages (stderr, plain)."""
    for bad in report.malformed[:MAX_MALFORMED_SHOWN]:
        typer.echo(f"{bad.where}: {bad.reason}", err=True)
    hidden = len(report.malformed) - MAX_MALFORMED_SHOWN
    if hidden > 0:
        typer.echo(f"… and {hidden:,} more malformed messages", err=True)


@experts_app.command("drift")
def drift_command(
    expert: Annotated[
        list[str] | None,
        typer.Option("--expert", "-x", help="Expert id (repeatable). Default: every expert."),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", "-e", help="local (embedding clustering) | openai."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Find topic-drift comment groups (offline; MODEL_DRIFT_ANALYSIS or local clustering)."""
    import asyncio

    from crowdsift.pipeline.experts.commands import drift

    with exit_codes():
        found = asyncio.run(drift(get_settings(), expert, engine_choice=engine_choice(engine)))
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    if not found:
        typer.echo("no experts yet; add one with `crowdsift experts import RESULT.json`")
    for expert_id, groups in found.items():
        typer.echo(f"{expert_id}: {groups} drift groups stored")
