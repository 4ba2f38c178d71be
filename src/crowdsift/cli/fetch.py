"""``crowdsift fetch``: run a SearchPlan file against a Reddit source, print what passed.

The plan file is untrusted input: ``load_plan`` turns every way it can be wrong into one
``PlanError`` line (exit 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from crowdsift.cli.support import exit_codes as _exit_codes
from crowdsift.cli.support import since_option as _since
from crowdsift.cli.support import source_name as _source_name
from crowdsift.cli.support import source_warnings as _source_warnings
from crowdsift.core.config import Settings, SourceName, get_settings
from crowdsift.core.errors import PlanError
from crowdsift.core.models import FetchReport, FetchResult, SearchPlan
from crowdsift.core.since import format_since


def load_plan(path: Path) -> SearchPlan:
    """Read a SearchPlan JSON file ("-" for stdin); every failure is a one-line PlanError."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError(f"plan file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read plan file {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(
            f"plan file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except (RecursionError, ValueError) as exc:  # nesting or a number the decoder refuses
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise PlanError(f"plan file {path} is not valid JSON ({reason})") from None
    try:
        return SearchPlan.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'plan'}: {error['msg']}"
            for error in exc.errors()
        )
        raise PlanError(f"plan file {path} is not a valid SearchPlan: {problems}") from None


def register(app: typer.Typer) -> None:
    """Add ``crowdsift fetch`` to the command line."""
    app.command()(fetch)


def fetch(
    plan: Annotated[
        Path, typer.Option("--plan", "-p", help="SearchPlan JSON file ('-' for stdin).")
    ],
    source: Annotated[
        str | None,
        typer.Option(
            "--source", "-s", help="auto | reddit-api | arctic-shift | archive (default: auto)."
        ),
    ] = None,
    archive: Annotated[
        Path | None, typer.Option("--archive", help="Archive file for --source archive.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the FetchResult as JSON.")] = False,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="The question this plan serves.")
    ] = None,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Persist comments to the comment store.")
    ] = True,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only posts since then: 12h, 30d, 2w, 6m, 1y, a date (2026-01-01) or all.",
        ),
    ] = None,
) -> None:
    """Run a SearchPlan against a Reddit source and print the approved posts and comments."""
    settings = get_settings()
    with _exit_codes():
        bound = _since(since)
        search_plan = load_plan(plan)
        if bound is not None:
            search_plan = search_plan.model_copy(update={"since": bound})
        source_name = _source_name(source)
        result, report = _run_fetch(settings, search_plan, source_name, archive, query, store)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_result(result)
    _print_report(report)
    _source_warnings(result.source_status)
    if report.errors:
        raise typer.Exit(1)


def _run_fetch(
    settings: Settings,
    plan: SearchPlan,
    source_name: SourceName | None,
    archive: Path | None,
    query: str | None,
    persist: bool,
) -> tuple[FetchResult, FetchReport]:
    from crowdsift.service.facade import fetch as run_fetch

    return run_fetch(
        settings, plan, query=query, persist=persist, source=source_name, archive=archive,
        notice=lambda text: typer.echo(f"note: {text}", err=True),
    )  # fmt: skip


def _print_result(result: FetchResult) -> None:
    """Two lines per post, so URLs stay whole (and clickable) at any terminal width."""
    window = f" since {format_since(result.since)}" if result.since else ""
    typer.echo(f"{len(result.posts)} posts{window} for: {result.query}")
    for number, post in enumerate(result.posts, start=1):
        typer.echo(
            f"{number:>3}. [{post.relevance_score:.2f}] r/{post.subreddit} · "
            f"{post.post_karma} points · {len(post.comments)} comments · {post.title}"
        )
        typer.echo(f"     {post.url}")


def _print_report(report: FetchReport) -> None:
    posts = ", ".join(f"{k.value}={v}" for k, v in sorted(report.post_rejections.items())) or "-"
    comments = (
        ", ".join(f"{k.value}={v}" for k, v in sorted(report.comment_rejections.items())) or "-"
    )
    lines = [
        f"source {report.source}: {report.requests} requests, {report.retries} retries, "
        f"{report.cache_hits} from the response cache",
        f"posts: {report.posts_accepted} accepted of {report.posts_seen}; rejected: {posts}",
        f"comments: {report.comments_accepted} accepted of {report.comments_seen}; "
        f"rejected: {comments}",
    ]
    lines += [f"skipped r/{sub}: {why}" for sub, why in report.skipped_subreddits.items()]
    lines += [f"failed: {error}" for error in report.errors]
    for line in lines:
        typer.echo(line, err=True)
