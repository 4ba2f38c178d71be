"""``crowdsift index``, ``crowdsift feed`` and ``crowdsift simulate``: argument parsing only.

The work happens in ``crowdsift.feed.commands``, imported inside each command so that Chroma
and the embedding model load only when a feed command actually runs.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from crowdsift.cli.support import engine_choice, error, exit_codes
from crowdsift.core.config import get_settings
from crowdsift.core.errors import PlanError
from crowdsift.core.extras import require_extra

if TYPE_CHECKING:
    from crowdsift.feed.simulation import SimulationSummary

ModeOption = Literal["preference", "random"]
T = TypeVar("T")


def register(app: typer.Typer) -> None:
    """Add the feed commands to the main app."""
    app.command("index")(index)
    app.command("feed")(feed)
    app.command("simulate")(simulate)


def index(
    fetch_result: Annotated[
        Path | None,
        typer.Argument(
            help="A FetchResult JSON file "
            "(`crowdsift fetch --plan PLAN.json --json > result.json`)."
        ),
    ] = None,
    archive: Annotated[
        Path | None,
        typer.Option(
            "--archive",
            dir_okay=False,
            help="Index every post of this archive. Default: CROWDSIFT_ARCHIVE, the imported "
            "archive, else the bundled demo archive.",
        ),
    ] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Empty the index first.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Index posts into the feed store (Chroma) so `feed` and `simulate` can read them."""
    _require_feed_extra()
    from crowdsift.feed.commands import run_index

    if fetch_result is not None and archive is not None:
        error("give a FetchResult file or --archive, not both")
        raise typer.Exit(2)
    console = Console(stderr=True)
    columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with (
        exit_codes(),
        Progress(*columns, console=console, disable=not console.is_terminal) as bar,
    ):
        task = bar.add_task("indexing", total=None)
        report = run_index(
            get_settings(),
            fetch_result=fetch_result,
            archive=archive,
            clear=clear,
            on_total=lambda total: bar.update(task, total=total),
            on_progress=lambda done: bar.update(task, completed=done),
        )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(
        f"indexed {report.indexed:,} posts from {report.source} into collection "
        f"{report.collection!r} at {report.location} "
        f"({report.posts_per_second:,.0f} posts/s; {report.total_in_index:,} in the index)"
    )
    if report.skipped:
        typer.echo(f"skipped {len(report.skipped):,} posts:", err=True)
        for line in report.skipped[:10]:
            typer.echo(f"  {line}", err=True)
        if len(report.skipped) > 10:
            typer.echo(f"  … and {len(report.skipped) - 10:,} more", err=True)


def feed(
    interests: Annotated[
        str | None,
        typer.Option("--interests", "-i", help='Comma-separated, e.g. "crypto,technology".'),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="preference (by interests) | random.")
    ] = "preference",
    size: Annotated[
        int | None, typer.Option("--size", "-n", help="Posts in the feed (1-20).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed for reproducible random feeds.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the posts as JSON.")] = False,
) -> None:
    """Show one feed from the index: the posts closest to your interests, or a random sample."""
    _require_feed_extra()
    from crowdsift.feed.commands import run_feed

    with exit_codes():
        chosen = _mode(mode)
        wanted = _interests(interests)
        if chosen == "preference" and not wanted:
            raise PlanError('preference mode needs --interests "a,b" (or use --mode random)')
        posts = _checked(
            lambda: run_feed(get_settings(), interests=wanted, mode=chosen, size=size, seed=seed)
        )
    if as_json:
        typer.echo(json.dumps([p.model_dump(mode="json") for p in posts], indent=2))
        return
    for number, post in enumerate(posts, start=1):
        typer.echo(f"{number}. {post.title}")
        typer.echo(f"   r/{post.subreddit} · {post.post_karma} karma · {post.url}")


def simulate(
    agents: Annotated[
        Path, typer.Option("--agents", "-a", help="agents.yaml (name, interests, persona).")
    ],
    rounds: Annotated[int, typer.Option("--rounds", "-r", min=1, help="Rounds to run.")] = 3,
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="preference | random | mixed.")
    ] = "preference",
    seed: Annotated[int, typer.Option("--seed", help="Seed: same seed, same run.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Actions JSONL. Default: <data dir>/simulations/."),
    ] = None,
    size: Annotated[int | None, typer.Option("--size", "-n", help="Posts per feed (1-20).")] = None,
    engine: Annotated[
        str | None, typer.Option("--engine", "-e", help="local (no key) | openai.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Agents read feeds for N rounds and like, comment, share or skip; actions go to JSONL."""
    _require_feed_extra()
    from crowdsift.feed.commands import default_actions_path, run_simulate

    settings = get_settings()
    with exit_codes():
        chosen = _simulation_mode(mode)
        target = out or default_actions_path(settings, agents, seed)
        summary = _checked(
            lambda: asyncio.run(
                run_simulate(
                    settings,
                    agents_file=agents,
                    rounds=rounds,
                    mode=chosen,
                    seed=seed,
                    out=target,
                    size=size,
                    engine_choice=engine_choice(engine),
                )
            )
        )
    if as_json:
        typer.echo(summary.model_dump_json(indent=2))
    else:
        _print_summary(summary)
    typer.echo(f"actions written to {target}", err=True)


def _require_feed_extra() -> None:
    """Feeds live in Chroma, the ``[feed]`` extra: without it, exit 2 with the pip line."""
    with exit_codes():
        require_extra("feed", "chromadb")


def _checked(call: Callable[[], T]) -> T:
    """Contract-level ValueErrors (bad feed size, bad interests) are usage errors (exit 2)."""
    try:
        return call()
    except ValueError as exc:
        raise PlanError(str(exc)) from exc


def _mode(value: str) -> ModeOption:
    if value not in ("preference", "random"):
        raise PlanError(f"unknown --mode {value!r}: use preference or random")
    return value  # type: ignore[return-value]


def _simulation_mode(value: str) -> Literal["preference", "random", "mixed"]:
    if value not in ("preference", "random", "mixed"):
        raise PlanError(f"unknown --mode {value!r}: use preference, random or mixed")
    return value  # type: ignore[return-value]


def _interests(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def _print_summary(summary: SimulationSummary) -> None:
    """Actions per agent as a table; engaged posts as two plain lines each (URLs stay whole)."""
    typer.echo(
        f"{summary.rounds} rounds · {summary.mode} feeds · seed {summary.seed} · "
        f"engine {summary.engine}"
    )
    table = Table()
    table.add_column("agent")
    for action in ("like", "comment", "share", "skip"):
        table.add_column(action, justify="right")
    for name, counts in summary.per_agent.items():
        table.add_row(Text(name), *(str(counts[a]) for a in ("like", "comment", "share", "skip")))
    Console(file=sys.stdout).print(table)
    typer.echo("most-engaged posts:" if summary.top_posts else "no post was engaged with")
    for post in summary.top_posts:
        breakdown = ", ".join(f"{n} {a}" for a, n in post.by_action.items())
        typer.echo(f"  {post.actions} ({breakdown}) [{post.post_id}] {post.title}")
        typer.echo(f"      {post.url}")
