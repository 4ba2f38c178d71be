"""``crowdsift archive``: import dumps into a local archive and see what it holds.

Mounted by the main CLI as a sub-app. Output is for people (a table) unless ``--json``; a
progress bar appears only on a terminal. Exit status: 1 when a file could not be read or gave
no record at all (the others are still imported) or the archive cannot be used, 0 otherwise
(bad lines in a file that gave records are reported, not fatal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from crowdsift.cli.support import exit_codes
from crowdsift.core.config import SourceName, get_settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.sources.archive.csv_rows import parse_columns_option
from crowdsift.sources.archive.importer import ImportProgress, import_files
from crowdsift.sources.archive.paths import default_archive_path, resolve_archive_path
from crowdsift.sources.archive.report import FileReport, ImportReport
from crowdsift.sources.archive.stats import archive_stats
from crowdsift.sources.archive.streams import content_suffix
from crowdsift.sources.archive.vectors import (
    AUTO_EMBED_LIMIT,
    EmbedReport,
    archive_missing_vectors,
    embed_archive,
)

app = typer.Typer(
    help=(
        "Build and inspect a local Reddit archive (SQLite + full-text search) from "
        "Pushshift / Arctic Shift dumps or saved Reddit API JSON, for `--source archive`."
    ),
    no_args_is_help=True,
)

ArchiveOption = Annotated[
    Path | None,
    typer.Option(
        "--archive",
        dir_okay=False,
        help="Archive file. Default: CROWDSIFT_ARCHIVE, else <data dir>/archive.sqlite.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


@app.command("import")
def import_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Dump files (RS_*/RC_* NDJSON, plain or .zst/.gz/.bz2/.xz), saved API answers "
            "(.json, or one per NDJSON line) or .csv files with a header."
        ),
    ],
    archive: ArchiveOption = None,
    as_json: JsonOption = False,
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Add search by meaning for the new threads (default: when at most "
            f"{AUTO_EMBED_LIMIT:,} threads lack it; else `crowdsift archive embed` adds it).",
        ),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="CSV columns whose names say nothing, as field=column,… (e.g. "
            "body=comment_text,post_id=submission). Fields: id, title, selftext, body, text, "
            "score, created_utc, subreddit, post_id (link_id), parent_id, permalink (url), "
            "author, num_comments.",
        ),
    ] = None,
) -> None:
    """Import dump files into the archive (re-importing the same files changes nothing)."""
    target = archive if archive is not None else default_archive_path(get_settings())
    mapping = _columns_mapping(columns, files)
    console = Console()
    try:
        if console.is_terminal and not as_json:
            report = _import_with_bar(files, target, console, mapping)
        else:
            report = import_files(files, target, columns=mapping)
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        console.print(_report_table(report))
        _print_bad_lines(report)
    if report.rehashed:
        typer.echo(_rehashed_note(report.rehashed, report.archive), err=True)
    for file in report.files:
        if file.error:
            typer.echo(f"error: {file.error}", err=True)
    if report.posts or embed:
        _embed_after_import(Path(report.archive), console, wanted=embed, quiet=as_json)
    if not report.ok:
        raise typer.Exit(1)


@app.command("embed")
def embed_command(archive: ArchiveOption = None, as_json: JsonOption = False) -> None:
    """Add search by meaning: a vector for every thread that has none (title and opening).

    Questions phrased unlike the thread that answers them are then found as well. Safe to
    interrupt: each batch is kept, and the next run goes on from there."""
    target = archive if archive is not None else default_archive_path(get_settings())
    console = Console(stderr=True)
    with exit_codes():
        report = _run_embed(target, console, show_bar=console.is_terminal and not as_json)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(_embed_summary(report))


def _embed_after_import(
    target: Path, console: Console, *, wanted: bool | None, quiet: bool
) -> None:
    """After an import: embed the new threads when asked, or by default when they are few; a
    failure here never fails the import (its records are in), it says what to run."""
    if wanted is False:
        return
    try:
        missing = archive_missing_vectors(target)
        if missing == 0:
            return
        if wanted is None and missing > AUTO_EMBED_LIMIT:
            typer.echo(
                f"note: {missing:,} threads have no search by meaning yet (more than "
                f"{AUTO_EMBED_LIMIT:,}, about {missing / 100 / 60:.0f} min on 2 cores); "
                "`crowdsift archive embed` adds it",
                err=True,
            )
            return
        report = _run_embed(target, console, show_bar=console.is_terminal and not quiet)
    except CrowdsiftError as exc:
        typer.echo(
            f"note: search by meaning was not added ({exc}); the archive is searched by words. "
            "`crowdsift archive embed` adds it later",
            err=True,
        )
        return
    if not quiet:
        typer.echo(_embed_summary(report), err=True)


def _run_embed(target: Path, console: Console, *, show_bar: bool) -> EmbedReport:
    from crowdsift.engines.embedding import MiniLMEmbedder

    embedder = MiniLMEmbedder.from_settings(get_settings())
    if not show_bar:
        return embed_archive(target, embedder)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TimeRemainingColumn(), console=console
    ) as bar:
        task = bar.add_task("embedding threads", total=None)

        def on_progress(done: int, total: int) -> None:
            bar.update(
                task, completed=done, total=total, description=f"embedding {total:,} threads"
            )

        return embed_archive(target, embedder, progress=on_progress)


def _embed_summary(report: EmbedReport) -> str:
    again = " (vectors of another model were replaced)" if report.rebuilt else ""
    return (
        f"search by meaning: {report.embedded:,} threads embedded in {report.seconds:.1f}s; "
        f"{report.total:,} threads in the archive{again}"
    )


@app.command("stats")
def stats_command(archive: ArchiveOption = None, as_json: JsonOption = False) -> None:
    """Posts, comments and date range per subreddit in the archive."""
    try:
        path, is_demo = resolve_archive_path(get_settings(), archive)
        rows = archive_stats(path)
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        payload = {
            "archive": str(path),
            "demo": is_demo,
            "subreddits": [row.model_dump(mode="json") for row in rows],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    title = Text(f"{path}{' (bundled demo)' if is_demo else ''}")
    table = Table(title=title, title_justify="left")
    for column in ("subreddit", "posts", "comments", "first", "last"):
        table.add_column(column, justify="right" if column in ("posts", "comments") else "left")
    for row in rows:
        first = row.first_created.date().isoformat() if row.first_created else "-"
        last = row.last_created.date().isoformat() if row.last_created else "-"
        table.add_row(row.subreddit, f"{row.posts:,}", f"{row.comments:,}", first, last)
    Console().print(table)
    for row in rows:
        if row.comments and not row.posts:
            typer.echo(
                f"note: r/{row.subreddit} holds {row.comments:,} "
                f"{_plural(row.comments, 'comment')} but none of their "
                "posts; the search finds threads by their posts, so import those to search it",
                err=True,
            )
    if not rows:
        typer.echo("the archive is empty; add dumps with `crowdsift archive import FILE...`")


@app.command("migrate")
def migrate_command(archive: ArchiveOption = None, as_json: JsonOption = False) -> None:
    """Convert an archive built by an older crowdsift to the current format, in place.

    Compresses every record and makes comments searchable; safe to interrupt (the old file
    stays as it was until the new one is complete). Progress goes to stderr.
    """
    from crowdsift.sources.archive.migrate import MigrateProgress, migrate_archive

    target = archive if archive is not None else default_archive_path(get_settings())

    def on_progress(event: MigrateProgress) -> None:
        share = event.done / event.total if event.total else 1.0
        typer.echo(
            f"migrating {target.name}: {event.table} {event.done:,} of {event.total:,} "
            f"({share:.0%})",
            err=True,
        )

    try:
        report = migrate_archive(target, progress=on_progress)
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    if not report.migrated:
        typer.echo(f"{target} is in the current format already; nothing to do")
        return
    typer.echo(
        f"migrated {target}: {report.posts:,} posts and {report.comments:,} comments, "
        f"{report.bytes_before / 1e6:,.1f} MB -> {report.bytes_after / 1e6:,.1f} MB "
        f"in {report.elapsed_seconds:.1f}s"
    )
    if report.unreadable:
        typer.echo(f"note: {report.unreadable:,} unreadable rows were left out", err=True)


@app.command("purge-deleted")
def purge_deleted_command(
    archive: ArchiveOption = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Where to re-check: reddit-api | arctic-shift. Default: reddit-api when "
            "REDDIT_CLIENT_ID/SECRET are set, else arctic-shift (which knows fewer removals).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be purged; change nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Re-check stored posts at the source; purge deleted/removed ones everywhere.

    Everywhere: the archive (posts and their comments), the comment store and the feed index.
    Safe to interrupt and re-run.
    """
    from crowdsift.service.purge import Verdict, run_purge

    if source not in (None, "reddit-api", "arctic-shift"):
        typer.echo(f"error: --source {source!r}: use reddit-api or arctic-shift", err=True)
        raise typer.Exit(2)
    chosen = cast("SourceName | None", source)
    try:
        report = run_purge(get_settings(), archive=archive, source=chosen, dry_run=dry_run)
    except CrowdsiftError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if report.rehashed:
        typer.echo(_rehashed_note(report.rehashed, report.archive or ""), err=True)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    for post in report.posts:
        where = f" (r/{post.subreddit})" if post.subreddit else ""
        typer.echo(f"{'would purge' if dry_run else 'purged'} {post.id}{where}: {post.verdict}")
    counts = ", ".join(f"{report.verdicts[v]:,} {v}" for v in Verdict if v in report.verdicts)
    typer.echo(f"checked {report.checked:,} posts at {report.source}: {counts or 'none stored'}")
    if report.missing_kept:
        typer.echo(f"kept {report.missing_kept:,} posts {report.source} does not hold")
    if dry_run:
        typer.echo(f"dry run: {len(report.posts):,} posts would be purged; nothing was changed")
        return
    typer.echo(
        f"purged {len(report.posts):,} posts: archive {report.archive_posts:,} posts and "
        f"{report.archive_comments:,} comments, comment store {report.comment_store_rows:,} "
        f"comments, feed index {report.index_posts:,} posts"
    )


def _rehashed_note(rows: int, archive: str) -> str:
    return (
        f"note: usernames in {rows:,} rows of {archive} were replaced by salted hashes "
        "(CROWDSIFT_KEEP_USERNAMES=1 keeps them)"
    )


@dataclass
class _BarState:
    """Bytes of the files already finished, so the bar spans all files."""

    file: str = ""
    done: int = 0
    size: int = 0


def _columns_mapping(option: str | None, files: list[Path]) -> dict[str, str]:
    """``--columns`` as {field: column}; exit 2 when it is malformed or no file is CSV."""
    if option is None:
        return {}
    try:
        mapping = parse_columns_option(option)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if not any(content_suffix(path) == ".csv" for path in files):
        typer.echo("error: --columns maps the columns of .csv files; none is given", err=True)
        raise typer.Exit(2)
    return mapping


def _import_with_bar(
    files: list[Path], target: Path, console: Console, mapping: dict[str, str] | None = None
) -> ImportReport:
    """Import with one bar over the total bytes of all files on disk."""
    total = sum(p.stat().st_size for p in files if p.is_file())
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("importing", total=total)
        state = _BarState()

        def on_progress(event: ImportProgress) -> None:
            if event.file != state.file:
                state.done += state.size
                state.file = event.file
            state.size = event.total_bytes
            bar.update(
                task,
                completed=state.done + event.bytes_read,
                description=f"{Path(event.file).name}: {event.records:,} records",
            )

        return import_files(files, target, progress=on_progress, columns=mapping)


def _report_table(report: ImportReport) -> Table:
    table = Table(
        title=Text(f"imported into {report.archive} in {report.elapsed_seconds:.1f}s"),
        title_justify="left",
    )
    table.add_column("file")
    for column in ("lines", "posts", "comments", "skipped", "bad"):
        table.add_column(column, justify="right")
    table.add_column("status")
    for f in report.files:
        counts = (f.lines, f.posts, f.comments, f.skipped, f.bad_lines)
        table.add_row(Text(Path(f.path).name), *(f"{n:,}" for n in counts), _status(f))
    totals = (report.lines, report.posts, report.comments, report.skipped, report.bad_lines)
    table.add_row("total", *(f"{n:,}" for n in totals), "", style="bold")
    return table


def _status(f: FileReport) -> str:
    """ok; partial (records kept, then the file failed); failed (read, but no record came of
    it); unreadable (not read at all). The shape of a CSV file is said here too."""
    if f.error and not (f.posts or f.comments):
        return "unreadable" if not f.lines else "failed"
    status = "partial" if f.error else "ok"
    if f.format in ("csv-posts", "csv-comments"):
        status += f" ({f.format.removeprefix('csv-')})"
    return status


SHOWN_BAD_LINES = 3
"""Bad lines printed per file, as examples; ``--json`` holds the first 20 and the count."""


def _print_bad_lines(report: ImportReport) -> None:
    """``file:line: reason`` for the first bad lines of each file that gave records, then how
    many were left out (plain, never markup). A file that gave none is not listed here: its
    error says the first reason, once."""
    for f in report.files:
        if not f.bad_lines or not (f.posts or f.comments):
            continue
        shown = f.first_bad_lines[:SHOWN_BAD_LINES]
        for bad in shown:
            typer.echo(f"{f.path}:{bad.line_no}: {bad.reason}", err=True)
        kept = f.posts + f.comments
        which = "above" if len(shown) == f.bad_lines else f"the first {len(shown)} above"
        typer.echo(
            f"{f.path}: {f.bad_lines:,} bad {_plural(f.bad_lines, 'line')} left out "
            f"({which}); {kept:,} {_plural(kept, 'record')} imported",
            err=True,
        )


def _plural(count: int, word: str) -> str:
    return word if count == 1 else f"{word}s"
