"""The ``crowdsift`` command line: thin wiring of settings, sources and the fetcher.

Exit codes: 0 success; 1 a runtime failure (an ``ask`` whose sources could not be reached),
or a fetch that completed with failed queries or threads (the result is still printed); 2 a
usage problem: a bad plan file or flag, a question under 3 characters, a source chosen without
its credentials, an unknown expert.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, ValidationError

from crowdsift import __version__
from crowdsift.cli.archive import app as archive_app
from crowdsift.cli.doctor import register as register_doctor_command
from crowdsift.cli.experts import experts_app
from crowdsift.cli.feed import register as register_feed_commands
from crowdsift.cli.prices import prices_app
from crowdsift.cli.support import check_question
from crowdsift.cli.support import engine_choice as _engine_name
from crowdsift.cli.support import error as _error
from crowdsift.cli.support import exit_codes as _exit_codes
from crowdsift.core.config import Settings, SourceName, get_settings
from crowdsift.core.errors import ConfigError, PlanError
from crowdsift.core.log import configure_logging, register_secrets
from crowdsift.core.models import SCHEMA_MODELS, FetchReport, FetchResult, SearchPlan, SourceStatus
from crowdsift.core.since import format_since
from crowdsift.core.tracing import configure_tracing

app = typer.Typer(
    name="crowdsift",
    help="Answers a question with what real communities said about it, every claim linked.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(archive_app, name="archive")
register_feed_commands(app)
register_doctor_command(app)
app.add_typer(experts_app, name="experts")
app.add_typer(prices_app, name="prices")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"crowdsift {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="-v for INFO, -vv for DEBUG logs.")
    ] = 0,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Configure logging once for every command (structured events on stderr)."""
    try:
        settings = get_settings()
    except ConfigError as exc:  # a bad CROWDSIFT_* value: one line per variable, exit 2
        for line in str(exc).splitlines():
            _error(line)
        raise typer.Exit(2) from None
    configure_logging(_log_level(settings, verbose))
    register_secrets(settings.secret_values())
    configure_tracing(settings)  # OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set


def _log_level(settings: Settings, verbose: int) -> str:
    return {0: settings.log_level, 1: "INFO"}.get(verbose, "DEBUG")


def _verbosity(ctx: typer.Context, verbose: int) -> int:
    """``crowdsift -v ask`` and ``crowdsift ask -v`` mean the same: the two counts add up, and
    a ``-v`` after the command raises the log level as the global one does."""
    root = int(ctx.parent.params.get("verbose") or 0) if ctx.parent is not None else 0
    if verbose:
        configure_logging(_log_level(get_settings(), root + verbose))
    return root + verbose


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


@app.command()
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
        typer.Option("--since", help="Only posts since then: 12h, 30d, 2w or a date (2026-01-01)."),
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


def _source_warnings(statuses: list[SourceStatus]) -> None:
    """One stderr line per source that failed (``source_status``): a fallback is never silent."""
    for status in statuses:
        if status.failed:
            typer.echo(f"warning: {status.line()}", err=True)


def _since(value: str | None) -> datetime | None:
    """``--since`` resolved against the wall clock; a bad value is a usage error (exit 2)."""
    from crowdsift.core.since import parse_since
    from crowdsift.core.text import utc_now

    return None if value is None else parse_since(value, utc_now())


def _source_name(value: str | None) -> SourceName | None:
    if value is None:
        return None
    if value not in ("reddit-api", "arctic-shift", "archive", "auto"):
        raise PlanError(
            f"unknown --source {value!r}: use auto, reddit-api, arctic-shift or archive"
        )
    return value  # type: ignore[return-value]


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


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="Your question, in plain words.")],
    source: Annotated[
        str | None,
        typer.Option("--source", "-s", help="auto | reddit-api | arctic-shift | archive."),
    ] = None,
    archive: Annotated[
        Path | None, typer.Option("--archive", help="Archive file for --source archive.")
    ] = None,
    subreddit: Annotated[
        list[str] | None,
        typer.Option("--subreddit", "-r", help="Search this subreddit (repeatable)."),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", "-e", help="local (no key, extractive) | openai."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ResearchResult JSON.")] = False,
    full: Annotated[
        bool,
        typer.Option("--full", help="Print the whole answer: every sentence, section and source."),
    ] = False,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Persist comments to the comment store.")
    ] = True,
    experts: Annotated[
        str | None,
        typer.Option(
            "--experts",
            "-x",
            help='Also ask the Experts Panel: comma-separated expert ids "a,b" (in parallel).',
        ),
    ] = None,
    no_reddit: Annotated[
        bool, typer.Option("--no-reddit", help="Skip Reddit (phase 8); needs --experts.")
    ] = False,
    recent_only: Annotated[
        bool, typer.Option("--recent-only", help="Experts: only posts of the last 3 months.")
    ] = False,
    sources: Annotated[
        str,
        typer.Option(
            "--sources",
            help="Where to look: reddit, youtube, amazon (comma-separated). "
            "YouTube needs YOUTUBE_API_KEY; Amazon the AMAZON_* credentials.",
        ),
    ] = "reddit",
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only what was posted since then: 12h, 30d, 2w or a date (2026-01-01). "
            "Default: the last month for fast-moving topics, else any time.",
        ),
    ] = None,
    budget_usd: Annotated[
        float | None,
        typer.Option(
            "--budget-usd",
            help="Stop LLM calls once the run has cost this much (USD, from the price table); "
            "the answer is then partial. Default: CROWDSIFT_BUDGET_USD.",
        ),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="Also print per-source counts (seen, accepted, relevant, rejections by reason) "
            "and LLM usage on stderr; raises the log level like crowdsift -v.",
        ),
    ] = 0,
) -> None:
    """Answer a question from Reddit communities (and experts), every claim linked to a source.

    One pipeline: intent-aware searches, screening and dedupe, a relevance gate, rerank, a deep
    drill of the top threads, then one synthesis (answer, takeaways, risks, staff-engineer
    sections). --experts runs the Experts Panel in parallel; --no-reddit leaves Reddit out.
    """
    from crowdsift.pipeline.research import research_async
    from crowdsift.pipeline.wiring import ResearchOptions

    settings = get_settings()
    verbosity = _verbosity(ctx, verbose)
    with _exit_codes():
        from crowdsift.pipeline.gate.run_sources import parse_sources

        engine_name, source_name = _engine_name(engine), _source_name(source)
        question = check_question(question)
        expert_ids = _expert_ids(experts)
        with_reddit, extra = parse_sources(sources)
        search_reddit = with_reddit and not no_reddit
        if not search_reddit and not expert_ids and not extra:
            raise PlanError("--no-reddit leaves nothing to ask: add --experts a,b")
        if budget_usd is not None and budget_usd <= 0:
            raise PlanError(f"--budget-usd must be more than 0 (got {budget_usd:g})")
        bound = _since(since)
        result = asyncio.run(
            research_async(
                question,
                experts=expert_ids,
                search_reddit=search_reddit,
                use_recent_only=recent_only,
                settings=settings,
                options=ResearchOptions(
                    source=source_name,
                    engine=engine_name,
                    archive=archive,
                    persist=store,
                    progress=sys.stderr.isatty(),
                    budget_usd=budget_usd,
                    since=bound,
                ),
                subreddits=subreddit or [],
                sources=extra,
            )
        )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        from crowdsift.cli.render import render_research

        typer.echo(render_research(result, full=full))
    _source_warnings(result.source_status)
    if verbosity:
        from crowdsift.pipeline.telemetry import run_telemetry, telemetry_lines

        for line in telemetry_lines(run_telemetry(result)):
            typer.echo(line, err=True)
    if result.status == "error":
        raise typer.Exit(1)


def _expert_ids(value: str | None) -> list[str]:
    if value is None:
        return []
    from crowdsift.pipeline.experts.commands import parse_expert_ids

    return parse_expert_ids(value)


@app.command("eval")
def evaluate(
    cases: Annotated[
        Path, typer.Option("--cases", help="Labelled evaluation cases (JSON list).")
    ] = Path("data/eval/cases.json"),
    engine: Annotated[str | None, typer.Option("--engine", "-e", help="local | openai.")] = None,
    save: Annotated[
        Path | None,
        typer.Option("--save", help="Write FetchResult + SummarizeResult previews here."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the cases, totals and targets as JSON.")
    ] = False,
) -> None:
    """Re-run the labelled questions: grounding, key advice, nDCG@5, abstention, answer length.

    Exit 1 when a target is missed (key advice >= 90 % of answerable cases, every abstention
    right, every answer <= 50 lines at 100 columns, every grounding check held).
    """
    from crowdsift.cli.render import render_research
    from crowdsift.pipeline.evaluation import run_eval, summary_lines
    from crowdsift.pipeline.wiring import ResearchOptions

    with _exit_codes():
        options = ResearchOptions(engine=_engine_name(engine), persist=False, source="archive")
        summary = run_eval(get_settings(), cases, options, render=render_research, save=save)
    if as_json:
        typer.echo(summary.model_dump_json(indent=2))
    else:
        for line in summary_lines(summary):
            typer.echo(line)
    if not summary.passed:
        raise typer.Exit(1)


@app.command()
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Interface to bind (0.0.0.0 exposes it to the network).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535)] = 8000,
) -> None:
    """Run the HTTP API and the web page (jobs run in-process unless CROWDSIFT_BROKER_URL)."""
    from crowdsift.service.api.server import run_server

    with _exit_codes():
        run_server(get_settings(), host=host, port=port)


@app.command()
def worker(
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-c", min=1, help="Jobs at once (CROWDSIFT_JOB_WORKERS)."),
    ] = None,
) -> None:
    """Run a Celery worker for research jobs (needs CROWDSIFT_BROKER_URL)."""
    from crowdsift.service.jobs.celery_app import run_worker

    with _exit_codes():
        run_worker(get_settings(), concurrency=concurrency)


@app.command("mcp")
def mcp_command(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option("--host", help="With --http: interface to bind.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535)] = 8765,
) -> None:
    """Run the MCP server (tools: research, fetch, feed, list_experts) for AI assistants."""
    from crowdsift.service.mcp_server import run_mcp

    with _exit_codes():
        run_mcp(get_settings(), http=http, host=host, port=port)


@app.command()
def schema(
    model: Annotated[
        str | None, typer.Argument(help=f"One of {', '.join(SCHEMA_NAMES)}; all if omitted.")
    ] = None,
) -> None:
    """Print the JSON schema of crowdsift's models (the contract other tools read)."""
    models = _schema_models()
    if model is None:
        payload = {name: cls.model_json_schema() for name, cls in models.items()}
    elif model in models:
        payload = models[model].model_json_schema()
    else:
        _error(f"unknown model {model!r}; choose from {', '.join(models)}")
        raise typer.Exit(2)
    typer.echo(json.dumps(payload, indent=2))


SCHEMA_NAMES = (
    *SCHEMA_MODELS,
    "ResearchResult",
    "RedditResponse",
    "ExpertResponse",
    "ResearchRequest",
    "Job",
)


def _schema_models() -> dict[str, type[BaseModel]]:
    """Every published model; the research ones are imported only when a schema is asked for."""
    from crowdsift.pipeline.reddit.models import RedditResponse
    from crowdsift.pipeline.result import ResearchResult
    from crowdsift.service.jobs.models import Job, ResearchRequest
    from crowdsift.sources.experts.models import ExpertResponse

    return {
        **SCHEMA_MODELS,
        "ResearchResult": ResearchResult,
        "RedditResponse": RedditResponse,
        "ExpertResponse": ExpertResponse,
        "ResearchRequest": ResearchRequest,
        "Job": Job,
    }


def main() -> None:
    """Console-script entry point."""
    app()
