"""``crowdsift mcp``: crowdsift's tools for AI assistants, over the Model Context Protocol.

Built on the official SDK's ``MCPServer``: each tool is a typed function, so its input schema and
its output schema (the same pydantic models the CLI prints with ``--json``) come from the
signature. The work itself is ``crowdsift.service.facade``, shared with the HTTP API and job
workers, so every front end answers alike. Research, fetch and feed block (HTTP, SQLite, the
embedding model), so they run in worker threads and the server keeps answering other requests
meanwhile.

Bad input and our own errors become tool errors (``isError``) whose text says what to fix; the
server never crashes on them. In stdio mode stdout carries the protocol only: the SDK points
file descriptor 1 at stderr while it serves, and crowdsift's logs already go to stderr.
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import Annotated, Any, Literal, TypeVar

import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from crowdsift import __version__
from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger, redact_text
from crowdsift.core.models import FetchResult, Post, SearchPlan
from crowdsift.core.question import MAX_QUESTION_CHARS, MIN_QUESTION_CHARS
from crowdsift.feed.retriever import MAX_FEED_SIZE, MIN_FEED_SIZE, FeedMode
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service import facade as service
from crowdsift.service.jobs.execute import ResearchFn
from crowdsift.service.jobs.models import MAX_EXPERTS, ResearchRequest
from crowdsift.sources.experts.models import ExpertSummary

log = get_logger(__name__)

FeedFn = Callable[[list[str] | None, FeedMode, int | None], list[Post]]
"""``FeedService.feed``: interests, mode, size → posts (raises ``EmptyIndexError``)."""

_T = TypeVar("_T")
_SdkLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

INSTRUCTIONS = (
    "crowdsift answers a question with what real communities said about it: Reddit threads and "
    "curated expert Telegram channels, filtered for trust and relevance, every claim linked to "
    "its source ([post:ID] markers resolve to the result's sources). Use `research` for a "
    "question a person would ask a forum (product choices, experiences, how-tos, opinions); "
    "call `list_experts` first to pick expert ids. `fetch` runs a search plan you wrote and "
    "returns raw posts and comments; `feed` browses posts already indexed locally. Results may "
    "come from the bundled demo archive (sample data) when no real source answers: "
    "`sample_data` and `source_status` say so."
)

RESEARCH_DESCRIPTION = (
    "Answer a question with what real communities said, every claim cited. Use it when the "
    'user wants first-hand experiences, recommendations or opinions ("is X worth it", "X vs '
    'Y", "how do people handle Z"). It plans Reddit searches, fetches and filters threads, '
    "and summarizes them; with `experts` it also asks those expert channels (ids from "
    "`list_experts`) in parallel. Returns a ResearchResult: `summary` (Reddit answer: "
    "highlights with [post:ID] citations and the cited `sources` with URLs), "
    "`expert_responses`, `reddit_response`, `source_fetches` (what each YouTube / Amazon "
    "search kept, or why it was skipped), `source_status` (which Reddit source answered and "
    "why others failed) and `status` (ok, partial or error). Takes tens of "
    "seconds; progress is reported while it runs. Quote the sources when you answer."
)
FETCH_DESCRIPTION = (
    "Run a search plan you wrote yourself and return the raw evidence: the posts that passed "
    "the quality filters, each with its comments, score and URL (a FetchResult). Use it when "
    "you already know which subreddits and search terms to try and want the threads "
    "themselves rather than a summary; for an answer to a question use `research` instead. "
    "`source_status` says which Reddit source answered."
)
FEED_DESCRIPTION = (
    "Browse posts already indexed locally (`crowdsift index`): in `preference` mode the posts "
    "closest to the given interests, in `random` mode a random sample. Use it to show what a "
    "community talks about or to find posts on a topic without a live search. Errors when "
    "nothing is indexed yet (the error says which command to run)."
)
LIST_EXPERTS_DESCRIPTION = (
    "List the expert channels available to `research` (their ids, names, topics, post counts "
    "and date ranges). Call it before `research` to choose `experts`; on a fresh install it "
    "returns the bundled demo experts."
)

_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_SEARCHES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)


def build_server(
    settings: Settings,
    *,
    research: ResearchFn | None = None,
    feed: FeedFn | None = None,
) -> MCPServer[Any]:
    """The MCP server with the four tools; ``research`` and ``feed`` are injectable for tests.

    The defaults are the long-lived services, so one local engine and one feed index (and
    their models) are loaded once for every call of the server's life.
    """
    if research is None:
        research = service.ResearchService(settings)
    if feed is None:
        feed = service.FeedService(settings).feed
    with _host_logging_kept():
        server: MCPServer[Any] = MCPServer(
            "crowdsift",
            title="crowdsift",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level=_sdk_level(settings.log_level),
        )
    _add_research(server, research)
    _add_fetch(server, settings)
    _add_feed(server, feed, settings.feed_size)
    _add_list_experts(server, settings)
    return server


Question = Annotated[
    str,
    Field(
        description="The question, in plain words and any language "
        f"({MIN_QUESTION_CHARS} to {MAX_QUESTION_CHARS} characters).",
        examples=["Is the Plaud Note worth it compared to a phone recording app?"],
    ),
]
Experts = Annotated[
    list[str],
    Field(
        default_factory=list,
        description=f"Expert ids to ask (from `list_experts`, at most {MAX_EXPERTS}); "
        "empty asks Reddit only.",
    ),
]
SearchReddit = Annotated[bool, Field(description="Search Reddit; false asks only the experts.")]
UseRecentOnly = Annotated[
    bool, Field(description="Experts: only their posts of the last 3 months.")
]
EngineName = Annotated[
    Literal["local", "openai"] | None,
    Field(description="local (extractive, no key) or openai; default from settings."),
]
Subreddits = Annotated[
    list[str],
    Field(
        default_factory=list,
        description="Subreddits to search instead of the planner's choice (optional).",
    ),
]
OtherSources = Annotated[
    list[Literal["youtube", "amazon"]],
    Field(
        default_factory=list,
        description="Also search YouTube videos / Amazon products; each is skipped with "
        "a notice when its credentials are not configured.",
    ),
]
"""The research tool's arguments, as its schema describes them to a client (and ``Since``,
below its description)."""


def _add_research(server: MCPServer[Any], run_research: ResearchFn) -> None:
    async def research(
        question: Question,
        ctx: Context[Any, Any],
        *,
        experts: Experts,
        search_reddit: SearchReddit = True,
        use_recent_only: UseRecentOnly = False,
        engine: EngineName = None,
        subreddits: Subreddits,
        sources: OtherSources,
        since: Since = None,
    ) -> ResearchResult:
        request = _validated_request(
            question=question,
            experts=experts,
            search_reddit=search_reddit,
            use_recent_only=use_recent_only,
            engine=engine,
            subreddits=subreddits,
            sources=sources,
            since=since,
        )
        return await _off_loop(partial(run_research, request, _progress_reporter(ctx)))

    server.add_tool(
        research,
        name="research",
        title="Research a question",
        description=RESEARCH_DESCRIPTION,
        annotations=_SEARCHES,
        structured_output=True,
    )


def _add_fetch(server: MCPServer[Any], settings: Settings) -> None:
    async def fetch(
        plan: Annotated[
            SearchPlan,
            Field(description="Search terms and subreddits to search (a SearchPlan)."),
        ],
        since: Annotated[str | None, Field(description=SINCE_DESCRIPTION)] = None,
    ) -> FetchResult:
        if since is not None:
            plan = _with_since(plan, since)
        result, report = await _off_loop(partial(service.fetch, settings, plan))
        if report.errors and not result.posts:
            raise ToolError(f"the fetch found nothing and failed: {'; '.join(report.errors)}")
        if report.errors:
            log.warning("mcp_fetch_partial", errors=report.errors)
        return result

    server.add_tool(
        fetch,
        name="fetch",
        title="Fetch threads for a search plan",
        description=FETCH_DESCRIPTION,
        annotations=_SEARCHES,
        structured_output=True,
    )


def _add_feed(server: MCPServer[Any], get_feed: FeedFn, default_size: int) -> None:
    async def feed(
        *,
        interests: Annotated[
            list[str],
            Field(
                default_factory=list,
                description='Topics to match, e.g. ["home espresso", "budget grinders"]; '
                "needed in preference mode, ignored in random mode.",
            ),
        ],
        mode: Annotated[
            FeedMode, Field(description="preference (closest to interests) or random.")
        ] = "preference",
        size: Annotated[
            int,
            Field(ge=MIN_FEED_SIZE, le=MAX_FEED_SIZE, description="How many posts to return."),
        ] = default_size,
    ) -> list[Post]:
        wanted = [interest.strip() for interest in interests if interest.strip()]
        if mode == "preference" and not wanted:
            raise ToolError(
                'preference mode needs at least one interest, e.g. ["home espresso"]; '
                'pass `interests` or use mode "random"'
            )
        return await _off_loop(partial(get_feed, wanted or None, mode, size))

    server.add_tool(
        feed,
        name="feed",
        title="Browse indexed posts",
        description=FEED_DESCRIPTION,
        annotations=_READS,
        structured_output=True,
    )


def _add_list_experts(server: MCPServer[Any], settings: Settings) -> None:
    async def list_experts() -> list[ExpertSummary]:
        return await _off_loop(partial(service.list_experts, settings))

    server.add_tool(
        list_experts,
        name="list_experts",
        title="List expert channels",
        description=LIST_EXPERTS_DESCRIPTION,
        annotations=_READS,
        structured_output=True,
    )


SINCE_DESCRIPTION = (
    "Only posts since then: 12h, 30d, 2w, 6m, 1y, a date like 2026-01-01, or all (any time). "
    "Default: the last month for fast-moving topics, else any time."
)
Since = Annotated[str | None, Field(description=SINCE_DESCRIPTION)]


def _with_since(plan: SearchPlan, since: str) -> SearchPlan:
    """The plan bounded by ``since`` (the tool argument wins over the plan's own)."""
    try:
        return SearchPlan.model_validate({**plan.model_dump(), "since": since})
    except ValidationError as exc:
        raise ToolError(f"invalid since: {_problems(exc)}") from None


def _validated_request(**fields: Any) -> ResearchRequest:
    """The tool's arguments through the same model (and limits) as the HTTP API's."""
    try:
        return ResearchRequest.model_validate(fields)
    except ValidationError as exc:
        raise ToolError(f"invalid research request: {_problems(exc)}") from None


def _problems(exc: ValidationError) -> str:
    """``field: what is wrong`` per problem, without pydantic's URLs and echoed input."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        what = error["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {what}" if where else what)
    return "; ".join(problems)


async def _off_loop(work: Callable[[], _T]) -> _T:
    """Run blocking work in a worker thread; our errors become tool errors the model can read."""
    try:
        return await anyio.to_thread.run_sync(work)
    except CrowdsiftError as exc:
        raise ToolError(redact_text(str(exc))) from exc


def _progress_reporter(ctx: Context[Any, Any]) -> Progress:
    """Research progress as MCP progress notifications (a no-op if the caller asked for none).

    The research runs in a worker thread (and may report from threads of its own), so each
    event is handed to the server's event loop through its token. Progress is best effort: a
    client that went away must not fail the research.
    """
    token = anyio.lowlevel.current_token()
    counter = itertools.count(1)
    lock = threading.Lock()

    def report(stage: str, message: str) -> None:
        with lock:
            step = float(next(counter))
        text = redact_text(f"{stage}: {message}")
        try:
            anyio.from_thread.run(ctx.report_progress, step, None, text, token=token)
        except Exception as exc:  # progress must never fail the research
            log.debug("mcp_progress_lost", stage=stage, error=str(exc))

    return report


def _sdk_level(level: str) -> _SdkLevel:
    """crowdsift's log level in the SDK's (and uvicorn's) terms."""
    upper = level.upper()
    if upper in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        return upper  # type: ignore[return-value]
    return "WARNING"


@contextmanager
def _host_logging_kept() -> Iterator[None]:
    """``MCPServer()`` calls ``logging.basicConfig``; whoever builds the server keeps theirs.

    A host process (the test runner, an app mounting the server) must not find a new handler
    on its root logger; ``run_mcp`` sets up stderr logging for the ``crowdsift mcp`` process.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def run_mcp(
    settings: Settings, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765
) -> None:
    """Serve the tools over stdio (default) or streamable HTTP at ``http://host:port/mcp``.

    Everything but the protocol goes to stderr: the library's and the SDK's logs, and (HTTP)
    the one line saying where the server listens.
    """
    logging.basicConfig(
        level=_sdk_level(settings.log_level),
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    server = build_server(settings)
    with suppress(KeyboardInterrupt):  # Ctrl-C is how a user stops it: no traceback
        if http:
            print(f"crowdsift mcp: streamable HTTP on http://{host}:{port}/mcp", file=sys.stderr)
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
