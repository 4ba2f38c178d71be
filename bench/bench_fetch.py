"""Fetch wall time with 150 ms latency per request: bounded concurrency vs one-at-a-time.

A plan of 3 subreddits x 4 terms runs against the local Reddit protocol server twice in the
same process: strictly sequentially (concurrency 1) and with the default bounded concurrency.
Each side has its own fresh data directory (so its own, empty response cache) and the server
counts the API requests each side made: both must make every request the plan needs, the same
number, or the run is an error rather than a figure (a side served from a cache is not timing
the fetch). Both must produce the identical FetchResult, and the server must never have had to
refuse a request for exceeding its rate limit; either failing is an error too. Target:
concurrent / sequential <= 0.35 (``main()`` returns it as a ``figures.Figure``).

    python bench/bench_fetch.py [--latency 0.15] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import repo_root  # noqa: F401 - puts the repository root (tests.support) on sys.path
from crowdsift.core.config import Settings
from crowdsift.core.models import FetchResult, SearchPlan
from crowdsift.pipeline.fetch.fetcher import RedditFetcher
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from figures import Figure, exit_code
from tests.support.corpus import build_corpus
from tests.support.reddit_server import RedditProtocolServer

TARGET = 0.35
SUBS = ["homeimprovement", "tools", "diy"]
TERMS = ["impact driver", "torque setting", "drill bit", "battery platform"]
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _api_requests(server: RedditProtocolServer) -> int:
    """Requests that reached the API (token grants excluded)."""
    return sum(1 for r in server.requests if r.bearer and r.path != "/api/v1/access_token")


def _fetch(
    server: RedditProtocolServer, concurrency: int, home: Path
) -> tuple[FetchResult, float, int, int]:
    settings = Settings(
        home=home,
        author_salt="bench-salt",  # one salt for both sides: equal author hashes
        reddit_client_id="bench",
        reddit_user_agent="bench:crowdsift-bench:0 (local protocol server)",
        reddit_client_secret="bench-secret",
        reddit_api_base_url=server.base_url,
        reddit_auth_url=server.auth_url,
        page_size=3,
        max_posts_per_query=6,
        concurrency=concurrency,
    )
    source = RedditApiSource.from_settings(settings)
    fetcher = RedditFetcher.from_settings(source, settings, clock=lambda: NOW)
    plan = SearchPlan(search_terms=TERMS, subreddits=SUBS)
    server.reset_log()
    start = time.perf_counter()
    try:
        outcome = fetcher.fetch(plan)
    finally:
        source.close()
    elapsed = time.perf_counter() - start
    refused = sum(1 for r in server.requests if r.status == 429)
    requests = _api_requests(server)
    return outcome.result.model_copy(update={"plan_id": plan.plan_id}), elapsed, refused, requests


def main(latency: float = 0.15, concurrency: int = 4) -> dict[str, Any]:
    with RedditProtocolServer(client_id="bench", client_secret="bench-secret") as server:
        build_corpus(SUBS, TERMS, posts_per_query=6, comments_per_post=3).load_into(server)
        server.latency = latency
        server.set_ratelimit(1000, 600)
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            sequential, seq_s, seq_refused, seq_requests = _fetch(server, 1, Path(one))
            server.set_ratelimit(1000, 600)
            concurrent, con_s, con_refused, con_requests = _fetch(server, concurrency, Path(two))
    needed = len(SUBS) * len(TERMS)  # at least one search page per subreddit x term
    if min(seq_requests, con_requests) < needed or seq_requests != con_requests:
        raise SystemExit(
            f"bench_fetch is broken: the sides made {seq_requests} and {con_requests} API "
            f"requests (the plan needs at least {needed}, and the same on both sides)"
        )
    identical = sequential.model_dump(exclude={"plan_id"}) == concurrent.model_dump(
        exclude={"plan_id"}
    )
    if not identical or seq_refused or con_refused:
        raise SystemExit(
            f"bench_fetch is broken: identical results {identical}, rate-limit refusals "
            f"{seq_refused} (sequential) and {con_refused} (concurrent); a fetch that changes "
            "its answer or overruns the rate limit is a bug, not a figure"
        )
    figure = Figure(
        bench="fetch",
        name=f"fetch wall, concurrency {concurrency} ({con_requests} requests)",
        value=con_s,
        baseline=seq_s,
        unit="s",
        target=TARGET,
        baseline_name=f"sequential, {seq_requests} requests",
    )
    print(
        f"fetch ({len(SUBS)} subs x {len(TERMS)} terms, {seq_requests} + {con_requests} requests, "
        f"{latency * 1000:.0f} ms latency): sequential {seq_s:.2f} s, concurrency {concurrency} "
        f"{con_s:.2f} s; ratio {figure.ratio:.2f} (target <= {TARGET:.2f}); identical result, "
        f"no rate-limit refusals; {figure.verdict}"
    )
    return {"figures": [figure], "sequential_s": seq_s, "concurrent_s": con_s,
            "ratio": figure.ratio}  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--concurrency", type=int, default=4)
    arguments = parser.parse_args()
    raise SystemExit(exit_code(main(arguments.latency, arguments.concurrency)["figures"]))
