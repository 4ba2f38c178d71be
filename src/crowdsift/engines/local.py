"""The local engine: no network, deterministic, and honest about what it is.

It runs each task's own ``run_local`` strategy (embedding similarity plus lexical evidence,
extractive synthesis) with a cached all-MiniLM-L6-v2 embedder. Everything it produces is
labelled ``engine: "local"`` so nobody mistakes it for an LLM answer.
"""

from __future__ import annotations

import asyncio

from crowdsift.core.config import Settings
from crowdsift.core.log import get_logger
from crowdsift.core.tracing import engine_attributes, engine_span_name, observe, reply_attributes
from crowdsift.engines.base import (
    EngineName,
    EngineReply,
    LocalKit,
    OutT,
    Stopwatch,
    Task,
    local_usage,
)
from crowdsift.engines.embedding import CachedEmbedder, Embedder, MiniLMEmbedder
from crowdsift.engines.vector_cache import VECTOR_CACHE_FILE, DiskVectorCache

log = get_logger(__name__)


class LocalEngine:
    """Runs tasks with local strategies; the embedder is injected (a fake in tests)."""

    name: EngineName = "local"

    def __init__(
        self, embedder: Embedder | None = None, *, vectors: DiskVectorCache | None = None
    ) -> None:
        inner = embedder if embedder is not None else MiniLMEmbedder()
        self._vectors = vectors
        self.kit = LocalKit(embedder=CachedEmbedder(inner, disk=vectors))

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalEngine:
        """MiniLM, with its vectors kept in ``<data dir>/vectors.sqlite`` between runs."""
        return cls(
            MiniLMEmbedder.from_settings(settings),
            vectors=DiskVectorCache(settings.data_dir / VECTOR_CACHE_FILE),
        )

    @observe(engine_span_name, attributes=engine_attributes, result_attributes=reply_attributes)
    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        stopwatch = Stopwatch()
        # Embedding is CPU-bound: keep the event loop free for concurrent phases.
        output = await asyncio.to_thread(task.run_local, self.kit)
        usage = local_usage(task.phase, stopwatch, self.kit.embedder.name)
        log.info(
            "engine_call", engine="local", phase=task.phase, task=type(task).__name__,
            latency_ms=usage.latency_ms,
        )  # fmt: skip
        return EngineReply(output=output, usage=usage, engine="local", model=self.kit.embedder.name)

    async def aclose(self) -> None:
        """The vector cache's connection; the model is in-process (reopened if used again)."""
        if self._vectors is not None:
            self._vectors.close()
