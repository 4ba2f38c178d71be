"""Many ``crowdsift ask`` processes, one fresh data directory: every one of them answers.

The real CLI, four processes started at once: they build the demo archive, the comment store,
the caches and the salt together (one of them used to die with "table comments already
exists"). Each round takes a new data directory, so each round is a first start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
ASK = [
    sys.executable,
    "-m",
    "crowdsift",
    "ask",
    QUESTION,
    "--engine",
    "local",
    "--source",
    "archive",
]
PROCESSES, ROUNDS = 4, 2


def test_four_asks_started_together_on_a_fresh_data_directory_all_exit_0(
    tmp_path: Path,
) -> None:
    for round_ in range(ROUNDS):
        home = tmp_path / f"home-{round_}"
        env = {**os.environ, "CROWDSIFT_HOME": str(home)}
        logs = [tmp_path / f"round-{round_}-{n}.log" for n in range(PROCESSES)]
        processes = []
        for log in logs:
            with log.open("wb") as out:
                processes.append(
                    subprocess.Popen(
                        ASK,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        env=env,
                    )
                )
        try:
            codes = [process.wait(timeout=240) for process in processes]
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        failed = [log.read_text()[-1500:] for log, code in zip(logs, codes, strict=True) if code]
        assert failed == [], f"round {round_}, exits {codes}: {failed[0]}"
        assert all("Sources:" in log.read_text() for log in logs)  # each one answered
