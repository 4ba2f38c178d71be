"""Every reference in an engine's text, checked against the evidence (pure).

An engine may cite or point in many shapes: ``[post:ID]``, ``[comment:ID]``, a list
``[post:a, comment:b]``, ``[t1_ID]``, a bare ``post:ID``, a footnote ``[3]``, a Markdown link,
a bare URL. ``Ledger.clean`` reads them all in one pass (so reports follow reading order):
references to evidence items become markers ``[post:ID]`` / ``[comment:ID]`` (or, in a claim,
move into its citations); every other reference is removed and reported. Text the grounding
check keeps can therefore only ever point at the evidence, and its markers are all written
here, so grounding reads the kept text into claims and citation lists exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from crowdsift.core.citations import ID, Kind, marker, split_group, tidy
from crowdsift.core.text import sanitize_escapes
from crowdsift.pipeline.synthesis.evidence import LINK, TRAILING, EvidenceEntry, EvidenceIndex

_TOKEN = re.compile(
    r"(?P<markdown>\[(?P<label>[^\[\]\n]*)\]\(\s*<?(?P<target>[^()\s<>]+)>?\s*\))"
    r"|(?P<bracket>\[(?P<inner>[^\[\]\n]{1,300})\])"
    rf"|(?P<link>{LINK.pattern})"
    rf"|(?P<bare>(?<![\w/:])(?:post|comment):{ID}(?![\w-]))",
    re.IGNORECASE,
)
_EXPLICIT = re.compile(r"^(?:(?:post|comment)\s*:|t[13]_)", re.IGNORECASE)
_NUMBERED = re.compile(r"^\d{1,3}$")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SLOT = re.compile("\x00(\\d+)\x01")


def entry_marker(entry: EvidenceEntry) -> str:
    """The stored marker of an evidence item."""
    kind: Kind = "post" if entry.kind == "thread" else "comment"
    return marker(kind, entry.id)


@dataclass
class Ledger:
    """One check's bookkeeping: what was removed (with the problems to report) and which
    evidence items the kept text cites, in first-citation order."""

    index: EvidenceIndex
    verbatim: bool = False
    """The text quotes the evidence character for character (the local engine): it holds no
    escapes a model left, a path's backslashes (``\\build\\bin``) are the evidence's own, and
    so is a link a quoted reply holds (it is kept as written, and cites nothing)."""
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cited: dict[tuple[str, str], EvidenceEntry] = field(default_factory=dict)

    def remove(self, what: str, where: str) -> None:
        if what.startswith(("http", "www.")) or "." in what.split("/")[0]:
            problem = f"removed link {what!r} from {where}: not an evidence permalink"
        elif what.startswith("[") and _NUMBERED.match(what.strip("[]")):
            problem = f"removed {what!r} from {where}: cite evidence as [post:ID]/[comment:ID]"
        else:
            problem = f"removed citation of unknown {what!r} from {where}"
        if what not in self.removed:
            self.removed.append(what)
        if problem not in self.problems:
            self.problems.append(problem)

    def cite(self, entries: Sequence[EvidenceEntry]) -> None:
        for entry in entries:
            self.cited.setdefault((entry.kind, entry.id), entry)

    def resolve(self, cites: Sequence[str], where: str) -> list[EvidenceEntry]:
        """Known entries of ``cites`` (each once, in order); unknown ones reported."""
        found: dict[tuple[str, str], EvidenceEntry] = {}
        for cite in cites:
            entry = self.index.resolve_cite(cite)
            if entry is None:
                if cite.strip():
                    self.remove(cite.strip().strip("[]").strip(), where)
                continue
            found.setdefault((entry.kind, entry.id), entry)
        return list(found.values())

    def clean(
        self, text: str, where: str, *, claim: bool, gap: str = ""
    ) -> tuple[str, list[EvidenceEntry]]:
        """``text`` with escapes decoded, control characters dropped, foreign references
        removed (and reported), and the entries it cites.

        In cited text (``claim=False``: summary, highlights, cautions) every reference to the
        evidence becomes its stored marker. In a claim (``claim=True``) markers are taken out
        into the returned entries, and bare evidence permalinks stay as written. ``gap`` is
        left where a reference was removed, so a caller can tell which sentences lost one.
        """
        before = len(self.removed)
        text = _CONTROL.sub("", text if self.verbatim else sanitize_escapes(text))
        cleaner = _Cleaner(self, where, claim=claim, gap=gap)
        text = _TOKEN.sub(cleaner.replace, text)
        entries = cleaner.entries
        if claim:
            text = _SLOT.sub("", text)
        else:
            text = _SLOT.sub(lambda m: entry_marker(entries[int(m.group(1))]), text)
            text = _tidy_markers(text)
        if len(self.removed) > before or claim:
            text = tidy(text)
        return text.strip(), list(dict.fromkeys(entries))


@dataclass
class _Cleaner:
    """One ``Ledger.clean`` pass: each reference token replaced, the entries it cites kept in
    order (a cited one leaves a slot, ``\\x00n\\x01``, that ``clean`` turns into its marker)."""

    ledger: Ledger
    where: str
    claim: bool
    gap: str
    entries: list[EvidenceEntry] = field(default_factory=list)

    def replace(self, match: re.Match[str]) -> str:
        handler = {
            "markdown": self.markdown, "bracket": self.bracket, "link": self.link, "bare": self.bare
        }[str(match.lastgroup)]  # fmt: skip
        return handler(match)

    def slot(self, entry: EvidenceEntry) -> str:
        self.entries.append(entry)
        return f"\x00{len(self.entries) - 1}\x01"

    def markdown(self, match: re.Match[str]) -> str:
        label, target = match.group("label"), match.group("target")
        entry = self.ledger.index.resolve_cite(target)
        if entry is None:
            if not LINK.fullmatch(target):
                return match.group(0)  # not a web link: leave it alone
            self.ledger.remove(target.rstrip(TRAILING), self.where)
            return self.gap + ("" if _NUMBERED.match(label.strip()) else label)
        return f"{'' if _NUMBERED.match(label.strip()) else label} {self.slot(entry)}"

    def bracket(self, match: re.Match[str]) -> str:
        parts = split_group(match.group("inner"))
        if not parts or not _is_marker(parts, self.ledger.index):
            return match.group(0)
        slots: list[str] = []
        for part in parts:
            entry = self.ledger.index.resolve_cite(part)
            if entry is None:
                self.ledger.remove(f"[{part}]" if part.isdigit() else part, self.where)
                slots.append(self.gap)
            else:
                slots.append(self.slot(entry))
        return "".join(slots)

    def link(self, match: re.Match[str]) -> str:
        whole = match.group(0)
        bare = whole.rstrip(TRAILING + "”’»…")
        entry = self.ledger.index.resolve_cite(bare)
        if entry is None and self.ledger.verbatim:
            return whole  # a link the quoted person wrote: their words, not a citation
        if entry is None:
            self.ledger.remove(bare, self.where)
            return self.gap + whole[len(bare) :]
        if self.claim:
            self.entries.append(entry)
            return whole
        return self.slot(entry) + whole[len(bare) :]

    def bare(self, match: re.Match[str]) -> str:
        entry = self.ledger.index.resolve_cite(match.group(0))
        if entry is None:
            self.ledger.remove(match.group(0), self.where)
            return self.gap
        return self.slot(entry)


def _is_marker(parts: Sequence[str], index: EvidenceIndex) -> bool:
    """A bracket is a citation when a part is typed (``post:``, ``t1_``), when it holds only
    numbers (footnotes that point nowhere), or when every part is a known id. "[edit]" stays."""
    if any(_EXPLICIT.match(p) for p in parts) or all(p.isdigit() for p in parts):
        return True
    return all(index.resolve_cite(p) is not None for p in parts)


_MARK = r"\[(?:post|comment):[^\]\s]+\]"


def _tidy_markers(text: str) -> str:
    """One space before a run of markers, none inside it or before punctuation, no repeats."""
    text = re.sub(rf"(?<=[^\s\]])(?={_MARK})", " ", text)
    text = re.sub(rf"({_MARK})[ \t]+(?={_MARK})", r"\1", text)
    text = re.sub(rf"({_MARK})(?:\1)+", r"\1", text)
    text = re.sub(rf"({_MARK})[ \t]+(?=[.,;:!?])", r"\1", text)
    return "\n".join(" ".join(line.split()) for line in text.splitlines())
