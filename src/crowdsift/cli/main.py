"""The ``crowdsift`` command line: thin wiring of settings, sources and the fetcher.

Exit codes: 0 success; 1 a runtime failure (an ``ask`` whose sources could not be reached),
or a fetch that completed with failed queries or threads (the result is still printed); 2 a
usage problem: a bad plan file or flag, a question under 3 or over 2,000 characters, a source
chosen without its credentials, an unknown expert.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import BaseModel

from crowdsift import __version__
from crowdsift.cli.archive import app as archive_app
from crowdsift.cli.doctor import register as register_doctor_command
from crowdsift.cli.experts import experts_app
from crowdsift.cli.feed import register as register_feed_commands
from crowdsift.cli.fetch import register as register_fetch_command
from crowdsift.cli.output import check_output, choose_format, emit
from crowdsift.cli.prices import prices_app
from crowdsift.cli.subreddits import subreddits_app
from crowdsift.cli.support import check_question, reflow_help
from crowdsift.cli.support import engine_choice as _engine_name
from crowdsift.cli.support import error as _error
from crowdsift.cli.support import exit_codes as _exit_codes
from crowdsift.cli.support import since_option as _since
from crowdsift.cli.support import source_name as _source_name
from crowdsift.cli.support import source_warnings as _source_warnings
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import ConfigError, PlanError
from crowdsift.core.extras import require_extra
from crowdsift.core.log import configure_logging, configure_terminal_logging, register_secrets
from crowdsift.core.models import SCHEMA_MODELS
from crowdsift.core.tracing import configure_tracing

if TYPE_CHECKING:  # imported where used: a command loads only what it runs
    from crowdsift.pipeline.result import ResearchResult
    from crowdsift.pipeline.wiring import ResearchOptions

app = typer.Typer(
    name="crowdsift",
    help="Answers a question with what real communities said about it, every claim linked.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(archive_app, name="archive")
app.add_typer(experts_app, name="experts")
app.add_typer(prices_app, name="prices")
app.add_typer(subreddits_app, name="subreddits")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"crowdsift {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="-v for INFO, -vv for DEBUG logs.")
    ] = 0,
    _show_version: Annotated[  # read by its eager callback, which prints and exits
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Configure logging once for every command (plain warnings; structured lines on -v)."""
    try:
        settings = get_settings()
    except ConfigError as exc:  # a bad CROWDSIFT_* value: one line per variable, exit 2
        for line in str(exc).splitlines():
            _error(line)
        raise typer.Exit(2) from None
    _configure_logs(settings, verbose)
    register_secrets(settings.secret_values())
    configure_tracing(settings)  # OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set


def _log_level(settings: Settings, verbose: int) -> str:
    return {0: settings.log_level, 1: "INFO"}.get(verbose, "DEBUG")


def _configure_logs(settings: Settings, verbose: int) -> None:
    """Structured log lines reach the terminal only when asked for (``-v``,
    ``CROWDSIFT_LOG_LEVEL``); with ``CROWDSIFT_LOG_FILE`` they go to that file instead. A
    normal run shows each warning once as a plain ``warning: …`` line."""
    asked = verbose > 0 or "log_level" in settings.model_fields_set
    if settings.log_file is not None:
        level = _log_level(settings, verbose) if asked else "INFO"
        configure_terminal_logging(log_file=settings.log_file, file_level=level)
    elif asked:
        configure_logging(_log_level(settings, verbose))
    else:
        configure_terminal_logging()


def _verbosity(ctx: typer.Context, verbose: int) -> int:
    """``crowdsift -v ask`` and ``crowdsift ask -v`` mean the same: the two counts add up, and
    a ``-v`` after the command raises the log level as the global one does."""
    root = int(ctx.parent.params.get("verbose") or 0) if ctx.parent is not None else 0
    if verbose:
        _configure_logs(get_settings(), root + verbose)
    return root + verbose


QuestionArgument = Annotated[str, typer.Argument(help="Your question, in plain words.")]
SourceOption = Annotated[
    str | None, typer.Option("--source", "-s", help="auto | reddit-api | arctic-shift | archive.")
]
ArchiveOption = Annotated[
    Path | None, typer.Option("--archive", help="Archive file for --source archive.")
]
SubredditOption = Annotated[
    list[str] | None,
    typer.Option("--subreddit", "-r", help="Search this subreddit (repeatable)."),
]
EngineOption = Annotated[
    str | None, typer.Option("--engine", "-e", help="local (no key, extractive) | openai.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the ResearchResult JSON.")]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="text | json | md | html (--json is --format json). md and html are the whole "
        "answer as a report; default text, or what the -o file's suffix says.",
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the answer to this file instead of printing it."),
]
FullOption = Annotated[
    bool,
    typer.Option("--full", help="Print the whole answer: every sentence, section and source."),
]
StoreOption = Annotated[
    bool, typer.Option("--store/--no-store", help="Persist comments to the comment store.")
]
ExpertsOption = Annotated[
    str | None,
    typer.Option(
        "--experts",
        "-x",
        help='Also ask the Experts Panel: comma-separated expert ids "a,b" (in parallel).',
    ),
]
NoRedditOption = Annotated[
    bool,
    typer.Option("--no-reddit", help="Leave Reddit out: ask only --experts (or other --sources)."),
]
RecentOnlyOption = Annotated[
    bool, typer.Option("--recent-only", help="Experts: only posts of the last 3 months.")
]
SourcesOption = Annotated[
    str,
    typer.Option(
        "--sources",
        help="Where to look: reddit, youtube, amazon (comma-separated). "
        "YouTube needs YOUTUBE_API_KEY; Amazon the AMAZON_* credentials.",
    ),
]
SinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Only what was posted since then: 12h, 30d, 2w, 6m, 1y or a date (2026-01-01); "
        "all for any time. Default: the last month for fast-moving topics, else any time.",
    ),
]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget-usd",
        help="Stop LLM calls once the run has cost this much (USD, from the price table); "
        "the answer is then partial. Default: CROWDSIFT_BUDGET_USD.",
    ),
]
AskVerboseOption = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        help="Also print per-source counts (seen, accepted, relevant, rejections by reason) "
        "and LLM usage on stderr; raises the log level like crowdsift -v.",
    ),
]


@app.command()
def ask(
    ctx: typer.Context,
    question: QuestionArgument,
    source: SourceOption = None,
    archive: ArchiveOption = None,
    subreddit: SubredditOption = None,
    engine: EngineOption = None,
    as_json: JsonOption = False,
    output_format: FormatOption = None,
    output: OutputOption = None,
    full: FullOption = False,
    store: StoreOption = True,
    experts: ExpertsOption = None,
    no_reddit: NoRedditOption = False,
    recent_only: RecentOnlyOption = False,
    sources: SourcesOption = "reddit",
    since: SinceOption = None,
    budget_usd: BudgetOption = None,
    verbose: AskVerboseOption = 0,
) -> None:
    """Answer a question from Reddit communities (and experts), every claim linked to a source.

    Searches the communities that talk about the question, keeps the threads that are about
    it, reads the best of them with their replies, then writes one answer: what people say,
    highlights, cautions, and the replies worth a look. --experts also asks the Experts Panel
    at the same time; --no-reddit leaves Reddit out.
    """
    from crowdsift.pipeline.wiring import ResearchOptions

    settings = get_settings()
    verbosity = _verbosity(ctx, verbose)
    with _exit_codes():
        engine_name, source_name = _engine_name(engine), _source_name(source)
        question = check_question(question)
        fmt = choose_format(output_format, as_json=as_json, output=output)
        check_output(output)
        options = ResearchOptions(
            source=source_name,
            engine=engine_name,
            archive=archive,
            persist=store,
            progress=sys.stderr.isatty(),
            budget_usd=budget_usd,
        )
        result = _research(
            question, settings, options, experts=experts, no_reddit=no_reddit,
            recent_only=recent_only, sources=sources, since=since, subreddits=subreddit or [],
        )  # fmt: skip
    with _exit_codes():
        emit(result, fmt, output, full=full)
    _after_answer(result, verbosity)


def _research(
    question: str,
    settings: Settings,
    options: ResearchOptions,
    *,
    experts: str | None,
    no_reddit: bool,
    recent_only: bool,
    sources: str,
    since: str | None,
    subreddits: list[str],
) -> ResearchResult:
    """What ``ask`` was asked to search, checked (a usage error before any search), then run."""
    from crowdsift.pipeline.gate.run_sources import parse_sources
    from crowdsift.pipeline.research import research_async

    expert_ids = _expert_ids(experts)
    with_reddit, extra = parse_sources(sources)
    search_reddit = with_reddit and not no_reddit
    if not search_reddit and not expert_ids and not extra:
        raise PlanError("--no-reddit leaves nothing to ask: add --experts a,b")
    if options.budget_usd is not None and options.budget_usd <= 0:
        raise PlanError(f"--budget-usd must be more than 0 (got {options.budget_usd:g})")
    options = replace(options, since=_since(since))
    return asyncio.run(
        research_async(
            question,
            experts=expert_ids,
            search_reddit=search_reddit,
            use_recent_only=recent_only,
            settings=settings,
            options=options,
            subreddits=subreddits,
            sources=extra,
        )
    )


def _after_answer(result: ResearchResult, verbosity: int) -> None:
    """Warnings about sources that failed, the run's counts with ``-v``, exit 1 on an error."""
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
        Path, typer.Option("--cases", help="Evaluation cases: {answerable, off_topic} JSON.")
    ] = Path("data/eval/cases.json"),
    source: Annotated[
        str,
        typer.Option("--source", "-s", help="auto | reddit-api | arctic-shift | archive."),
    ] = "archive",
    engine: Annotated[str | None, typer.Option("--engine", "-e", help="local | openai.")] = None,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline",
            help="Also answer each case with plain BM25 over the archive, measured alike.",
        ),
    ] = False,
    save: Annotated[
        Path | None,
        typer.Option("--save", help="Write FetchResult + SummarizeResult previews here."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the cases, totals and targets as JSON.")
    ] = False,
) -> None:
    """Re-run labelled questions; measure what the reader is shown: key advice in the answer
    and its lead, the answering thread's rank (hit@5, MRR), abstention, lines and seconds.

    Exit 1 when a target is missed (key advice shown in >= 90 % of answerable cases, every
    abstention right, every answer <= 50 lines at 100 columns, every grounding check held);
    2 for a bad case file. Progress goes to stderr, one line per case.
    """
    import time

    from crowdsift.cli.render import render_research
    from crowdsift.pipeline.evaluation import run_eval, summary_lines
    from crowdsift.pipeline.wiring import ResearchOptions

    with _exit_codes():
        options = ResearchOptions(
            engine=_engine_name(engine), persist=False, source=_source_name(source)
        )
        summary = run_eval(
            get_settings(),
            cases,
            options,
            render=render_research,
            save=save,
            baseline=baseline,
            clock=time.perf_counter,
            progress=lambda line: typer.echo(line, err=True),
        )
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
    with _exit_codes():
        require_extra("serve", "fastapi", "uvicorn", "fastapi_offline", "prometheus_client")
        from crowdsift.service.api.server import run_server

        run_server(get_settings(), host=host, port=port)


@app.command()
def worker(
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-c", min=1, help="Jobs at once (CROWDSIFT_JOB_WORKERS)."),
    ] = None,
) -> None:
    """Run a Celery worker for research jobs (needs CROWDSIFT_BROKER_URL)."""
    with _exit_codes():
        require_extra("scale", "celery", "redis")
        from crowdsift.service.jobs.celery_app import run_worker

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
    with _exit_codes():
        require_extra("mcp", "mcp")
        from crowdsift.service.mcp_server import run_mcp

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


register_fetch_command(app)
register_feed_commands(app)
register_doctor_command(app)
reflow_help(app)  # after every command is registered


def main() -> None:
    """Console-script entry point."""
    app()
