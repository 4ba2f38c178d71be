"""One benchmark figure: a measurement, its baseline from the same run, its target, its verdict.

Every ``bench_*.py`` ``main()`` returns a dict; the figures a reader should judge go under the
key ``"figures"`` as ``Figure`` objects, and ``bench/run.py`` ends ``make bench`` with one
table of them. A ratio is ``value / baseline``; the target says which way is good, so the
verdict needs no reading of prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Figure:
    """``name``: what was timed; ``value`` and ``baseline`` in ``unit``, measured in one run;
    ``target``: the ratio the issue asks for, ``at_most`` (lower is better) or ``at_least``."""

    bench: str
    name: str
    value: float
    baseline: float
    unit: str
    target: float | None
    direction: Literal["at_most", "at_least"] = "at_most"
    baseline_name: str = "baseline"

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "info"
        ok = self.ratio <= self.target if self.direction == "at_most" else self.ratio >= self.target
        return "PASS" if ok else "FAIL"

    @property
    def target_text(self) -> str:
        if self.target is None:
            return "-"
        return f"{'≤' if self.direction == 'at_most' else '≥'} {self.target:g}"


def table(figures: list[Figure]) -> str:
    """The closing table of ``make bench``: one row per figure."""
    header = ("bench", "figure", "value", "baseline", "ratio", "target", "verdict")
    rows = [
        (
            f.bench,
            f.name,
            f"{f.value:.3g} {f.unit}",
            f"{f.baseline:.3g} {f.unit} ({f.baseline_name})",
            f"{f.ratio:.2f}",
            f.target_text,
            f.verdict,
        )
        for f in figures
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def exit_code(figures: list[Figure]) -> int:
    """What a benchmark run on its own exits with: 1 when any figure missed its target."""
    return 1 if any(f.verdict == "FAIL" for f in figures) else 0
