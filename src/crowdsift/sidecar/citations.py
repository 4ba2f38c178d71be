"""Citation checks for the sidecar synthesis: an engine's draft against the drilled evidence.

Pure. Engines cite by short ids (``post:ID``, ``comment:ID``) because they copy ids more
reliably than URLs; nothing they return is trusted. ``check_synthesis`` maps every id to the
evidence permalink it names and removes (and reports) every id and link that is not in the
evidence. A claim left without a valid citation is dropped: an uncited "hidden gem" is exactly
the kind of confident invention the grounding rule exists to stop. Numbers a reader may act on
(a gem's karma, a dissent's votes, when a pivot happened) come from the evidence, never from
the engine's text.

The summary's inline markers become ``[n]``, 1-based indexes into ``sources``; sources are
numbered in first-citation order (summary first), so the summary reads [1], [2], [3] …
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crowdsift.experts.reduce import sanitize_escapes
from crowdsift.sidecar.evidence import LINK, TRAILING, EvidenceEntry, EvidenceIndex
from crowdsift.sidecar.models import (
    ComparisonRow,
    DraftPivot,
    DraftRow,
    HiddenGem,
    MinorityReport,
    PivotAlert,
    SidecarSynthesis,
    SynthesisDraft,
)
from crowdsift.summarizer import grounding

__all__ = ["EvidenceEntry", "EvidenceIndex", "check_synthesis", "truncate_at_sentence"]

_TOKEN = re.compile(
    r"(?P<markdown>\[(?P<label>[^\[\]\n]*)\]\((?P<target>[^()\s]+)\))"
    r"|(?P<bracket>\[(?P<inner>[^\[\]\n]{1,300})\])"
    rf"|(?P<link>{LINK.pattern})"
    r"|(?P<bare>(?<![\w/:])(?:post|comment):[a-z0-9]{1,16}\b)",
    re.IGNORECASE,
)
"""What a text may cite with, in one pass so that numbers and reports follow reading order:
a Markdown link, a bracket (``[post:ID]``, ``[ID, ID]``, ``[n]``), a URL, a bare ``post:ID``."""
_EXPLICIT = re.compile(r"^(?:(?:post|comment)\s*:|t[13]_)", re.IGNORECASE)
_NUMBERED = re.compile(r"\[(\d+)\]")
_SENTENCE_END = re.compile(r"(?:[.!?…]+[\"'”’)\]]*(?:\s*\[\d+\])*|(?:\s*\[\d+\])+)(?=\s|$)")


# --- the check -----------------------------------------------------------------------------


@dataclass
class _Ledger:
    """What one check removed and which entries it cited, in first-citation order."""

    index: EvidenceIndex
    removed: list[str] = field(default_factory=list)
    cited: dict[tuple[str, str], EvidenceEntry] = field(default_factory=dict)

    def remove(self, what: str) -> None:
        if what not in self.removed:
            self.removed.append(what)

    def cite(self, entry: EvidenceEntry) -> int:
        """The 1-based number of ``entry`` in ``sources`` (assigned on first citation)."""
        key = (entry.kind, entry.id)
        if key not in self.cited:
            self.cited[key] = entry
        return list(self.cited).index(key) + 1

    def resolve(self, cites: Sequence[str]) -> list[EvidenceEntry]:
        """Known entries of ``cites`` (each once, in order); unknown ones reported."""
        found: dict[tuple[str, str], EvidenceEntry] = {}
        for cite in cites:
            entry = self.index.resolve_cite(cite)
            if entry is None:
                if cite.strip():
                    self.remove(_report_form(cite))
                continue
            found.setdefault((entry.kind, entry.id), entry)
        return list(found.values())


def _report_form(cite: str) -> str:
    """Removed citations are reported without brackets or surrounding whitespace."""
    return cite.strip().strip("[]").strip()


def check_synthesis(
    draft: SynthesisDraft,
    index: EvidenceIndex,
    *,
    max_gems: int,
    max_dissent: int,
    summary_char_budget: int,
) -> SidecarSynthesis:
    """The checked synthesis: known citations only, numbers from the evidence, caps applied.

    Claims (gems, dissent, pivots, table rows) keep plain text; ``[post:ID]`` markers an engine
    left inside a claim's text are moved into its citations. Caps keep the engine's order.
    """
    ledger = _Ledger(index)
    summary, summary_sources = _check_summary(draft.summary, ledger, summary_char_budget)
    ledger.cited = dict(list(ledger.cited.items())[:summary_sources])
    dropped = 0

    gems: list[HiddenGem] = []
    for claim in draft.hidden_gems:
        checked = _check_claim(claim.text, claim.cites, ledger)
        if checked is None:
            dropped += 1
        elif len(gems) < max_gems:
            text, entries = checked
            gems.append(HiddenGem(text=text, sources=_urls(entries, ledger), score=_best(entries)))

    dissent: list[MinorityReport] = []
    for claim in draft.minority_report:
        checked = _check_claim(claim.text, claim.cites, ledger)
        if checked is None:
            dropped += 1
        elif len(dissent) < max_dissent:
            text, entries = checked
            dissent.append(
                MinorityReport(text=text, sources=_urls(entries, ledger), votes=_best(entries))
            )

    pivots: list[PivotAlert] = []
    for pivot in draft.pivot_alerts:
        alert = _check_pivot(pivot, ledger)
        if alert is None:
            dropped += 1
        else:
            pivots.append(alert)

    table: list[ComparisonRow] = []
    for row in draft.comparison_table:
        checked_row = _check_row(row, ledger)
        if checked_row is None:
            dropped += 1
        else:
            table.append(checked_row)

    return SidecarSynthesis(
        summary=summary,
        hidden_gems=gems,
        minority_report=dissent,
        pivot_alerts=pivots,
        comparison_table=table,
        sources=[entry.source() for entry in ledger.cited.values()],
        removed_citations=ledger.removed,
        dropped_claims=dropped,
    )


def _urls(entries: Sequence[EvidenceEntry], ledger: _Ledger) -> list[str]:
    for entry in entries:
        ledger.cite(entry)
    return [entry.url for entry in entries]


def _best(entries: Sequence[EvidenceEntry]) -> int:
    return max(entry.score for entry in entries)


def _check_claim(
    text: str, cites: Sequence[str], ledger: _Ledger
) -> tuple[str, list[EvidenceEntry]] | None:
    """(plain text, cited entries), or None when no citation survives or no text is left.

    Entries are not numbered here: a claim dropped later (a cap) must not add sources.
    """
    cleaned, inline = _claim_text(text, ledger)
    entries = _merge(ledger.resolve(cites), inline)
    if not entries or not cleaned:
        return None
    return cleaned, entries


def _check_pivot(pivot: DraftPivot, ledger: _Ledger) -> PivotAlert | None:
    checked = _check_claim(pivot.text, pivot.cites, ledger)
    from_option, from_cites = _claim_text(pivot.from_option, ledger)
    to_option, to_cites = _claim_text(pivot.to_option, ledger)
    if checked is None or not from_option or not to_option:
        return None
    text, entries = checked
    entries = _merge(entries, [*from_cites, *to_cites])
    dates = [entry.created_at for entry in entries if entry.created_at is not None]
    return PivotAlert(
        from_option=from_option,
        to_option=to_option,
        text=text,
        sources=_urls(entries, ledger),
        first_seen=min(dates) if dates else None,
        last_seen=max(dates) if dates else None,
    )


def _check_row(row: DraftRow, ledger: _Ledger) -> ComparisonRow | None:
    entries = ledger.resolve(row.cites)
    option, inline = _claim_text(row.option, ledger)
    verdict, more = _claim_text(row.verdict, ledger)
    inline += more
    pros: list[str] = []
    cons: list[str] = []
    for items, target in ((row.pros, pros), (row.cons, cons)):
        for item in items:
            cleaned, more = _claim_text(item, ledger)
            inline += more
            if cleaned:
                target.append(cleaned)
    entries = _merge(entries, inline)
    if not option or not entries:
        return None
    return ComparisonRow(
        option=option, verdict=verdict, pros=pros, cons=cons, sources=_urls(entries, ledger)
    )


def _merge(first: list[EvidenceEntry], more: Iterable[EvidenceEntry]) -> list[EvidenceEntry]:
    return list(dict.fromkeys([*first, *more]))


# --- text cleaning -------------------------------------------------------------------------

_SLOT = re.compile("\x00(\\d+)\x01")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean_text(text: str, ledger: _Ledger, *, summary: bool) -> tuple[str, list[EvidenceEntry]]:
    """``text`` with escapes decoded, control characters dropped, foreign links and unknown
    markers removed (and reported), and every known marker replaced by a slot
    (``\\x00k\\x01``, k indexing the returned entries) for the caller to render.

    Markdown links to the evidence become their label and a slot. Bare evidence permalinks
    become a slot in the summary (whose citations are ``[n]``) and stay as written in claims
    (and count as that claim's citations).
    """
    entries: list[EvidenceEntry] = []
    removed_before = len(ledger.removed)
    text = _CONTROL.sub("", sanitize_escapes(text))

    def slot(entry: EvidenceEntry) -> str:
        entries.append(entry)
        return f"\x00{len(entries) - 1}\x01"

    def markdown(match: re.Match[str]) -> str:
        label, target = match.group("label"), match.group("target")
        entry = ledger.index.resolve_cite(target)
        if entry is None:
            if not LINK.fullmatch(target):
                return match.group(0)  # not a web link: leave it alone
            ledger.remove(target)
            return label
        return f"{label} {slot(entry)}"

    def bracket(match: re.Match[str]) -> str:
        parts = [p for p in re.split(r"[,;\s]+", match.group("inner").strip()) if p]
        if not parts or not _is_marker(parts, ledger.index):
            return match.group(0)
        slots: list[str] = []
        for part in parts:
            entry = ledger.index.resolve_cite(part)
            if entry is None:
                ledger.remove(_report_form(part))
            else:
                slots.append(slot(entry))
        return "".join(slots)

    def link(match: re.Match[str]) -> str:
        whole = match.group(0)
        bare = whole.rstrip(TRAILING)
        entry = ledger.index.resolve_cite(bare)
        if entry is None:
            ledger.remove(bare)
            return whole[len(bare) :]
        if summary:
            return slot(entry) + whole[len(bare) :]
        entries.append(entry)
        return whole

    def bare(match: re.Match[str]) -> str:
        entry = ledger.index.resolve_cite(match.group(0))
        if entry is None:
            ledger.remove(match.group(0))
            return ""
        return slot(entry)

    handlers = {"markdown": markdown, "bracket": bracket, "link": link, "bare": bare}
    text = _TOKEN.sub(lambda m: handlers[str(m.lastgroup)](m), text)
    if len(ledger.removed) > removed_before:
        text = _tidy(text)
    return text.strip(), entries


def _claim_text(text: str, ledger: _Ledger) -> tuple[str, list[EvidenceEntry]]:
    """A claim as plain text on one line; its inline markers become citations."""
    cleaned, entries = _clean_text(text, ledger, summary=False)
    return _tidy(_SLOT.sub("", cleaned)).strip(), entries


def _is_marker(parts: Sequence[str], index: EvidenceIndex) -> bool:
    """A bracket is a citation when a part is typed (``post:``, ``t1_``), when it holds only
    numbers (``[n]`` must mean ours), or when every part is a known id. "[edit]" stays text."""
    if any(_EXPLICIT.match(p) for p in parts) or all(p.isdigit() for p in parts):
        return True
    return all(index.resolve_cite(p) is not None for p in parts)


def _tidy(text: str) -> str:
    """Close the gaps removed markers leave ("a claim [post:x]." → "a claim."), keep lines."""
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", text)


def _check_summary(text: str, ledger: _Ledger, budget: int) -> tuple[str, int]:
    """(the summary with ``[n]`` markers within ``budget``, how many sources it cites)."""
    cleaned, entries = _clean_text(text, ledger, summary=True)
    numbered = _SLOT.sub(lambda m: f"[{ledger.cite(entries[int(m.group(1))])}]", cleaned)
    numbered = truncate_at_sentence(_tidy_numbered(numbered), budget)
    numbers = [int(n) for n in _NUMBERED.findall(numbered)]
    # Numbers are given in order of first appearance, so what survives a cut is exactly 1..max.
    return numbered, max(numbers, default=0)


def _tidy_numbered(text: str) -> str:
    """One space before a run of ``[n]`` markers, none inside it or before punctuation, and no
    number twice in a row."""
    text = re.sub(r"(?<=[^\s\]])(?=\[\d+\])", " ", text)
    text = re.sub(r"(\[\d+\])[ \t]+(?=\[\d+\])", r"\1", text)
    text = re.sub(r"(\[\d+\])(?:\1)+", r"\1", text)
    return re.sub(r"(\[\d+\])[ \t]+(?=[.,;:!?])", r"\1", text)


def truncate_at_sentence(text: str, limit: int) -> str:
    """``text`` cut after its last sentence (with that sentence's ``[n]`` markers) within
    ``limit``; at a word boundary with "…" when even the first sentence is too long."""
    return grounding.truncate_at_sentence(text, limit, sentence_end=_SENTENCE_END)
