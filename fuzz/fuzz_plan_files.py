"""Fuzz target: SearchPlan files as ``crowdsift fetch --plan`` reads them (``load_plan``).

The input is written as the plan file. Findings: anything but a ``PlanError`` escaping, or an
accepted plan that does not survive its own round trip (written back as JSON and read again,
it must be the same plan).

    python fuzz/fuzz_plan_files.py fuzz/corpus/plan_files -max_total_time=30
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    from crowdsift.cli.fetch import load_plan
    from harness import quiet_logs, typed

_WORKDIR = Path(tempfile.mkdtemp(prefix="crowdsift-fuzz-plan-"))
atexit.register(shutil.rmtree, _WORKDIR, ignore_errors=True)


def TestOneInput(data: bytes) -> None:
    path = _WORKDIR / "plan.json"
    path.write_bytes(data)
    plan = typed(load_plan, path)
    if plan is None:
        return
    assert plan.search_terms and plan.subreddits
    path.write_text(plan.model_dump_json(), encoding="utf-8")
    assert load_plan(path) == plan


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
