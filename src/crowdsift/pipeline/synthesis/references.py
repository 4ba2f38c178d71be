"""Every reference in an engine's text, checked against the evidence (pure).

An engine may cite or point in many shapes: ``[post:ID]``, ``[comment:ID]``, a list
``[post:a, comment:b]``, ``[t1_ID]``, a bare ``post:ID``, a footnote ``[3]``, a Markdown link,
a bare URL. ``Ledger.clean`` reads them all in one pass (so reports follow reading order):
references to evidence items become the stored markers ``[post:ID]`` / ``[comment:ID]`` (or,
in a claim, move into its citations); every other reference is removed and reported. Text the
grounding check keeps can therefore only ever point at the evidence.
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
        entries: list[EvidenceEntry] = []
        before = len(self.removed)
        text = _CONTROL.sub("", text if self.verbatim else sanitize_escapes(text))

        def slot(entry: EvidenceEntry) -> str:
            entries.append(entry)
            return f"\x00{len(entries) - 1}\x01"

        def markdown(match: re.Match[str]) -> str:
            label, target = match.group("label"), match.group("target")
            entry = self.index.resolve_cite(target)
            if entry is None:
                if not LINK.fullmatch(target):
                    return match.group(0)  # not a web link: leave it alone
                self.remove(target.rstrip(TRAILING), where)
                return gap + ("" if _NUMBERED.match(label.strip()) else label)
            return f"{'' if _NUMBERED.match(label.strip()) else label} {slot(entry)}"

        def bracket(match: re.Match[str]) -> str:
            parts = split_group(match.group("inner"))
            if not parts or not _is_marker(parts, self.index):
                return match.group(0)
            slots: list[str] = []
            for part in parts:
                entry = self.index.resolve_cite(part)
                if entry is None:
                    self.remove(f"[{part}]" if part.isdigit() else part, where)
                    slots.append(gap)
                else:
                    slots.append(slot(entry))
            return "".join(slots)

        def link(match: re.Match[str]) -> str:
            whole = match.group(0)
            bare = whole.rstrip(TRAILING + "”’»…")
            entry = self.index.resolve_cite(bare)
            if entry is None and self.verbatim:
                return whole  # a link the quoted person wrote: their words, not a citation
            if entry is None:
                self.remove(bare, where)
                return gap + whole[len(bare) :]
            if claim:
                entries.append(entry)
                return whole
            return slot(entry) + whole[len(bare) :]

        def bare(match: re.Match[str]) -> str:
            entry = self.index.resolve_cite(match.group(0))
            if entry is None:
                self.remove(match.group(0), where)
                return gap
            return slot(entry)

        handlers = {"markdown": markdown, "bracket": bracket, "link": link, "bare": bare}
        text = _TOKEN.sub(lambda m: handlers[str(m.lastgroup)](m), text)
        if claim:
            text = _SLOT.sub("", text)
        else:
            text = _SLOT.sub(lambda m: entry_marker(entries[int(m.group(1))]), text)
            text = _tidy_markers(text)
        if len(self.removed) > before or claim:
            text = tidy(text)
        return text.strip(), list(dict.fromkeys(entries))


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
