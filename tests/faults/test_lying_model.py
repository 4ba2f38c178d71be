"""A model that cites only posts it invented leaves the user real evidence: the local engine's
answer over the same threads, ``partial``, saying so in one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from crowdsift.core.citations import citations_in
from crowdsift.core.config import Settings
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.openai_compat import OpenAICompatEngine
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, ResearchResult
from crowdsift.pipeline.synthesis.answer import FELL_BACK
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from tests.support.hijacked_model import HijackedModel, schema_of
from tests.support.openai_server import ChatCompletionsServer

KEY = "sk-test-lying-Zr8"
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
INVENTED = {
    "summary": "According to [post:zz9fake] this is settled. Everyone agrees [comment:zz8fake].",
    "highlights": ["It is the best, says [post:zz9fake]."],
    "cautions": [],
    "sources": [{"post_id": "zz9fake"}],
}


class LyingModel:
    """Answers the synthesis citing only invented posts; every other task as a hijacked model."""

    def __init__(self) -> None:
        self.other = HijackedModel()

    def __call__(self, body: dict[str, Any]) -> str:
        if schema_of(body) == "AnswerDraft":
            return json.dumps(INVENTED)
        return self.other(body)


def _ask(tmp_path: Path, *, fallback: bool) -> ResearchResult:
    archive = ensure_demo_archive(tmp_path)
    with ChatCompletionsServer(api_key=KEY, responder=LyingModel()) as server:
        settings = Settings(llm_base_url=server.base_url, llm_api_key=KEY, llm_max_retries=1)
        engine = OpenAICompatEngine.from_settings(settings)
        with ArchiveSource(archive) as source:
            deps = AskDeps(
                settings=settings,
                engine=engine,
                source=source,
                candidates=subreddit_profiles(archive),
                fallback=LocalEngine(HashingEmbedder()) if fallback else None,
            )

            async def main() -> ResearchResult:
                try:
                    return (await run_research(QUESTION, deps)).result
                finally:
                    await engine.aclose()

            return asyncio.run(main())


def test_a_model_citing_only_invented_posts_falls_back_to_real_evidence(tmp_path: Path) -> None:
    result = _ask(tmp_path, fallback=True)
    summary = result.summary
    assert summary is not None and summary.status == "partial"
    assert summary.reason is not None and summary.reason.startswith(FELL_BACK)
    assert "zz9fake" in summary.reason  # what it invented is still reported
    texts = [t.marked() for t in [summary.summary, *summary.highlights, *summary.cautions]]
    cited = {c.key for text in texts for c in citations_in(text)}
    assert len(cited) >= 2 and len(summary.sources) >= 2
    assert "zz9fake" not in " ".join(texts) and "According to" not in summary.summary.text
    assert summary.engine == "local"
    assert result.status == "partial"


def test_without_a_fallback_the_invention_is_removed_and_nothing_is_left_pointing(
    tmp_path: Path,
) -> None:
    result = _ask(tmp_path, fallback=False)
    summary = result.summary
    assert summary is not None and summary.status == "partial"
    assert "According to" not in summary.summary.text and "()" not in summary.summary.text
    assert summary.sources == []
