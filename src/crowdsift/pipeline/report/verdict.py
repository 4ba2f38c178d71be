"""The stance counts of a comparison row, read back from its one documented verdict format (pure).

``ComparisonRow`` carries its counts only inside ``verdict``, written by
``crowdsift.pipeline.synthesis.specifics.verdict``: ``"7 mentions: mostly positive (4+ / 1−)"``
(``"1 reply: …"`` / ``"4 replies: …"`` for the replies of a buying question). A report's chart
needs the numbers, so this reads that one format and nothing else: an LLM's own wording is not
guessed at — its row simply has no bar (``None``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERDICT = re.compile(
    r"^\s*(?P<total>\d{1,6}) (?:mentions?|repl(?:y|ies)): (?P<mood>[^()]*?) "
    r"\((?P<positive>\d{1,6})\+ / (?P<negative>\d{1,6})[−-]\)\s*$"
)
"""``<n> mention(s)|reply|replies: <mood> (<p>+ / <q>−)``; a plain hyphen is read as the minus."""


@dataclass(frozen=True)
class StanceCounts:
    """How many sentences (or replies) named an option, and how many took each side."""

    total: int
    positive: int
    negative: int
    mood: str

    @property
    def neutral(self) -> int:
        """Those that named the option without taking a side."""
        return max(self.total - self.positive - self.negative, 0)


def parse_verdict(verdict: str) -> StanceCounts | None:
    """The counts of a verdict in the documented format, else None.

    A verdict whose sides add up to more than its total is not one ``specifics.verdict``
    wrote (it counts sides among the mentions), so it is refused rather than drawn wrong."""
    match = _VERDICT.match(verdict)
    if match is None:
        return None
    total, positive, negative = (int(match[k]) for k in ("total", "positive", "negative"))
    if positive + negative > total:
        return None
    return StanceCounts(total, positive, negative, match["mood"].strip())
