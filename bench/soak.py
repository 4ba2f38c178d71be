"""``make soak``: ``crowdsift serve`` under a bounded, mixed load from a second process.

The server runs with the local engine over the bundled demo archive (feed index built first,
SQLite job database in a temporary ``CROWDSIFT_HOME``, ``CROWDSIFT_JOB_WORKERS=2``). A second
process on loopback runs N concurrent clients for the duration, each sending one request after
another in a fixed mix: 10 % research submissions, 50 % feed, 30 % fetch, 10 % job status,
``/healthz`` and ``/metrics`` in turn. The load is bounded: a client submits its next research
job only once its previous one has finished (until then its research turn polls that job), so
the queue never holds more than N jobs.

Pass/fail: no errors (a 5xx, a connection error or timeout, or any status but the route's
success status), no lost jobs (every job submitted during the load finished, done or failed,
within the grace period after the load stops), and server memory (VmRSS, sampled every few
seconds) not growing: last-minute median / first-minute median <= 1.5 (<= 1.2 is "flat").
The figure printed against its same-run baseline: throughput of the last minute of load as a
ratio to the first minute's. The server is warmed up first (one request of each kind and one
finished research job, so models are loaded) and the warm-up is not measured.

    python bench/soak.py [--seconds 300] [--clients 20] [--grace 300] [--embedder minilm]

``SOAK_SECONDS``, ``SOAK_CLIENTS`` and ``SOAK_GRACE`` set the defaults. Prints a table, then the
summary as one JSON line; exits 1 when the run fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service_harness import INTERESTS, percentile, serve, service_env

#: One client's turns, repeated: 10 % research, 50 % feed, 30 % fetch, 10 % "misc".
CYCLE = ("research", "feed", "fetch", "feed", "misc", "feed", "fetch", "feed", "fetch", "feed")
#: What a misc turn sends, in turn (each client starts at a different place).
MISC = ("status", "healthz", "metrics")
KINDS = ("research", "status", "feed", "fetch", "healthz", "metrics")
#: The success status of each kind; any other answer is an error.
EXPECTED = {
    "research": 202,
    "status": 200,
    "feed": 200,
    "fetch": 200,
    "healthz": 200,
    "metrics": 200,
}
QUESTIONS = (
    "Which cordless impact driver lasts longest?",
    "Is the Plaud Note worth it compared to a phone recording app?",
    "Airflow vs Dagster for a small data team?",
    "Which local LLM setup works best for coding?",
)
#: Every third research job also asks a demo expert, so the experts path runs under load too.
EXPERT = "desk_gear_weekly"
PLANS = (
    {"search_terms": ["impact driver", "drill"], "subreddits": ["Tools", "HomeImprovement"]},
    {"search_terms": ["Plaud Note"], "subreddits": ["gadgets", "productivity"]},
    {"search_terms": ["Dagster", "Airflow"], "subreddits": ["dataengineering", "apacheairflow"]},
    {"search_terms": ["local model", "RAG"], "subreddits": ["LocalLLaMA", "Rag", "ChatGPTCoding"]},
)
FINISHED = ("done", "failed")
FLAT = 1.2  # memory ratio reported as flat
MEMORY_LIMIT = 1.5  # memory ratio that fails the run
MAX_ERROR_SAMPLES = 10
REQUEST_TIMEOUT = 60.0


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=_env_number("SOAK_SECONDS", 300))
    parser.add_argument("--clients", type=int, default=int(_env_number("SOAK_CLIENTS", 20)))
    parser.add_argument(
        "--grace",
        type=float,
        default=_env_number("SOAK_GRACE", 300),
        help="seconds after the load stops for its jobs to finish before they count as lost",
    )
    parser.add_argument(
        "--embedder",
        choices=("minilm", "hashing"),
        default="minilm",
        help="the feed index's embedder (hashing: fast, for the test)",
    )
    parser.add_argument("--load", help=argparse.SUPPRESS)  # internal: be the load process
    parser.add_argument("--out", help=argparse.SUPPRESS)  # internal: where it writes its JSON
    args = parser.parse_args(list(argv))
    if args.seconds <= 0 or args.clients < 1 or args.grace < 0:
        parser.error("--seconds must be > 0, --clients >= 1 and --grace >= 0")
    return args


# --- The load process -----------------------------------------------------------------------


@dataclass
class Record:
    kind: str
    at: float  # seconds from the start of the load to the answer
    seconds: float
    status: int  # 0: no answer (connection error or timeout)


@dataclass
class Tally:
    """What one phase (warm-up, load, drain) sent and got back, and the jobs it submitted."""

    started: float = field(default_factory=time.monotonic)
    records: list[Record] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)
    jobs: dict[str, str] = field(default_factory=dict)  # id -> last status seen

    def add(self, kind: str, began: float, status: int, problem: str | None) -> None:
        now = time.monotonic()
        self.records.append(Record(kind, now - self.started, now - began, status))
        if problem is not None and len(self.error_samples) < MAX_ERROR_SAMPLES:
            self.error_samples.append(f"{kind}: {problem}"[:300])

    @property
    def errors(self) -> int:
        return sum(r.status != EXPECTED[r.kind] for r in self.records)

    def unfinished(self) -> list[str]:
        return [job_id for job_id, status in self.jobs.items() if status not in FINISHED]


async def _send(
    http: Any, tally: Tally, kind: str, method: str, url: str, **kwargs: Any
) -> Any | None:
    """One request, recorded; the response when it has the kind's success status."""
    import httpx

    began = time.monotonic()
    try:
        response = await http.request(method, url, **kwargs)
    except httpx.TransportError as exc:
        tally.add(kind, began, 0, f"{method} {url}: {type(exc).__name__}: {exc}")
        return None
    ok = response.status_code == EXPECTED[kind]
    problem = None if ok else f"{method} {url}: {response.status_code} {response.text[:200]}"
    tally.add(kind, began, response.status_code, problem)
    return response if ok else None


async def _submit(http: Any, tally: Tally, number: int) -> str | None:
    body: dict[str, Any] = {"question": QUESTIONS[number % len(QUESTIONS)]}
    if number % 3 == 2:
        body["experts"] = [EXPERT]
    response = await _send(http, tally, "research", "POST", "/api/research", json=body)
    if response is None:
        return None
    job_id: str = response.json()["id"]
    tally.jobs[job_id] = response.json()["status"]
    return job_id


async def _status(http: Any, tally: Tally, job_id: str) -> None:
    response = await _send(http, tally, "status", "GET", f"/api/research/{job_id}")
    if response is not None and job_id in tally.jobs:
        tally.jobs[job_id] = response.json()["status"]


async def _feed(http: Any, tally: Tally, number: int) -> None:
    params = (
        {"mode": "random"} if number % 5 == 4 else {"interests": INTERESTS[number % len(INTERESTS)]}
    )
    await _send(http, tally, "feed", "GET", "/api/feed", params=params)


async def _fetch(http: Any, tally: Tally, number: int) -> None:
    await _send(http, tally, "fetch", "POST", "/api/fetch", json=PLANS[number % len(PLANS)])


async def _client(base: str, number: int, tally: Tally, stop_at: float) -> None:
    """One client: the cycle's turns back to back until ``stop_at``; at most one job of its own
    in flight."""
    import httpx

    own_job: str | None = None
    turn = 0
    misc = number % len(MISC)
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT) as http:
        while time.monotonic() < stop_at:
            kind = CYCLE[turn % len(CYCLE)]
            seq = number * 1000 + turn
            turn += 1
            if kind == "research":
                if own_job is None or tally.jobs.get(own_job) in FINISHED:
                    own_job = await _submit(http, tally, seq)
                else:
                    await _status(http, tally, own_job)
            elif kind == "feed":
                await _feed(http, tally, seq)
            elif kind == "fetch":
                await _fetch(http, tally, seq)
            else:
                what = MISC[misc % len(MISC)]
                misc += 1
                job = own_job or next(iter(tally.jobs), None)
                if what == "status" and job is not None:
                    await _status(http, tally, job)
                elif what == "metrics":
                    await _send(http, tally, "metrics", "GET", "/metrics")
                else:
                    await _send(http, tally, "healthz", "GET", "/healthz")


async def _wait_jobs(http: Any, tally: Tally, deadline: float) -> None:
    """Poll the tally's unfinished jobs (recorded into ``tally``) until done or ``deadline``."""
    while (pending := tally.unfinished()) and time.monotonic() < deadline:
        for job_id in pending:
            await _status(http, tally, job_id)
        if tally.unfinished():
            await asyncio.sleep(1.0)


async def _warm_up(base: str, grace: float) -> Tally:
    """One of each kind, and research jobs waited for: models load before the clock runs."""
    import httpx

    tally = Tally()
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT) as http:
        # Both research paths at once (two workers): Reddit only, and with an expert.
        await _submit(http, tally, 0)
        await _submit(http, tally, 2)
        await _send(http, tally, "healthz", "GET", "/healthz")
        await _send(http, tally, "metrics", "GET", "/metrics")
        for number in range(len(PLANS)):
            await _feed(http, tally, number)
            await _fetch(http, tally, number)
        await _wait_jobs(http, tally, time.monotonic() + grace)
    return tally


async def _progress(tally: Tally, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        finished = len(tally.jobs) - len(tally.unfinished())
        print(
            f"  {time.monotonic() - tally.started:5.0f} s: {len(tally.records)} requests, "
            f"{tally.errors} errors, jobs {finished}/{len(tally.jobs)} finished",
            file=sys.stderr,
            flush=True,
        )


def _job_gauge(metrics_text: str) -> dict[str, int]:
    """``crowdsift_jobs{status="…"} n`` lines of a /metrics body, as {status: n}."""
    gauge: dict[str, int] = {}
    for line in metrics_text.splitlines():
        if line.startswith('crowdsift_jobs{status="'):
            labels, _, value = line.rpartition(" ")
            gauge[labels.split('"')[1]] = int(float(value))
    return gauge


async def _load(base: str, clients: int, seconds: float, grace: float) -> dict[str, Any]:
    import httpx

    warm = await _warm_up(base, grace)
    warm_seconds = time.monotonic() - warm.started
    tally = Tally()
    window_start = time.time()
    reporter = asyncio.create_task(_progress(tally, min(30.0, max(5.0, seconds / 10))))
    stop_at = tally.started + seconds
    try:
        await asyncio.gather(*(_client(base, n, tally, stop_at) for n in range(clients)))
    finally:
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reporter
    window_end = time.time()
    load_seconds = time.monotonic() - tally.started
    drain = Tally(jobs=tally.jobs)
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT) as http:
        drain_started = time.monotonic()
        await _wait_jobs(http, drain, drain_started + grace)
        drained_in = time.monotonic() - drain_started
        metrics = await _send(http, drain, "metrics", "GET", "/metrics")
    statuses = Counter(tally.jobs.values())
    return {
        "clients": clients,
        "seconds": round(load_seconds, 1),
        "warmup_s": round(warm_seconds, 1),
        "window": {"start": window_start, "end": window_end},
        "kinds": {kind: _kind_figures(tally.records, kind) for kind in KINDS},
        "requests": len(tally.records),
        "load_errors": tally.errors,
        "warmup_errors": warm.errors,
        "drain_errors": drain.errors,
        "error_samples": (warm.error_samples + tally.error_samples + drain.error_samples)[
            :MAX_ERROR_SAMPLES
        ],
        "throughput": _throughput(tally.records, seconds),
        "jobs": {
            "submitted": len(tally.jobs),
            "done": statuses["done"],
            "failed": statuses["failed"],
            # A warm-up job that never finished is lost too.
            "lost": len(tally.unfinished()) + len(warm.unfinished()),
            "drained_in_s": round(drained_in, 1),
            "grace_s": grace,
            "warmup": dict(Counter(warm.jobs.values())),
            "server": _job_gauge(metrics.text) if metrics is not None else None,
        },
    }


def _kind_figures(records: Sequence[Record], kind: str) -> dict[str, Any]:
    mine = [r for r in records if r.kind == kind]
    latencies = [r.seconds * 1000 for r in mine]
    statuses = Counter(str(r.status) if r.status else "no answer" for r in mine)
    figures: dict[str, Any] = {
        "requests": len(mine),
        "answered": sum(r.status == EXPECTED[kind] for r in mine),
        "errors": sum(r.status != EXPECTED[kind] for r in mine),
        "statuses": dict(statuses),
    }
    for name, q in (("p50_ms", 0.5), ("p95_ms", 0.95), ("p99_ms", 0.99)):
        figures[name] = round(percentile(latencies, q), 1) if latencies else None
    return figures


def _throughput(records: Sequence[Record], seconds: float) -> dict[str, float]:
    """Answers per second in the first and the last minute of the load (a third of it, for
    runs under three minutes), and last / first: the same run's own baseline."""
    window = min(60.0, seconds / 3)
    first = sum(1 for r in records if r.at <= window) / window
    last = sum(1 for r in records if seconds - window < r.at <= seconds) / window
    return {
        "window_s": round(window, 1),
        "first_rps": round(first, 2),
        "last_rps": round(last, 2),
        "ratio": round(last / first, 3) if first else 0.0,
    }


def _load_main(args: argparse.Namespace) -> None:
    figures = asyncio.run(_load(args.load, args.clients, args.seconds, args.grace))
    Path(args.out).write_text(json.dumps(figures), encoding="utf-8")


# --- The driving process: server, index, memory samples, verdict ------------------------------


def rss_kib(pid: int) -> int | None:
    """The process's resident set (VmRSS, KiB), or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def memory_figures(
    samples: Sequence[tuple[float, int]], start: float, end: float
) -> dict[str, Any]:
    """Median RSS of the load's first minute vs its last (a third of it for short runs)."""
    window = min(60.0, (end - start) / 3)
    first = [kib for at, kib in samples if start <= at <= start + window]
    last = [kib for at, kib in samples if end - window <= at <= end]
    during = [kib for at, kib in samples if start <= at <= end]
    if not first or not last:
        return {"samples": len(during), "ratio": None}
    first_mb = statistics.median(first) / 1024
    last_mb = statistics.median(last) / 1024
    return {
        "samples": len(during),
        "window_s": round(window, 1),
        "first_mb": round(first_mb, 1),
        "last_mb": round(last_mb, 1),
        "max_mb": round(max(during) / 1024, 1),
        "ratio": round(last_mb / first_mb, 3),
    }


def _build_index(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "crowdsift", "index", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"crowdsift index failed (exit {done.returncode}): {done.stderr[-500:]}")
    report = json.loads(done.stdout)
    print(f"  feed index: {report['indexed']} demo posts in {report['seconds']:.1f} s", flush=True)


def _drive(args: argparse.Namespace, env: dict[str, str], home: Path) -> dict[str, Any]:
    """Serve, run the load process beside it while sampling the server's memory, stop."""
    out = home / "load.json"
    log_path = home / "server.log"
    every = max(0.5, min(5.0, args.seconds / 30))
    samples: list[tuple[float, int]] = []
    with log_path.open("wb") as log, serve(env, log=log) as server:
        print(f"  serving at {server.base} (pid {server.process.pid})", flush=True)
        load = subprocess.Popen(
            [sys.executable, __file__, "--load", server.base, "--out", str(out),
             "--seconds", str(args.seconds), "--clients", str(args.clients),
             "--grace", str(args.grace)],
            env=env,
        )  # fmt: skip
        try:
            while load.poll() is None:
                if (kib := rss_kib(server.process.pid)) is not None:
                    samples.append((time.time(), kib))
                time.sleep(every)
        finally:
            if load.poll() is None:
                load.kill()
            load.wait()
    if load.returncode != 0:
        raise SystemExit(f"the load process failed (exit {load.returncode}); see its output above")
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    window = figures["window"]
    figures["memory"] = memory_figures(samples, window["start"], window["end"])
    figures["memory"]["every_s"] = every
    server_log = log_path.read_text(encoding="utf-8", errors="replace")
    figures["server"] = {
        "exit": server.process.returncode,
        "tracebacks": server_log.count("Traceback"),
        "log_tail": server_log[-1500:] if server_log.strip() else "",
    }
    return figures


def verdict(figures: dict[str, Any]) -> dict[str, Any]:
    """The pass/fail rules, applied: errors, lost jobs, memory growth."""
    errors = figures["load_errors"] + figures["warmup_errors"] + figures["drain_errors"]
    ratio = figures["memory"]["ratio"]
    problems = []
    if errors:
        problems.append(f"{errors} errors")
    if figures["jobs"]["lost"]:
        problems.append(f"{figures['jobs']['lost']} lost jobs")
    if ratio is None:
        problems.append("too few memory samples")
    elif ratio > MEMORY_LIMIT:
        problems.append(f"memory grew {ratio:.2f}x (limit {MEMORY_LIMIT})")
    return {
        "errors": errors,
        "memory_flat": ratio is not None and ratio <= FLAT,
        "ok": not problems,
        "problems": problems,
    }


def _print_report(summary: dict[str, Any]) -> None:
    print(f"\n  {summary['clients']} clients for {summary['seconds']:.0f} s from a second process")
    print(f"  {'kind':<9}{'requests':>9}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
          "  statuses")  # fmt: skip
    for kind, row in summary["kinds"].items():
        cells = "".join(f"{row[k]:>9.1f}" if row[k] is not None else f"{'-':>9}"
                        for k in ("p50_ms", "p95_ms", "p99_ms"))  # fmt: skip
        statuses = " ".join(f"{code}:{n}" for code, n in sorted(row["statuses"].items()))
        print(f"  {kind:<9}{row['requests']:>9}{row['errors']:>8}{cells}  {statuses}")
    print(f"  {'total':<9}{summary['requests']:>9}{summary['load_errors']:>8}")
    rate = summary["throughput"]
    print(
        f"  throughput: first {rate['window_s']:.0f} s {rate['first_rps']:.1f} req/s, last "
        f"{rate['window_s']:.0f} s {rate['last_rps']:.1f} req/s: ratio last/first "
        f"{rate['ratio']:.2f} (baseline: the first minute of this run)"
    )
    jobs = summary["jobs"]
    print(
        f"  jobs: {jobs['submitted']} submitted, {jobs['done']} done, {jobs['failed']} failed, "
        f"{jobs['lost']} lost (drained in {jobs['drained_in_s']:.0f} s, grace "
        f"{jobs['grace_s']:.0f} s); server's crowdsift_jobs gauge: {jobs['server']}"
    )
    memory = summary["memory"]
    if memory["ratio"] is not None:
        print(
            f"  server memory (VmRSS every {memory['every_s']:.1f} s): first "
            f"{memory['window_s']:.0f} s median {memory['first_mb']:.0f} MB, last "
            f"{memory['last_mb']:.0f} MB, max {memory['max_mb']:.0f} MB: ratio "
            f"{memory['ratio']:.2f} ({'flat' if summary['memory_flat'] else 'NOT flat'}: "
            f"flat <= {FLAT}, fails > {MEMORY_LIMIT})"
        )
    server = summary["server"]
    print(
        f"  warm-up {summary['warmup_s']:.0f} s with {summary['warmup_errors']} errors, drain "
        f"errors {summary['drain_errors']}, server tracebacks {server['tracebacks']}"
    )
    for sample in summary["error_samples"]:
        print(f"    error: {sample}")
    if server["tracebacks"]:
        print("  server log (tail):\n" + server["log_tail"])
    print(f"  soak: {'OK' if summary['ok'] else 'FAILED: ' + ', '.join(summary['problems'])}")


def main(argv: Sequence[str] = ()) -> dict[str, Any]:
    args = parse_args(argv)
    if args.load:
        _load_main(args)
        return {"ok": True}
    with tempfile.TemporaryDirectory(prefix="crowdsift-soak-") as tmp:
        home = Path(tmp)
        env = service_env(
            home,
            CROWDSIFT_SOURCE="archive",
            CROWDSIFT_JOB_WORKERS="2",
            CROWDSIFT_FEED_EMBEDDER=args.embedder,
        )
        _build_index(env)
        figures = _drive(args, env, home)
    summary = {**figures, **verdict(figures)}
    _print_report(summary)
    summary["server"].pop("log_tail")
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    raise SystemExit(0 if main(sys.argv[1:])["ok"] else 1)
