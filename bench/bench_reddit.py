"""The Reddit branch's wall time at 150 ms a request, as a ratio to its requests done one by one.

The Reddit branch (formulate → plan → fetch → gate → rerank → drill) runs against the
local Reddit protocol server through the real ``reddit-api`` source (OAuth, rate limiter). The
server's request log then holds every request the branch made; the baseline replays exactly
those requests, one at a time, through a fresh source transport in the same run — the sum of
the branch's request latencies had it done them sequentially. The engine is the local engine
with the hashing embedder, so the figure is about I/O scheduling, not model speed.
One-time process costs are paid before the clock starts, in both runs alike: the OAuth token
(each source fetches it once, then caches it) and loading the language detector.
The server must never have refused a request for exceeding its rate limit, the run must have
searched every query of its plan and drilled at least one thread, and the replay must reach the
server with every request: otherwise the run is an error, not a figure.
Target: branch / sequential <= 0.3 (``main()`` returns it as a ``figures.Figure``).

    python bench/bench_reddit.py [--latency 0.15]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import repo_root  # noqa: F401 - puts the repository root (tests.support) on sys.path
from crowdsift.core.config import RedditConfig, Settings
from crowdsift.core.language import detect_language
from crowdsift.core.source import RawThing
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.reddit.branch import RedditDeps, RedditRun, run_reddit
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.testing.factories import raw_comment, raw_post
from figures import Figure, exit_code
from tests.support.reddit_server import RecordedRequest, RedditProtocolServer

TARGET = 0.3
SUBS = ["tools", "diy", "homeimprovement"]
QUESTION = "Which impact driver is best for deck screws?"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
_ANGLES_TEXT = "guide tutorial benchmark review experience torque battery bits recommendations"
_BRANDS_TEXT = "Milwaukee DeWalt Makita Ryobi Ridgid Bosch Metabo Hikoki Flex Ego"
_ANGLES = _ANGLES_TEXT.split()
_BRANDS = _BRANDS_TEXT.split()


def _corpus(server: RedditProtocolServer) -> None:
    """Posts about impact drivers and deck screws in three subreddits, each with a nested tree."""
    created = int(NOW.timestamp()) - 86_400 * 400
    for s_index, subreddit in enumerate(SUBS):
        posts: list[RawThing] = []
        for n in range(24):
            post_id = f"b{s_index}p{n:02d}"
            angle = _ANGLES[n % len(_ANGLES)]
            brand = _BRANDS[(n + s_index) % len(_BRANDS)]
            posts.append(
                raw_post(
                    post_id,
                    subreddit=subreddit,
                    title=f"{brand} impact driver {angle} for deck screws, week {n + 7 * s_index}",
                    selftext=(
                        f"My {brand} impact driver drove 600 deck screws; {angle} notes on "
                        f"torque, bits and battery life from project {post_id}."
                    ),
                    score=20 + (n * 37 + s_index * 11) % 400,
                    num_comments=12,
                    created_utc=created + n * 3600 + s_index * 60,
                )
            )
            server.add_comments(post_id, _tree(post_id, subreddit, created + n * 3600))
        server.add_posts(subreddit, posts)


def _tree(post_id: str, subreddit: str, created: int) -> list[RawThing]:
    """Three top-level comments, each with a reply chain four deep."""
    comments: list[RawThing] = []
    for top in range(3):
        parent = f"t3_{post_id}"
        for level in range(4):
            comment_id = f"{post_id}c{top}{level}"
            comments.append(
                raw_comment(
                    comment_id,
                    post_id,
                    subreddit=subreddit,
                    parent_id=parent,
                    body=(
                        f"Level {level} reply: set the clutch to mode {top + 2} and use "
                        f"T25 bits; {40 - level * 3} deck screws per charge in cedar."
                    ),
                    score=30 - level * 5 - top,
                    created_utc=created + 100 + top * 10 + level,
                )
            )
            parent = f"t1_{comment_id}"
    return comments


def _settings(server: RedditProtocolServer, home: Path) -> Settings:
    """Each side gets its own data directory, so its own empty response cache."""
    return Settings(
        home=home,
        reddit_client_id="bench",
        reddit_user_agent="bench:crowdsift-bench:0 (local protocol server)",
        reddit_client_secret="bench-secret",
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
    )


def _run(server: RedditProtocolServer, config: RedditConfig, home: Path) -> tuple[RedditRun, float]:
    settings = _settings(server, home)
    source = RedditApiSource.from_settings(settings)
    deps = RedditDeps(
        source=source,
        engine=LocalEngine(embedder=HashingEmbedder()),
        config=config,
        clock=lambda: NOW,
        search=SearchOptions.from_settings(settings),
    )
    try:
        detect_language(QUESTION)  # load the detector's models once, outside the clock
        source.transport.get_json("/r/tools/search", {"q": "warm up the token", "limit": 1})
        server.reset_log()
        start = time.perf_counter()
        run = asyncio.run(run_reddit(QUESTION, deps, subreddits=SUBS))
        return run, time.perf_counter() - start
    finally:
        source.close()


def main(latency: float = 0.15) -> dict[str, Any]:
    config = RedditConfig()
    with RedditProtocolServer(client_id="bench", client_secret="bench-secret") as server:
        _corpus(server)
        server.latency = latency
        server.set_ratelimit(1000, 600)
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            run, reddit_s = _run(server, config, Path(one))
            recorded = list(server.requests)
            refused = sum(1 for r in recorded if r.status == 429)
            sequential_s, requests, replayed = _replay(server, recorded, Path(two))
    queries = len(run.plan.queries) if run.plan else 0
    drilled = sum(1 for t in run.threads if t.error is None)
    if requests < max(queries, 1) or replayed < requests:
        raise SystemExit(
            f"bench_reddit is broken: the run made {requests} API requests for a plan of "
            f"{queries} queries and the replay reached the server with {replayed} (a side "
            "served by a cache times nothing)"
        )
    if refused or drilled == 0 or run.timed_out:
        raise SystemExit(
            f"bench_reddit is broken: {refused} rate-limit refusals, {drilled} threads drilled, "
            f"timed out: {run.timed_out}; a branch that overruns the rate limit or drills "
            "nothing is a bug, not a figure"
        )
    figure = Figure(
        bench="reddit",
        name=f"Reddit branch wall ({requests} requests)",
        value=reddit_s,
        baseline=sequential_s,
        unit="s",
        target=TARGET,
        baseline_name="same requests one at a time",
    )
    print(
        f"Reddit branch ({requests} requests: {queries} queries, {drilled} threads drilled, "
        f"{latency * 1000:.0f} ms latency, concurrency {Settings().concurrency}): branch "
        f"{reddit_s:.2f} s, same requests one at a time {sequential_s:.2f} s; ratio "
        f"{figure.ratio:.2f} (target <= {TARGET:.2f}); no rate-limit refusals; {figure.verdict}"
    )
    return {"figures": [figure], "reddit_s": reddit_s, "sequential_s": sequential_s,
            "ratio": figure.ratio, "requests": float(requests)}  # fmt: skip


def _replay(
    server: RedditProtocolServer, log: list[RecordedRequest], home: Path
) -> tuple[float, int, int]:
    """The run's API requests again, strictly one at a time, through a fresh transport and an
    empty cache; returns the time, the requests replayed and those that reached the server."""
    recorded = [r for r in log if r.bearer and r.path != "/api/v1/access_token"]
    source = RedditApiSource.from_settings(_settings(server, home))
    try:
        source.transport.get_json("/r/tools/search", {"q": "warm up the token", "limit": 1})
        server.reset_log()
        start = time.perf_counter()
        for request in recorded:
            source.transport.get_json(request.path, dict(request.params))
        elapsed = time.perf_counter() - start
        reached = sum(1 for r in server.requests if r.bearer)
        return elapsed, len(recorded), reached
    finally:
        source.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.15)
    arguments = parser.parse_args()
    raise SystemExit(exit_code(main(arguments.latency)["figures"]))
