"""What the service benchmarks share: a clean environment, ``crowdsift serve`` started as a
subprocess on a free loopback port and stopped the way Ctrl-C stops it, and percentiles.

Used by ``bench_service.py`` (throughput ratio) and ``soak.py`` (bounded load for minutes).
Not a benchmark itself, so ``run.py`` does not list it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import repo_root  # noqa: F401 - puts the repository root (tests.support) on sys.path

_INTERESTS_TEXT = """
impact driver|voice recorder|airflow pipeline|local coding stack|drywall anchors|meeting notes
transcription|cordless drill|data warehouse|paint primer|noise cancelling|dbt models|router
"""
#: Feed interests that match the bundled demo archive's topics.
INTERESTS = [part.strip() for part in _INTERESTS_TEXT.replace("\n", "|").split("|") if part.strip()]

#: Variables a developer's shell may carry that would point the server elsewhere (a real
#: database, a broker, Reddit credentials, an API key): a benchmark must not inherit them.
_INHERITED_PREFIXES = ("CROWDSIFT_", "REDDIT_", "YOUTUBE_", "AMAZON_", "OTEL_")


def service_env(home: Path, **overrides: str) -> dict[str, str]:
    """This environment without crowdsift's own settings, then: everything under ``home``
    (SQLite job database, demo archive, feed index), local engine, quiet logs, no network."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_PREFIXES)}
    return {
        **base,
        "CROWDSIFT_HOME": str(home),
        "CROWDSIFT_ENGINE": "local",
        "CROWDSIFT_SOURCE": "archive",  # the bundled sample: never the live Arctic Shift
        "CROWDSIFT_LOG_LEVEL": "ERROR",
        "HF_HUB_OFFLINE": "1",
        **overrides,
    }


def wait_ready(base: str, timeout: float = 120.0) -> None:
    """Until ``GET /healthz`` answers 200; SystemExit naming the URL if it never does."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"crowdsift serve did not answer at {base} within {timeout} s")


@dataclass(frozen=True)
class Served:
    """A running ``crowdsift serve``: where it answers and its process (for its pid)."""

    base: str
    process: subprocess.Popen[bytes]


@contextmanager
def serve(env: dict[str, str], *, log: IO[bytes] | None = None) -> Iterator[Served]:
    """``crowdsift serve`` on a free port, ready when this yields; on exit it gets SIGINT (a
    graceful stop: running jobs finish) and is killed if it takes over two minutes.

    ``log`` receives the server's stderr (discarded when None)."""
    from tests.support.net import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "crowdsift", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log if log is not None else subprocess.DEVNULL,
    )
    try:
        wait_ready(base)
        yield Served(base, process)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
