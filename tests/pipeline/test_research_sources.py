"""YouTube and Amazon evidence in a research run: fetched beside Reddit, summarised with it,
cited as [post:yt-…] / [post:amzn-…], checked like Reddit citations, reported per source."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings
from crowdsift.core.errors import PlanError
from crowdsift.engines.base import Engine, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.run_sources import SourceTool, parse_sources
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, AskRun
from crowdsift.pipeline.synthesis.config import SelectorConfig
from crowdsift.pipeline.synthesis.models import AnswerDraft, SourceRef
from crowdsift.pipeline.synthesis.task import AnswerTask
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.models import EvidenceComment, EvidenceItem, SourceFetch
from tests.support.answers import select_evidence

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def video(video_id: str, title: str = "Plaud Note review after six months") -> EvidenceItem:
    return EvidenceItem(
        kind="youtube",
        id=video_id,
        title=title,
        text="I recorded every meeting for six months; the transcripts beat my phone's app.",
        url=f"https://www.youtube.com/watch?v={video_id}",
        where="Gadget Reviews",
        metrics={"views": 12000, "likes": 480, "comments": 35},
        comments=[EvidenceComment(id="c1", text="Battery lasts a full week for me.", likes=40)],
    )


def product(asin: str) -> EvidenceItem:
    return EvidenceItem(
        kind="amazon",
        id=asin,
        title="PLAUD NOTE AI Voice Recorder",
        text="Records calls and meetings; 30 hours of recording; 64 GB storage",
        url=f"https://www.amazon.com/dp/{asin}",
        where="www.amazon.com",
        metrics={"rating": 4.3, "reviews": 2150},
    )


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def tools(fetches: dict[str, SourceFetch], calls: list[str]) -> dict[str, SourceTool]:
    def make(kind: str) -> SourceTool:
        async def tool(query: str, _engine: Engine) -> SourceFetch:
            calls.append(f"{kind}:{query}")
            return fetches[kind]

        return tool

    return {kind: make(kind) for kind in fetches}


def research(
    archive: Path, fetches: dict[str, SourceFetch], engine: Any = None, **options: Any
) -> tuple[AskRun, list[str]]:
    calls: list[str] = []
    source = ArchiveSource(archive) if options.get("search_reddit", True) else None
    deps = AskDeps(
        settings=Settings(),
        engine=engine or LocalEngine(embedder=HashingEmbedder()),
        source=source,
        candidates=subreddit_profiles(archive),
        source_tools=tools(fetches, calls),  # type: ignore[arg-type]
    )
    try:
        run = asyncio.run(run_research(QUESTION, deps, sources=list(fetches), **options))
    finally:
        if source is not None:
            source.close()
    return run, calls


FOUND = {
    "youtube": SourceFetch(kind="youtube", query=QUESTION, items=[video("dQw4w9WgXcQ")], fetched=5),
    "amazon": SourceFetch(kind="amazon", query=QUESTION, items=[product("B0CFQ8Y4ZT")], fetched=5),
}


def test_selector_gives_other_sources_a_share_and_keeps_their_kind_and_urls() -> None:
    from crowdsift.core.models import FetchResult

    empty = FetchResult.model_validate(
        {"query": "q", "plan_id": "00000000-0000-0000-0000-000000000001", "search_terms": ["q"],
         "subreddits": [], "fetched_at": "2026-11-01T00:00:00Z", "posts": []}
    )  # fmt: skip
    items = [video(f"vid{n:08d}") for n in range(6)] + [product("B0CFQ8Y4ZT")] * 2
    request = select_evidence(empty, SelectorConfig(max_posts=8), prompt_version="v1", extra=items)
    ids = [p.post_id for p in request.post_payloads]
    assert ids == ["yt-vid00000000", "yt-vid00000001", "amzn-B0CFQ8Y4ZT"]  # 8 // 4 per kind
    first = request.post_payloads[0]
    assert first.kind == "youtube" and str(first.url).endswith("watch?v=vid00000000")
    assert first.top_comment_excerpts == ["Battery lasts a full week for me."]
    assert first.post_karma == 480 and first.num_comments == 35
    assert request.post_payloads[2].kind == "amazon" and request.post_payloads[2].post_karma == 2150


def test_videos_and_products_are_summarised_with_the_reddit_threads(demo_archive: Path) -> None:
    run, calls = research(demo_archive, FOUND)
    result = run.result
    assert sorted(calls) == [f"amazon:{QUESTION}", f"youtube:{QUESTION}"]
    assert [f.kind for f in result.source_fetches] == ["youtube", "amazon"]
    summary = result.summary
    assert summary is not None and result.reddit_response is not None
    kinds = {s.kind for s in summary.sources}
    assert "reddit" in kinds and kinds <= {"reddit", "youtube", "amazon"}
    cited = " ".join(t.marked() for t in [summary.summary, *summary.highlights, *summary.cautions])
    assert "[post:" in cited


def test_an_llm_may_cite_a_video_but_not_an_invented_one(demo_archive: Path) -> None:
    def llm(task: Task[Any]) -> Any:
        assert isinstance(task, AnswerTask)  # Reddit off: the summary is the only call
        ids = [p.post_id for p in task.request.post_payloads]
        assert ids == ["yt-dQw4w9WgXcQ", "amzn-B0CFQ8Y4ZT"]
        system = task.messages()[0].content
        assert "the evidence includes Amazon product listings and YouTube videos" in system
        return AnswerDraft(
            summary="Owners say the battery lasts a week [post:yt-dQw4w9WgXcQ]. It is rated "
            "4.3 [post:amzn-B0CFQ8Y4ZT]. Everyone agrees it is perfect [post:yt-invented0].",
            sources=[SourceRef(post_id="yt-dQw4w9WgXcQ", url="https://evil.example/x")],
        )

    engine = ScriptedEngine(function=llm)
    run, _ = research(demo_archive, FOUND, engine=engine, search_reddit=False)
    result = run.result
    assert result.reddit_response is None and result.plan is None
    summary = result.summary
    assert summary is not None
    assert [(s.post_id, s.kind, str(s.url)) for s in summary.sources] == [
        ("yt-dQw4w9WgXcQ", "youtube", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
        ("amzn-B0CFQ8Y4ZT", "amazon", "https://www.amazon.com/dp/B0CFQ8Y4ZT"),
    ]
    assert "yt-invented0" not in summary.summary.marked()  # the unknown citation was removed …
    assert summary.reason is not None and "yt-invented0" in summary.reason  # … and reported
    assert "is not that post's permalink" in summary.reason  # the foreign URL was refused
    assert summary.status == "partial" and result.status == "partial"


def test_a_skipped_or_failed_source_never_stops_the_run(demo_archive: Path) -> None:
    fetches = {
        "youtube": SourceFetch(kind="youtube", query=QUESTION, skipped="set YOUTUBE_API_KEY"),
        "amazon": SourceFetch(kind="amazon", query=QUESTION, errors=["429 after 4 retries"]),
    }
    result = research(demo_archive, fetches)[0].result
    assert result.summary is not None and result.reddit_response is not None
    assert {s.kind for s in result.summary.sources} == {"reddit"}
    assert result.status == "partial"  # Amazon failed; a skipped source alone would not count

    from crowdsift.cli.render import render_research

    text = render_research(result)
    assert "youtube: skipped — set YOUTUBE_API_KEY" in text
    assert "amazon: failed — 429 after 4 retries" in text


def test_parse_sources() -> None:
    assert parse_sources("reddit") == (True, [])
    assert parse_sources("amazon, YouTube") == (False, ["youtube", "amazon"])
    with pytest.raises(PlanError, match="unknown --sources tiktok"):
        parse_sources("reddit,tiktok")


def test_cli_sources_without_keys_skip_with_a_notice_and_still_answer() -> None:
    outcome = CliRunner().invoke(
        app,
        ["ask", QUESTION, "--engine", "local", "--sources", "reddit,youtube,amazon", "--json"],
    )
    assert outcome.exit_code == 0, outcome.output
    from crowdsift.pipeline.result import ResearchResult

    result = ResearchResult.model_validate_json(outcome.stdout)
    skipped = {f.kind: f.skipped for f in result.source_fetches}
    assert "YOUTUBE_API_KEY" in (skipped["youtube"] or "")
    assert "AMAZON_CREDENTIAL_ID" in (skipped["amazon"] or "")
    assert result.summary is not None and result.summary.sources
    bad = CliRunner().invoke(app, ["ask", QUESTION, "--sources", "myspace"])
    assert bad.exit_code == 2 and "unknown --sources myspace" in bad.output


def test_a_research_run_reads_the_real_youtube_and_amazon_clients(demo_archive: Path) -> None:
    """Through the default tools: settings → real clients → local protocol servers → gate."""
    from tests.support.amazon_server import AmazonCreatorsServer, product
    from tests.support.youtube_server import YouTubeProtocolServer

    with YouTubeProtocolServer(api_key="yt-test-key-93") as youtube, AmazonCreatorsServer() as amz:
        youtube.add_video(
            "plaudReview1",
            "Plaud Note review: worth it over a phone recording app?",
            description="Six months of meetings recorded with the Plaud Note versus my phone.",
            channel="Desk Setups",
            views=5400,
            likes=310,
            comments=[{"text": "The Plaud Note transcripts saved my notes.", "likes": 22}],
        )
        amz.add_products(
            [
                product(
                    "B0CFQ8Y4ZT",
                    "Plaud Note AI voice recorder, a phone recording app alternative",
                    features=["Records phone calls and meetings", "Plaud Note app transcribes"],
                    rating=4.4,
                    reviews=1800,
                )
            ]
        )
        settings = Settings(
            youtube_api_key="yt-test-key-93",
            youtube_api_base_url=youtube.base_url,
            amazon_credential_id="test-credential-id",
            amazon_credential_secret="test-credential-secret",
            amazon_partner_tag="crowdsift-20",
            amazon_api_base_url=amz.base_url,
            amazon_auth_url=amz.auth_url,
            cache_ttl=0,
        )
        source = ArchiveSource(demo_archive)
        deps = AskDeps(
            settings=settings,
            engine=LocalEngine(embedder=HashingEmbedder()),
            source=source,
            candidates=subreddit_profiles(demo_archive),
        )
        try:
            run = asyncio.run(run_research(QUESTION, deps, sources=["youtube", "amazon"]))
        finally:
            source.close()
    result = run.result
    by_kind = {f.kind: f for f in result.source_fetches}
    assert [i.id for i in by_kind["youtube"].items] == ["plaudReview1"]
    assert [i.id for i in by_kind["amazon"].items] == ["B0CFQ8Y4ZT"]
    assert by_kind["amazon"].items[0].metrics == {"rating": 4.4, "reviews": 1800}
    assert result.summary is not None
    assert "yt-test-key-93" not in result.model_dump_json()
