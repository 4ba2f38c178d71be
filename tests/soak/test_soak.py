"""``bench/soak.py`` (``make soak``) run short: a real ``crowdsift serve`` under 4 clients from a
second process. The soak's own verdict must pass, and its JSON summary must show every kind of
request answered and the jobs submitted during the load finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

SOAK = REPO / "bench" / "soak.py"
KINDS = ("research", "status", "feed", "fetch", "healthz", "metrics")


def test_a_short_soak_answers_every_kind_and_loses_no_job(tmp_path: Path) -> None:
    env = {**os.environ, "SOAK_SECONDS": "15", "SOAK_CLIENTS": "4", "TMPDIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, str(SOAK), "--grace", "120", "--embedder", "hashing"],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    output = f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    assert run.returncode == 0, output
    summary = json.loads(run.stdout.strip().splitlines()[-1])

    assert summary["clients"] == 4
    assert summary["errors"] == 0, summary["error_samples"]
    for kind in KINDS:
        row = summary["kinds"][kind]
        assert row["answered"] >= 1, (kind, row)
        assert row["errors"] == 0, (kind, row)
    jobs = summary["jobs"]
    assert jobs["submitted"] >= 1
    assert jobs["lost"] == 0
    assert jobs["done"] >= 1, jobs
    assert jobs["done"] + jobs["failed"] == jobs["submitted"]
    # The server's own count agrees: nothing left queued or running, every job accounted for
    # (the load's jobs plus the warm-up's).
    server = jobs["server"]
    assert server["queued"] == server["running"] == 0, server
    warmup = sum(jobs["warmup"].values())
    assert server["done"] + server["failed"] == jobs["submitted"] + warmup, jobs
    assert summary["memory"]["samples"] >= 3 and summary["memory"]["ratio"] > 0
    assert summary["throughput"]["first_rps"] > 0 and summary["throughput"]["last_rps"] > 0
    assert summary["server"]["tracebacks"] == 0
    # The human-readable table comes before the JSON line.
    assert "throughput: first" in run.stdout and "soak: OK" in run.stdout
