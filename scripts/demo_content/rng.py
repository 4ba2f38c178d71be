"""A small PRNG of our own, so the demo files never change with the Python version.

``random.Random`` only promises a stable ``random()`` stream; ``choice``/``shuffle`` and the
float helpers may change between releases. SplitMix64 plus integer arithmetic and IEEE
operations that are exactly rounded (+, -, *, /, sqrt) keep every build byte-identical.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
MASK = (1 << 64) - 1
TWO_53 = float(1 << 53)


class Rng:
    """SplitMix64: tiny, fast, well distributed, and trivially reproducible."""

    def __init__(self, seed: int) -> None:
        self._state = seed & MASK

    @classmethod
    def keyed(cls, *parts: object) -> Rng:
        """An independent stream per key, so editing one thread never reshuffles the others."""
        digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).digest()
        return cls(int.from_bytes(digest[:8], "big"))

    def next64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """Uniform in [0, 1)."""
        return (self.next64() >> 11) / TWO_53

    def unit(self) -> float:
        """Uniform in (0, 1], safe to divide by."""
        return ((self.next64() >> 11) + 1) / TWO_53

    def below(self, n: int) -> int:
        return self.next64() % n

    def between(self, low: int, high: int) -> int:
        """Inclusive on both ends."""
        return low + self.below(high - low + 1)

    def chance(self, p: float) -> bool:
        return self.random() < p

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        target = self.random() * sum(weights)
        for item, weight in zip(items, weights, strict=True):
            target -= weight
            if target < 0:
                return item
        return items[-1]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def heavy(self, scale: float, cap: int) -> int:
        """Heavy-tailed (Pareto, alpha 1) integer: most values small, a few very large."""
        return min(cap, int(scale / self.unit()))

    def soft_heavy(self, scale: float, cap: int) -> int:
        """Pareto with alpha 2: a tail, but a tamer one (sqrt is exactly rounded)."""
        return min(cap, int(scale / math.sqrt(self.unit())))


class Deck:
    """Deals a pool in shuffled order and reshuffles when empty, so repeats spread out."""

    def __init__(self, rng: Rng, pool: Sequence[str]) -> None:
        self._rng = rng
        self._pool = tuple(pool)
        self._cards: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._pool)

    def draw(self, said: set[str] | None = None) -> str:
        """Next card, skipping ones already ``said`` in this thread while the pool allows it.

        The card drawn is added to ``said``, so one thread never repeats a sentence.
        """
        card = ""
        for _ in range(len(self._pool) + 1):
            if not self._cards:
                self._cards = self._rng.shuffled(self._pool)
            card = self._cards.pop()
            if said is None or card not in said:
                break
        if said is not None:
            said.add(card)
        return card
