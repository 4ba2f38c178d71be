"""The citation syntax, in one place: ``[post:ID]`` and ``[comment:ID]`` (pure).

Text that cites evidence (an engine's draft, an answer's JSON, expert answers) does it with
markers that name an item by kind and id: ``[post:1abc]`` a Reddit thread, a YouTube video
(``[post:yt-dQw4w9WgXcQ]``), an Amazon product (``[post:amzn-B0ABC12345]``) or a channel post
(``[post:42]``); ``[comment:k9x]`` a comment. Ids are letters, digits, ``-`` and ``_``. A list
``[post:a, comment:b]`` is several markers. People never see the ids: renderers number the
markers into one source list (``SourceNumbers``) and print ``[n]``.

Every module that writes, parses, checks or displays citations uses this one: the grammar,
``citations_in``, ``remove_markers``, ``strip_quoted_citations`` (what an extractive quote must
lose) and the display numbering. A checked answer's texts are stored as claims and citation
lists (``crowdsift.pipeline.synthesis.cited``), read from markers once; renderers number those
lists with ``SourceNumbers.number`` rather than running ``SourceNumbers.text`` over a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, NamedTuple

from crowdsift.core.text import url_key

Kind = Literal["post", "comment"]

ID = r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}"
"""An evidence id: Reddit base36, ``yt-<video id>`` (which may hold ``-`` and ``_``),
``amzn-<ASIN>``, a Telegram message number."""
_KIND = r"(?:post|comment)"
MARKER_GROUP = re.compile(rf"\[\s*{_KIND}\s*:[^\[\]\n]*\]", re.IGNORECASE)
"""A bracket that is meant as citations: ``[post:ID]``, ``[comment:ID]``, ``[post:a, post:b]``
(its parts may still name unknown or malformed ids: checkers decide)."""
_PART = re.compile(rf"^(?:(?P<kind>{_KIND})\s*:\s*)?(?P<id>{ID})$", re.IGNORECASE)
_SEPARATOR = re.compile(r"[,;\s]+")


class Citation(NamedTuple):
    """One cited item: its kind and id, as written."""

    kind: Kind
    id: str

    @property
    def key(self) -> str:
        """The lookup key: ``post:id`` / ``comment:id``, lower case."""
        return f"{self.kind}:{self.id.lower()}"

    def marker(self) -> str:
        return marker(self.kind, self.id)


def marker(kind: Kind, item_id: str) -> str:
    """The marker stored in text: ``[post:ID]`` or ``[comment:ID]``."""
    return f"[{kind}:{item_id}]"


def parse_part(part: str, default: Kind = "post") -> Citation | None:
    """One list item (``post:ID``, ``comment:ID`` or a bare ``ID``), or None when malformed."""
    match = _PART.match(part.strip())
    if match is None:
        return None
    kind = (match.group("kind") or default).lower()
    return Citation("comment" if kind == "comment" else "post", match.group("id"))


def split_group(inner: str) -> list[str]:
    """The parts of a marker group's inside (``post:a, comment:b`` → two parts)."""
    return [part for part in _SEPARATOR.split(inner.strip()) if part]


def citations_in(text: str) -> list[Citation]:
    """Every well-formed citation in ``text``, in reading order, each once."""
    found: dict[str, Citation] = {}
    for group in MARKER_GROUP.finditer(text):
        kind: Kind = "post"
        for part in split_group(group.group(0)[1:-1]):
            citation = parse_part(part, kind)
            if citation is not None:
                kind = citation.kind  # "[comment:a, b]": b is a comment too
                found.setdefault(citation.key, citation)
    return list(found.values())


def cited_ids(text: str, kind: Kind = "post") -> list[str]:
    """The ids of ``kind`` cited in ``text``, in order, each once."""
    return [c.id for c in citations_in(text) if c.kind == kind]


def tidy(text: str) -> str:
    """Close the gaps removed markers leave ("a claim [post:x]." → "a claim."), keep lines."""
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", text).strip()


def remove_markers(text: str) -> str:
    """``text`` without its citation markers: what a reader reads as prose."""
    if "[" not in text:
        return text
    return tidy(MARKER_GROUP.sub("", text))


_QUOTED_ID = r"(?:t[13]_[a-z0-9]+|[a-z0-9_-]*\d[a-z0-9_-]*)"
_QUOTED_CITATION = re.compile(
    rf"[ \t]*(?:{MARKER_GROUP.pattern}"  # [post:ID], [comment:ID], lists
    rf"|\[\s*{_QUOTED_ID}(?:\s*[,;]\s*{_QUOTED_ID})*\s*\]"  # [3], [t1_ID], [ab12c]
    rf"|(?<![\w/:]){_KIND}:{ID}(?![\w-]))",  # a bare post:ID
    re.IGNORECASE,
)


def strip_quoted_citations(text: str) -> str:
    """``text`` without anything that reads as a citation: ``[post:ID]``, ``[comment:ID]``,
    ``[3]``, ``[t1_ID]``, a bracketed id, a bare ``post:ID``.

    Extractive strategies quote strangers and then cite the quote's own item. A marker the
    author typed inside the quote would otherwise become a second citation — of a real post
    that never said it ("[post:ok1]" in someone else's thread) — so quotes lose them first.
    """
    if not _QUOTED_CITATION.search(text):
        return text
    stripped = _QUOTED_CITATION.sub("", text)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", stripped).strip()


# --- numbering for display ----------------------------------------------------------------------


class SourceNumbers:
    """One numbered source list for a reader: each entry's citation keys and URL → ``n``.

    Built in display order; an entry may be reached by several keys (a post by ``post:ID``, its
    permalink by URL). ``text`` turns markers into ``[n]`` (unknown ones vanish: a number that
    points nowhere is worse than none), ``of_urls`` numbers a claim's permalinks.
    """

    def __init__(self) -> None:
        self._keys: dict[str, int] = {}
        self._urls: dict[str, int] = {}
        self.count = 0

    def add(self, keys: Iterable[str], url: str) -> int:
        """The number of the entry with ``keys``/``url``: an existing one, else the next."""
        keys = [key.lower() for key in keys]
        found = self._urls.get(url_key(url)) if url else None
        found = found or next((self._keys[k] for k in keys if k in self._keys), None)
        if found is None:
            self.count += 1
            found = self.count
        for key in keys:
            self._keys.setdefault(key, found)
        if url:
            self._urls.setdefault(url_key(url), found)
        return found

    def register(self, key: str, number: int) -> None:
        """Map one more key to an existing number (or a number chosen by the caller)."""
        self._keys.setdefault(key.lower(), number)
        self.count = max(self.count, number)

    def has(self, keys: Iterable[str], url: str = "") -> bool:
        return any(k.lower() in self._keys for k in keys) or (
            bool(url) and url_key(url) in self._urls
        )

    def number(self, citation: Citation) -> int | None:
        return self._keys.get(citation.key)

    def of_urls(self, urls: Iterable[str]) -> list[int]:
        """The numbers of ``urls`` that are in the list, in order, each once."""
        numbers = [self._urls.get(url_key(url)) for url in urls]
        return list(dict.fromkeys(n for n in numbers if n is not None))

    def text(self, text: str) -> str:
        """``text`` with every marker as ``[n]``; unknown markers removed, repeats folded."""

        def replace(group: re.Match[str]) -> str:
            numbers: list[int] = []
            kind: Kind = "post"
            for part in split_group(group.group(0)[1:-1]):
                citation = parse_part(part, kind)
                if citation is None:
                    continue
                kind = citation.kind
                number = self.number(citation)
                if number is not None and number not in numbers:
                    numbers.append(number)
            return "".join(f"[{n}]" for n in numbers)

        numbered = MARKER_GROUP.sub(replace, text)
        numbered = re.sub(r"(?<=[^\s\]])(?=\[\d+\])", " ", numbered)
        numbered = re.sub(r"(\[\d+\])[ \t]+(?=\[\d+\])", r"\1", numbered)
        numbered = _RUN.sub(_in_order, numbered)  # "[12][3][12]" reads "[3][12]"
        return tidy(numbered)


_RUN = re.compile(r"(?:\[\d+\])+")


def _in_order(run: re.Match[str]) -> str:
    """A run of adjacent ``[n]`` markers, each number once, ascending."""
    numbers = sorted({int(n) for n in re.findall(r"\d+", run.group(0))})
    return "".join(f"[{n}]" for n in numbers)


def number_citations(text: str, numbers: Mapping[str, int]) -> str:
    """``text`` with ``[post:ID]``/``[comment:ID]`` as ``[n]`` from ``numbers`` (keys
    ``post:id`` / ``comment:id``, or a bare post id; any case); unknown markers removed."""
    table = SourceNumbers()
    for key, number in numbers.items():
        table.register(key if ":" in key else f"post:{key}", number)
    return table.text(text)


# --- references that lead outside the evidence -----------------------------------------------

LINK = re.compile(r"https?://[^\s<>\[\]\"'`]+|www\.[^\s<>\[\]\"'`]+", re.IGNORECASE)
_TRAILING = ".,;:!?)'\""
_FOREIGN_TOKEN = re.compile(
    r"(?P<markdown>\[(?P<label>[^\[\]\n]*)\]\(\s*<?(?P<target>[^()\s<>]+)>?\s*\))"
    r"|(?P<bracket>\[\s*(?P<inner>[^\[\]\n]{1,300}?)\s*\])"
    r"|(?P<link>https?://[^\s<>\[\]()\"'`]+|www\.[^\s<>\[\]()\"'`]+)",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"\d{1,3}(?:\s*[,;]\s*\d{1,3})*")


def remove_foreign(
    text: str,
    *,
    allowed: Callable[[str], bool],
    markers: str,
    quoted: Callable[[str], bool] = lambda _url: False,
) -> tuple[str, list[str]]:
    """``text`` without the references in it that lead outside the evidence, and what went.

    Removed: links to a URL ``allowed`` refuses — a bare link may also stay when ``quoted``
    says it is quoted from the evidence; a Markdown link, which reads as a citation, keeps
    only its label (none if the label is a bare number) —, brackets whose content fully
    matches the regex ``markers`` (citation kinds that are not valid in this text, e.g.
    ``comment:ID`` in an answer that cites posts), and numbered markers ``[n]`` (footnotes
    that point nowhere). Removed items are listed in order, each once; gaps they leave before
    punctuation close.
    """
    foreign = re.compile(markers, re.IGNORECASE)
    removed: list[str] = []

    def drop(what: str, keep: str = "") -> str:
        if what not in removed:
            removed.append(what)
        return keep

    def replace(match: re.Match[str]) -> str:
        if match.group("markdown"):
            label, target = match.group("label").strip(), match.group("target")
            if not LINK.fullmatch(target) or allowed(target):
                return match.group(0)
            return drop(target, "" if _NUMBERED.fullmatch(label) else label)
        if match.group("bracket"):
            inner = match.group("inner")
            if _NUMBERED.fullmatch(inner) or foreign.fullmatch(inner):
                return drop(f"[{inner}]")
            return match.group(0)
        link = match.group("link")
        bare = link.rstrip(_TRAILING + "”’»…")
        return link if allowed(bare) or quoted(bare) else drop(bare, link[len(bare) :])

    cleaned = _FOREIGN_TOKEN.sub(replace, text)
    if removed:
        cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned))
    return cleaned.strip(), removed
