"""Run every benchmark and print each figure as a ratio against its same-run baseline.

    make bench            # or: python bench/run.py [filtering|import|fetch ...]

Absolute times are not comparable across these noisy shared machines; ratios are.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from figures import Figure, table

HERE = Path(__file__).parent
BENCHES = {
    "filtering": "bench_filtering.py",
    "import": "bench_import.py",
    "fetch": "bench_fetch.py",
    "ask": "bench_ask.py",
    "map": "bench_map.py",
    "feed": "bench_feed.py",
    "sidecar": "bench_sidecar.py",
    "service": "bench_service.py",
}


def _load(filename: str) -> Callable[[], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(filename.removesuffix(".py"), HERE / filename)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load bench/{filename}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    main: Callable[[], dict[str, Any]] = module.main
    return main


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHES)}", file=sys.stderr)
        return 2
    figures: list[Figure] = []
    for name in names or list(BENCHES):
        print(f"== {name}", flush=True)
        result = _load(BENCHES[name])()
        figures.extend(result.get("figures", []) if isinstance(result, dict) else [])
    if figures:
        print("\n== summary\n" + table(figures), flush=True)
    failed = [f"{f.bench}: {f.name}" for f in figures if f.verdict == "FAIL"]
    if failed:
        print(f"{len(failed)} figure(s) missed their target: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
