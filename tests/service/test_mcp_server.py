"""``crowdsift mcp`` driven by the official SDK's own client.

The real command runs as a subprocess over stdio (research on the bundled demo archive with the
local engine) and over streamable HTTP; the fast cases (validation, errors, progress, the feed)
use the SDK's in-process connection to the server ``build_server`` returns.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult, TextContent

from crowdsift.core.citations import citations_in
from crowdsift.core.config import get_settings
from crowdsift.core.errors import EngineConfigError
from crowdsift.core.log import register_secrets
from crowdsift.core.models import FetchResult, Post, SearchPlan
from crowdsift.engines.base import Usage
from crowdsift.feed.commands import run_index
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.mcp_server import build_server
from crowdsift.sources.experts.models import ExpertSummary
from tests.support.net import free_port

TOOLS = {"research", "fetch", "feed", "list_experts"}
DEMO_EXPERTS = {"desk_gear_weekly", "homelab_field_notes", "dannye_bez_boli"}
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def server_env(home: Path) -> dict[str, str]:
    """What a user's MCP host would set: a data dir, the keyless engine, no model download."""
    return {
        "CROWDSIFT_HOME": str(home), "CROWDSIFT_ENGINE": "local", "HF_HUB_OFFLINE": "1",
        "CROWDSIFT_SOURCE": "archive",  # the bundled sample, never the live Arctic Shift
    }  # fmt: skip


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


class Recorder:
    """An injected research dependency: records what it was asked, reports progress."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.requests: list[ResearchRequest] = []
        self.fail = fail

    def __call__(self, request: ResearchRequest, progress: Progress) -> ResearchResult:
        self.requests.append(request)
        progress("plan", "planning searches")
        progress("fetch", "searching r/gadgets")
        if self.fail is not None:
            raise self.fail
        return ResearchResult(
            question=request.question,
            status="ok",
            engine=request.engine or "local",
            timings_ms={"total": 1.0},
            usage=Usage(),
        )


# --- the real command over stdio ---------------------------------------------------------


def _assert_tool_schemas(tools: dict[str, Any]) -> None:
    """The tools a client sees, with the inputs and outputs they document."""
    assert set(tools) == TOOLS
    research_schema = tools["research"].input_schema
    assert research_schema["required"] == ["question"]
    assert {"question", "experts", "search_reddit", "use_recent_only", "engine", "sources"} <= set(
        research_schema["properties"]
    )
    assert "plan" in tools["fetch"].input_schema["required"]
    assert tools["feed"].input_schema["properties"]["mode"]["enum"] == ["preference", "random"]
    assert tools["list_experts"].input_schema["properties"] == {}
    assert set(tools["research"].output_schema["properties"]) >= {"summary", "status"}


def test_stdio_server_lists_tools_and_answers_with_cited_sources(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crowdsift", "mcp"],
        env=server_env(tmp_path / "home"),
        cwd=str(tmp_path),
    )
    stray: list[Exception] = []
    progress_messages: list[str] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):  # e.g. a non-JSON line on the server's stdout
            stray.append(message)

    async def on_progress(_progress: float, _total: float | None, message: str | None) -> None:
        progress_messages.append(message or "")

    async def session(errlog: TextIO) -> dict[str, Any]:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, message_handler=on_message) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            experts = await client.call_tool("list_experts", {})
            research = await client.call_tool(
                "research", {"question": QUESTION}, progress_callback=on_progress
            )
            plan = SearchPlan(search_terms=["plaud"], subreddits=["gadgets"])
            fetched = await client.call_tool("fetch", {"plan": plan.model_dump(mode="json")})
        return {"tools": tools, "experts": experts, "research": research, "fetch": fetched}

    with (tmp_path / "stderr.log").open("w+", encoding="utf-8") as errlog:
        out = asyncio.run(asyncio.wait_for(session(errlog), timeout=120))
        errlog.seek(0)
        stderr = errlog.read()

    assert not stray, f"stdout carried something other than the protocol: {stray}\n{stderr}"
    _assert_tool_schemas(out["tools"])

    experts = [ExpertSummary.model_validate(e) for e in out["experts"].structured_content["result"]]
    assert {e.expert_id for e in experts} >= DEMO_EXPERTS

    assert not out["research"].is_error, (out["research"].content, stderr)
    result = ResearchResult.model_validate(out["research"].structured_content)
    assert result.question == QUESTION and result.status == "ok" and result.engine == "local"
    assert result.summary is not None and result.summary.sources
    summary = result.summary
    texts = [t.marked() for t in [summary.summary, *summary.highlights, *summary.cautions]]
    cited = [c for text in texts for c in citations_in(text)]
    assert cited  # the answer cites its evidence
    sources = {source.post_id for source in result.summary.sources}
    assert {c.id for c in cited if c.kind == "post"} <= sources
    synthesis = result.reddit_response.synthesis if result.reddit_response else None
    assert synthesis is not None
    comments = {s.id for s in synthesis.sources if s.kind == "comment"}
    assert {c.id for c in cited if c.kind == "comment"} <= comments
    assert all(str(s.url).startswith("https://www.reddit.com/r/") for s in result.summary.sources)
    # The sample-data notice travels as progress, not as a stray line on stdout.
    assert any("bundled demo archive" in message for message in progress_messages), (
        progress_messages
    )
    stages = [message.split(":")[0] for message in progress_messages]
    assert stages[0] == "source" and len(set(stages)) >= 3, progress_messages
    # which source answered travels with the answer (the server names the archive)
    assert [(s.source, s.status) for s in result.source_status] == [("archive", "ok")]

    assert not out["fetch"].is_error, out["fetch"].content
    fetched = FetchResult.model_validate(out["fetch"].structured_content)
    assert fetched.search_terms == ["plaud"] and fetched.posts
    assert {post.subreddit for post in fetched.posts} == {"gadgets"}
    assert any("plaud" in post.title.lower() for post in fetched.posts)
    assert [(s.source, s.status) for s in fetched.source_status] == [("archive", "ok")]


# --- the real command over streamable HTTP -------------------------------------------------


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``crowdsift mcp --http`` on a free port; terminated (and reaped) afterwards."""
    port = free_port()
    log_path = tmp_path / "http-stderr.log"
    env = {**os.environ, **server_env(tmp_path / "home")}
    with log_path.open("w", encoding="utf-8") as errlog:
        process = subprocess.Popen(
            [sys.executable, "-m", "crowdsift", "mcp", "--http", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
    try:
        wait_until_listening(process, port, log_path)
        yield f"http://127.0.0.1:{port}/mcp", log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"crowdsift mcp --http exited early:\n{log_path.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"crowdsift mcp --http did not listen on {port}:\n{log_path.read_text()}")


def test_streamable_http_server_answers_tool_calls(http_server: tuple[str, Path]) -> None:
    url, log_path = http_server

    async def session() -> tuple[set[str], CallToolResult, CallToolResult]:
        async with Client(url) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            experts = await client.call_tool("list_experts", {})
            invalid = await client.call_tool("research", {"question": "hi"})
        return tools, experts, invalid

    tools, experts, invalid = asyncio.run(asyncio.wait_for(session(), timeout=60))
    assert tools == TOOLS
    assert not experts.is_error, experts.content
    ids = {item["expert_id"] for item in experts.structured_content["result"]}
    assert ids >= DEMO_EXPERTS
    assert "at least 3 characters" in error_text(invalid)
    assert f"streamable HTTP on {url}" in log_path.read_text()


# --- in-process: validation, errors, progress ---------------------------------------------


def call(server: Any, name: str, arguments: dict[str, Any], **options: Any) -> CallToolResult:
    async def go() -> CallToolResult:
        async with Client(server) as client:
            result: CallToolResult = await client.call_tool(name, arguments, **options)
            return result

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"question": "a"}, "question: String should have at least 3 characters"),
        ({"question": "x" * 2001}, "question: String should have at most 2000 characters"),
        (
            {"question": "Which desk lamp?", "search_reddit": False},
            "nothing to search: name at least one expert, set search_reddit, or add sources",
        ),
        (
            {"question": "Which desk lamp?", "experts": ["no spaces!"]},
            "experts: not an id: 'no spaces!'",
        ),
        ({"question": "Which desk lamp?", "experts": [str(n) for n in range(11)]}, "experts:"),
        ({"question": "Which desk lamp?", "engine": "gpt-9"}, "'local' or 'openai'"),
        ({"question": "Which desk lamp?", "sources": ["tiktok"]}, "'youtube' or 'amazon'"),
        ({}, "question"),
    ],
)
def test_invalid_research_input_is_a_tool_error_saying_what_to_fix(
    arguments: dict[str, Any], message: str
) -> None:
    recorder = Recorder()
    result = call(build_server(get_settings(), research=recorder), "research", arguments)
    assert message in error_text(result)
    assert recorder.requests == []


def test_research_passes_a_validated_request_and_reports_progress() -> None:
    recorder = Recorder()
    messages: list[str] = []

    async def on_progress(progress: float, _total: float | None, message: str | None) -> None:
        messages.append(f"{progress:g} {message}")

    arguments = {
        "question": "  Which standing desk lasts?  ",
        "experts": ["desk_gear_weekly", "desk_gear_weekly"],
        "subreddits": ["r/StandingDesks"],
        "engine": "local",
        "sources": ["amazon", "youtube"],
    }
    result = call(
        build_server(get_settings(), research=recorder),
        "research",
        arguments,
        progress_callback=on_progress,
    )
    assert not result.is_error, result.content
    assert recorder.requests == [
        ResearchRequest(
            question="Which standing desk lasts?",
            experts=["desk_gear_weekly"],
            subreddits=["StandingDesks"],
            engine="local",
            sources=["amazon", "youtube"],
        )
    ]
    answer = ResearchResult.model_validate(result.structured_content)
    assert answer.question == "Which standing desk lasts?"
    assert messages == ["1 plan: planning searches", "2 fetch: searching r/gadgets"]


def test_research_with_youtube_and_no_key_reports_youtube_skipped() -> None:
    """The real research service: no YOUTUBE_API_KEY (the env is isolated), so the asked
    source is skipped with its notice and the run still finishes."""

    async def go() -> tuple[dict[str, Any], CallToolResult]:
        async with Client(build_server(get_settings())) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            arguments = {"question": QUESTION, "sources": ["youtube"], "search_reddit": False}
            result = await client.call_tool("research", arguments)
        return tools["research"].input_schema["properties"], result

    properties, result = asyncio.run(asyncio.wait_for(go(), timeout=60))
    sources = properties["sources"]
    assert sources["type"] == "array" and sources["items"]["enum"] == ["youtube", "amazon"]
    assert "skipped with a notice" in sources["description"]

    assert not result.is_error, result.content
    answer = ResearchResult.model_validate(result.structured_content)
    assert [fetched.kind for fetched in answer.source_fetches] == ["youtube"]
    youtube = answer.source_fetches[0]
    assert youtube.skipped is not None and "YOUTUBE_API_KEY" in youtube.skipped
    assert youtube.items == [] and youtube.errors == []
    assert answer.summary is None and answer.reddit_response is None


def test_a_crowdsift_error_is_a_tool_error_with_its_message_and_no_secret() -> None:
    register_secrets(["sk-test-secret-value-123"])
    failure = EngineConfigError(
        "the openai engine refused key sk-test-secret-value-123; set CROWDSIFT_LLM_API_KEY "
        "or use engine local"
    )
    server = build_server(get_settings(), research=Recorder(fail=failure))
    text = error_text(call(server, "research", {"question": "Which desk lamp?"}))
    assert "set CROWDSIFT_LLM_API_KEY or use engine local" in text
    assert "sk-test-secret-value-123" not in text


def test_unknown_expert_is_a_tool_error_naming_the_known_ones() -> None:
    server = build_server(get_settings())
    arguments = {"question": "Which desk lamp?", "experts": ["nobody"], "search_reddit": False}
    text = error_text(call(server, "research", arguments))
    assert "unknown expert(s) nobody" in text
    assert "desk_gear_weekly" in text


def test_invalid_plan_is_a_tool_error() -> None:
    plan = {"search_terms": [], "subreddits": ["gadgets"]}
    text = error_text(call(build_server(get_settings()), "fetch", {"plan": plan}))
    assert "search_terms" in text and "at least 1 item" in text


def test_building_the_server_leaves_the_host_logging_alone() -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    build_server(get_settings())
    assert (list(root.handlers), root.level) == before


# --- in-process: the feed --------------------------------------------------------------------


@pytest.fixture
def hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index and query with the fast hashing embedder (no model load)."""
    monkeypatch.setenv("CROWDSIFT_FEED_EMBEDDER", "hashing")
    get_settings.cache_clear()


def test_feed_on_an_empty_index_says_to_run_crowdsift_index(hashing: None) -> None:
    result = call(build_server(get_settings()), "feed", {"interests": ["espresso"]})
    assert "run `crowdsift index`" in error_text(result)


def test_feed_returns_indexed_posts_closest_to_the_interests(hashing: None) -> None:
    settings = get_settings()
    report = run_index(settings)
    assert report.indexed > 10
    server = build_server(settings)

    preferred = call(server, "feed", {"interests": ["plaud note recorder"], "size": 3})
    assert not preferred.is_error, preferred.content
    posts = [Post.model_validate(p) for p in preferred.structured_content["result"]]
    assert len(posts) == 3
    assert "plaud" in posts[0].title.lower()

    sampled = call(server, "feed", {"mode": "random", "size": 4})
    assert len(sampled.structured_content["result"]) == 4

    no_interests = call(server, "feed", {"mode": "preference"})
    assert 'use mode "random"' in error_text(no_interests)
    too_many = call(server, "feed", {"mode": "random", "size": 21})
    assert "less than or equal to 20" in error_text(too_many)
