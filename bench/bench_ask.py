"""`crowdsift ask` cost: LLM calls per question, and local wall time against its floor.

1. LLM calls per ask in Reddit-only mode with the `openai` engine, against the local
   chat-completions server, counted by the pipeline's CountingEngine; once with a good gate
   yield and once with a poor one that forces the single refetch. Target: at most 4 calls.
   Tokens per call are reported.
2. Local `ask` wall time on the demo archive as a ratio to the irreducible floor measured in
   the same run: loading the embedding model and embedding every text the ask embeds, once.
   Target <= 1.5.

    python bench/bench_ask.py
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from crowdsift.archive.demo import ensure_demo_archive
from crowdsift.archive.profiles import subreddit_profiles
from crowdsift.config import Settings
from crowdsift.engines.embedding import SentenceTransformerEmbedder, Vectors
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.openai_compat import OpenAICompatEngine
from crowdsift.quick_ask import ask
from crowdsift.reddit.sources.archive import ArchiveSource
from crowdsift.research import AskDeps, ResearchResult
from crowdsift.testing.openai_server import ChatCompletionsServer

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
MAX_CALLS = 4
TARGET_RATIO = 1.5


def _responder(keep_share: float) -> Any:
    def respond(body: dict[str, Any]) -> str:
        schema = body.get("response_format", {}).get("json_schema", {}).get("name", "")
        text = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        if schema == "PlanDraft":
            return json.dumps({"search_terms": ["plaud", "voice recorder"],
                               "subreddits": ["gadgets", "productivity"]})  # fmt: skip
        if schema == "RelevanceVerdicts":
            count = len(re.findall(r'<evidence id="item:\d+">', text))
            keep = round(count * keep_share)
            return json.dumps({"relevant": [i < keep for i in range(count)]})
        post_ids = re.findall(r'<evidence id="post:([A-Za-z0-9_]+)">', text)
        cited = post_ids[:2]
        return json.dumps({
            "summary": " ".join(f"A point from the evidence. [post:{p}]" for p in cited),
            "highlights": [], "cautions": [],
            "sources": [{"post_id": p} for p in cited],
        })  # fmt: skip

    return respond


async def _ask(settings: Settings, engine: Any, archive: Path) -> ResearchResult:
    source = ArchiveSource(archive)
    deps = AskDeps(settings=settings, engine=engine, source=source,
                   candidates=subreddit_profiles(archive))  # fmt: skip
    try:
        return (await ask(QUESTION, deps)).result
    finally:
        source.close()
        await engine.aclose()


def llm_calls(archive: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    for label, share in (("good yield", 0.9), ("poor yield", 0.2)):
        with ChatCompletionsServer(api_key="bench-key", responder=_responder(share)) as server:
            settings = Settings(llm_base_url=server.base_url, llm_api_key="bench-key")
            result = asyncio.run(
                _ask(settings, OpenAICompatEngine.from_settings(settings), archive)
            )
        usage = result.usage
        per_call_in = usage.prompt_tokens / max(usage.calls, 1)
        per_call_out = usage.completion_tokens / max(usage.calls, 1)
        verdict = "PASS" if usage.calls <= MAX_CALLS else "FAIL"
        print(
            f"LLM calls per ask ({label}): {usage.calls} {dict(usage.by_phase)} "
            f"(target <= {MAX_CALLS}) {verdict}; tokens per call: {per_call_in:.0f} in, "
            f"{per_call_out:.0f} out; refetched: {result.fetch.refetched}"
        )
        figures[f"calls_{label.replace(' ', '_')}"] = usage.calls
    return figures


class _Recording:
    """Records the batches the ask embeds, so the floor replays exactly that work, once."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.batches: list[list[str]] = []

    def embed(self, texts: Any) -> Vectors:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def _floor(batches: list[list[str]]) -> None:
    """Load the model and embed every batch the ask embedded (each text once, as it did)."""
    embedder = SentenceTransformerEmbedder()
    for batch in batches:
        embedder.embed(batch)


def local_wall_time(archive: Path) -> dict[str, float]:
    settings = Settings()
    recorder = _Recording(SentenceTransformerEmbedder())
    asyncio.run(_ask(settings, LocalEngine(embedder=recorder), archive))  # warm imports
    batches = recorder.batches  # already deduplicated by the engine's cache
    texts = sum(len(batch) for batch in batches)

    floor_s = ask_s = float("inf")
    for _ in range(2):  # alternate and keep the best of each: order effects cancel out
        start = time.perf_counter()
        _floor(batches)
        floor_s = min(floor_s, time.perf_counter() - start)
        start = time.perf_counter()
        asyncio.run(_ask(settings, LocalEngine(embedder=SentenceTransformerEmbedder()), archive))
        ask_s = min(ask_s, time.perf_counter() - start)
    ratio = ask_s / floor_s
    print(
        f"local ask: {ask_s:.2f} s; floor (load model + embed {texts} texts once): "
        f"{floor_s:.2f} s; ratio {ratio:.2f} (target <= {TARGET_RATIO:.2f}) "
        f"{'PASS' if ratio <= TARGET_RATIO else 'FAIL'}"
    )
    return {"ask_s": ask_s, "floor_s": floor_s, "ratio": ratio}


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        archive = ensure_demo_archive(Path(home))
        return {**llm_calls(archive), **local_wall_time(archive)}


if __name__ == "__main__":
    main()
