"""``since`` on the MCP tools: ``research`` hands the resolved bound to the run, ``fetch`` keeps
older posts out; a bad value is a tool error listing the accepted forms."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from mcp import Client
from mcp_types import CallToolResult, TextContent

from crowdsift.core.config import get_settings
from crowdsift.core.since import ACCEPTED_FORMS
from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.mcp_server import build_server


def call(server: Any, name: str, arguments: dict[str, Any]) -> CallToolResult:
    async def go() -> CallToolResult:
        async with Client(server) as client:
            result: CallToolResult = await client.call_tool(name, arguments)
            return result

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


class Recorder:
    def __init__(self) -> None:
        self.requests: list[ResearchRequest] = []

    def __call__(self, request: ResearchRequest, _progress: Progress) -> ResearchResult:
        self.requests.append(request)
        return ResearchResult(
            question=request.question, status="ok", engine="local", timings_ms={}, usage=Usage()
        )


def _error(result: CallToolResult) -> str:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_research_since_reaches_the_request() -> None:
    recorder = Recorder()
    server = build_server(get_settings(), research=recorder)
    result = call(server, "research", {"question": "Which desk lamp?", "since": "2026-10-26"})
    assert not result.is_error
    assert [r.since for r in recorder.requests] == [datetime(2026, 10, 26, tzinfo=UTC)]


def test_research_bad_since_is_a_tool_error() -> None:
    recorder = Recorder()
    server = build_server(get_settings(), research=recorder)
    text = _error(call(server, "research", {"question": "Which desk lamp?", "since": "soon"}))
    assert "since:" in text and ACCEPTED_FORMS in text
    assert recorder.requests == []


def test_fetch_since_bounds_the_sample_archive() -> None:
    plan = {"search_terms": ["plaud"], "subreddits": ["gadgets"]}
    server = build_server(get_settings())
    result = call(server, "fetch", {"plan": plan, "since": "2025-06-01"})
    assert not result.is_error
    data = result.structured_content
    assert data is not None and data["since"] == "2025-06-01T00:00:00Z"
    bound = datetime(2025, 6, 1, tzinfo=UTC)
    assert data["posts"]
    assert all(datetime.fromisoformat(p["created_at"]) >= bound for p in data["posts"])
    assert ACCEPTED_FORMS in _error(call(server, "fetch", {"plan": plan, "since": "x"}))
