"""Experts Panel map phase: wall time against the ideal, with an engine of fixed latency.

The engine answers each chunk after a fixed delay (``asyncio.sleep``), as a remote model would,
and does the CPU work the real OpenAI-compatible engine does around a call: it renders the
prompt (fencing 100 posts) and decodes and validates a JSON reply. 2,500 synthetic posts in
chunks of 100 are 25 chunks; with ``MAP_MAX_PARALLEL`` chunks in flight the ideal wall time is
``delay × ceil(chunks / MAP_MAX_PARALLEL)``. Two configurations show it scales: 25 in flight
(one wave) and 10 in flight (three waves). Target: wall time / ideal <= 1.3 for each; ``main()``
returns one ``figures.Figure`` per configuration, the ideal as its baseline (computed, not
measured: no scheduler does better than the engine's own latency).

    python bench/bench_map.py [--delay 0.05] [--posts 2500]    # exits 1 above the target
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.engines.base import EngineName, EngineReply, OutT, Task, Usage
from crowdsift.pipeline.experts.map import MapTask, chunk_posts, run_map
from crowdsift.sources.experts.models import ExpertPost
from figures import Figure, exit_code

TARGET_RATIO = 1.3
CONFIGURATIONS = (25, 10)  # MAP_MAX_PARALLEL values
_WORDS = ("vector", "database", "pgvector", "latency", "recall", "index", "backup", "quota",
          "model", "prompt")  # fmt: skip


class DelayedMapEngine:
    """Answers each map chunk after ``delay`` seconds with a valid reply; counts calls.

    The reply texts are written beforehand (``reply_bodies``): producing them is the remote
    model's work, which the delay stands for. Decoding and validating them is ours and is timed.
    """

    name: EngineName = "scripted"

    def __init__(self, delay: float, bodies: dict[int, str]) -> None:
        self.delay = delay
        self.bodies = bodies
        self.calls = 0

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        assert isinstance(task, MapTask)
        task.messages()  # the prompt a real engine would send
        await asyncio.sleep(self.delay)
        self.calls += 1
        output: Any = task.parse(json.loads(self.bodies[task.posts[0].post_id]))
        return EngineReply(output=output, usage=Usage(calls=1, by_phase={"map": 1}),
                           engine="scripted")  # fmt: skip

    async def aclose(self) -> None:
        """Nothing to release."""


def reply_bodies(posts: list[ExpertPost], chunk_size: int) -> dict[int, str]:
    """The JSON reply for each chunk, keyed by the chunk's first post id."""
    marks = ("HIGH", "MEDIUM", "LOW")
    bodies = {}
    for chunk in chunk_posts(posts, chunk_size):
        verdicts = [
            {"post_id": p.post_id, "relevance": marks[p.post_id % 3], "reason": "synthetic"}
            for p in chunk
        ]
        bodies[chunk[0].post_id] = json.dumps({"posts": verdicts})
    return bodies


def make_posts(count: int) -> list[ExpertPost]:
    """``count`` posts of 60–120 words, one hour apart."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    posts = []
    for pid in range(1, count + 1):
        words = [_WORDS[(pid * 7 + i * 3) % len(_WORDS)] for i in range(60 + pid % 61)]
        posts.append(
            ExpertPost(
                expert_id="bench",
                post_id=pid,
                text=" ".join(words).capitalize() + ".",
                date=start + timedelta(hours=pid),
                url=f"https://t.me/bench_ch/{pid}",
            )
        )
    return posts


async def _measure(posts: list[ExpertPost], parallel: int, delay: float, repeat: int) -> float:
    """Best wall time of ``repeat`` runs of the map phase, timed inside one event loop (the
    best, because other processes on a shared machine only ever add to it).

    Timing ``asyncio.run`` itself would add Python 3.11's exit cost: it formats the repr of the
    main task's *result* twice (the SIGINT handler check), ~50 ms for 2,500 marked posts.
    """
    config = ExpertsConfig(map_chunk_size=100, map_max_parallel=parallel)
    bodies = reply_bodies(posts, config.map_chunk_size)
    best = float("inf")
    for _ in range(repeat):
        engine = DelayedMapEngine(delay, bodies)
        start = time.perf_counter()
        outcome = await run_map("Which vector database should I use?", posts, engine, config)
        best = min(best, time.perf_counter() - start)
        assert len(outcome.scored) == len(posts) and outcome.failed_chunks == 0
        assert engine.calls == outcome.chunks
    return best


def main(delay: float = 0.05, count: int = 2500, repeat: int = 7) -> dict[str, Any]:
    posts = make_posts(count)
    chunks = math.ceil(count / 100)
    figures: list[Figure] = []
    result: dict[str, Any] = {"figures": figures}
    for parallel in CONFIGURATIONS:
        ideal = delay * math.ceil(chunks / parallel)
        wall = asyncio.run(_measure(posts, parallel, delay, repeat))
        figure = Figure(
            bench="map",
            name=f"map wall, MAP_MAX_PARALLEL {parallel} ({chunks} chunks)",
            value=wall * 1000,
            baseline=ideal * 1000,
            unit="ms",
            target=TARGET_RATIO,
            baseline_name=f"ideal: {delay * 1000:.0f} ms x {math.ceil(chunks / parallel)} waves",
        )
        figures.append(figure)
        print(
            f"map: {count} posts, {chunks} chunks, MAP_MAX_PARALLEL {parallel}, delay "
            f"{delay * 1000:.0f} ms: {wall * 1000:.0f} ms; ideal {ideal * 1000:.0f} ms; ratio "
            f"{figure.ratio:.2f} (target <= {TARGET_RATIO:.2f}) {figure.verdict}"
        )
        result[f"ratio_parallel_{parallel}"] = figure.ratio
        result[f"wall_s_parallel_{parallel}"] = wall
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per engine call")
    parser.add_argument("--posts", type=int, default=2500)
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    result = main(arguments.delay, arguments.posts, arguments.repeat)
    raise SystemExit(exit_code(result["figures"]))
