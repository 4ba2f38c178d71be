"""``crowdsift serve`` under load from a second process on loopback.

Figure (target >= 0.5): requests per second of ``GET /api/feed`` (preference mode, MiniLM
index of the bundled demo archive, local engine) served by ``crowdsift serve`` to concurrent
clients in another process, divided by calls per second of ``FeedRetriever.get_feed`` made
directly in this process on the same index in the same run (the better of one caller and as
many threads as there are clients); ``main()`` returns it as a ``figures.Figure``. A load run
with failed requests is an error, not a figure.

Also printed: p50/p99 latency of ``POST /api/research`` (job submission) with 50 concurrent
clients; the jobs then run on the server's pool (they are real research runs).

    python bench/bench_service.py [--seconds 10] [--clients 8] [--submitters 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import Figure, exit_code
from service_harness import INTERESTS, percentile, serve, service_env

TARGET = 0.5


def _in_process(home: Path, seconds: float, clients: int) -> float:
    """Calls per second of get_feed in this process (index opened and warmed first): the
    better of one caller and ``clients`` threads, so the baseline is never the weak one."""
    os.environ.update(service_env(home))
    from crowdsift.core.config import Settings
    from crowdsift.feed.commands import open_retriever, run_index

    settings = Settings()
    report = run_index(settings)
    print(f"  indexed {report.indexed} demo posts with MiniLM in {report.seconds:.1f} s")
    retriever = open_retriever(settings)
    for interest in INTERESTS:
        retriever.get_feed([interest], "preference")
    sequential = _calls_per_second(retriever, seconds / 2, 1)
    threaded = _calls_per_second(retriever, seconds / 2, clients)
    print(f"  in-process get_feed: {sequential:,.1f} calls/s alone, {threaded:,.1f} with "
          f"{clients} threads")  # fmt: skip
    return max(sequential, threaded)


def _calls_per_second(retriever: Any, seconds: float, threads: int) -> float:
    from concurrent.futures import ThreadPoolExecutor

    stop_at = time.perf_counter() + seconds

    def caller(number: int) -> int:
        calls = 0
        while time.perf_counter() < stop_at:
            retriever.get_feed([INTERESTS[(number + calls) % len(INTERESTS)]], "preference")
            calls += 1
        return calls

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(caller, range(threads)))
    return total / (time.perf_counter() - started)


async def _feed_load(base: str, clients: int, seconds: float) -> dict[str, Any]:
    import httpx

    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def client(number: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            i = number
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                response = await http.get(
                    "/api/feed", params={"interests": INTERESTS[i % len(INTERESTS)]}
                )
                latencies.append(time.perf_counter() - started)
                errors += response.status_code != 200
                i += 1

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    elapsed = time.perf_counter() - started
    return {"requests": len(latencies), "errors": errors, "seconds": elapsed, "lat": latencies}


async def _submit_load(base: str, submitters: int) -> dict[str, Any]:
    import httpx

    async def submit(http: httpx.AsyncClient, number: int) -> tuple[float, int]:
        body = {"question": f"Which cordless impact driver lasts longest? ({number})"}
        started = time.perf_counter()
        response = await http.post("/api/research", json=body)
        return time.perf_counter() - started, response.status_code

    limits = httpx.Limits(max_connections=submitters)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        outcomes = await asyncio.gather(*(submit(http, n) for n in range(submitters)))
    return {"lat": [o[0] for o in outcomes], "errors": sum(o[1] != 202 for o in outcomes)}


def _load_main(args: argparse.Namespace) -> None:
    """The second process: drive the server, print JSON on stdout."""
    base = args.load
    warm = asyncio.run(_feed_load(base, 2, 2.0))
    feed = asyncio.run(_feed_load(base, args.clients, args.seconds))
    submit = asyncio.run(_submit_load(base, args.submitters))
    print(json.dumps({"warm_errors": warm["errors"], "feed": feed, "submit": submit}))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--submitters", type=int, default=50)
    parser.add_argument("--load", help=argparse.SUPPRESS)  # internal: run as the load process
    args = parser.parse_args(argv if argv is not None else [])
    if args.load:
        _load_main(args)
        return {}

    with tempfile.TemporaryDirectory(prefix="crowdsift-bench-service-") as tmp:
        home = Path(tmp)
        baseline = _in_process(home, args.seconds, args.clients)
        env = service_env(home)
        with serve(env) as server:
            load = subprocess.run(
                [sys.executable, __file__, "--load", server.base, "--seconds", str(args.seconds),
                 "--clients", str(args.clients), "--submitters", str(args.submitters)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
    measured = json.loads(load.stdout)
    feed, submit = measured["feed"], measured["submit"]
    if measured["warm_errors"] or feed["errors"] or not feed["requests"]:
        raise SystemExit(
            f"bench_service is broken: {feed['requests']} feed requests, {feed['errors']} "
            f"errors ({measured['warm_errors']} while warming up); see the server log above"
        )
    served = feed["requests"] / feed["seconds"]
    figure = Figure(
        bench="service",
        name=f"GET /api/feed throughput, {args.clients} clients",
        value=served,
        baseline=baseline,
        unit="req/s",
        target=TARGET,
        direction="at_least",
        baseline_name="get_feed in process",
    )
    lat = feed["lat"]
    print(
        f"  GET /api/feed, {args.clients} clients from another process: {served:,.1f} req/s, "
        f"p50 {1000 * statistics.median(lat):.1f} ms, p99 {1000 * percentile(lat, 0.99):.1f} ms, "
        f"{feed['errors']} errors"
    )
    print(f"  throughput ratio served/in-process: {figure.ratio:.2f} (target >= {TARGET}) "
          f"{figure.verdict}")  # fmt: skip
    sub = submit["lat"]
    print(
        f"  POST /api/research, {args.submitters} concurrent clients: "
        f"p50 {1000 * statistics.median(sub):.1f} ms, p99 {1000 * percentile(sub, 0.99):.1f} ms, "
        f"{submit['errors']} errors"
    )
    return {"figures": [figure], "ratio": figure.ratio, "baseline": baseline, "served": served}


if __name__ == "__main__":
    result = main(sys.argv[1:])
    raise SystemExit(exit_code(result.get("figures", [])))
