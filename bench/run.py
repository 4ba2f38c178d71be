"""Run every benchmark and print each figure as a ratio against its same-run baseline.

    make bench            # or: python bench/run.py [filtering|import|fetch ...]

Absolute times are not comparable across these noisy shared machines; ratios are.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from figures import Figure, table

HERE = Path(__file__).parent
BENCHES = {
    "filtering": "bench_filtering.py",
    "import": "bench_import.py",
    "scale": "bench_scale.py",
    "fetch": "bench_fetch.py",
    "ask": "bench_ask.py",
    "map": "bench_map.py",
    "feed": "bench_feed.py",
    "reddit": "bench_reddit.py",
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


def _run_one(name: str) -> tuple[list[Figure], str | None]:
    """One benchmark's figures, or why it produced none.

    A benchmark that finds its own measurement invalid (a side served from a cache, a failed
    request) raises ``SystemExit`` with the reason: that is an error in the table's footer, not
    a figure, and the other benchmarks still run.
    """
    try:
        result = _load(BENCHES[name])()
    except SystemExit as exc:
        return [], str(exc.code) if exc.code not in (None, 0) else f"bench_{name} exited early"
    except Exception as exc:  # one broken benchmark must not hide the others' figures
        traceback.print_exc()
        return [], f"{type(exc).__name__}: {exc}"
    figures = result.get("figures", []) if isinstance(result, dict) else []
    if not figures:
        return [], f"bench_{name} returned no figures"
    return list(figures), None


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHES)}", file=sys.stderr)
        return 2
    figures: list[Figure] = []
    errors: list[str] = []
    for name in names or list(BENCHES):
        print(f"== {name}", flush=True)
        found, error = _run_one(name)
        figures.extend(found)
        if error:
            print(f"{name}: ERROR {error}", file=sys.stderr, flush=True)
            errors.append(f"{name}: {error}")
    if figures:
        print("\n== summary\n" + table(figures), flush=True)
    for error in errors:
        print(f"ERROR {error}", flush=True)
    failed = [f"{f.bench}: {f.name}" for f in figures if f.verdict == "FAIL"]
    if failed:
        print(f"{len(failed)} figure(s) missed their target: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed or errors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
