"""The one numbered source list a person reads (pure).

An answer's claims cite ``post:ID`` / ``comment:ID`` (their JSON writes ``[post:ID]`` markers),
the staff-engineer sections cite permalinks; people read ``[n]``. The list holds every source
once, grouped: a thread (video, product) and under it the comments cited in it, so a comment
never repeats its thread's title. Groups come in the order the reader first meets them; numbers
run 1, 2, … down the list. ``SourceNumbers`` (``crowdsift.core.citations``) maps every citation
and permalink to its number, so the terminal, previews and the web page (which mirrors this in
``static/answer.js``) number alike. A short answer lists only what it cites
(``complete=False``); ``--full`` lists all. What a short answer shows of the text (its opening
claims, each list thinned) is ``CitedText.opening`` and ``CitedText.thin``
(``crowdsift.pipeline.synthesis.cited``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from crowdsift.core.citations import SourceNumbers
from crowdsift.core.models import SUBREDDIT_NAME
from crowdsift.core.text import url_key
from crowdsift.pipeline.synthesis.models import RedditSynthesis, SummarizeResult

_THREAD_ID = re.compile(r"/comments/([A-Za-z0-9]+)(?:/|$)")
_SUBREDDIT = re.compile(rf"/r/({SUBREDDIT_NAME})/")
_COMMENT_URL = re.compile(
    rf"^https://(?:www\.)?reddit\.com/r/(?P<sub>{SUBREDDIT_NAME})/comments/(?P<post>[A-Za-z0-9]+)/"
    r"[^/?#]+/(?P<comment>[A-Za-z0-9]+)/?$"
)


@dataclass(frozen=True)
class ListedSource:
    """One numbered entry: what it is and where it leads."""

    number: int
    label: str
    url: str
    kind: str = "reddit"
    """``reddit``, ``youtube`` or ``amazon`` for a thread, video or product; ``comment``."""


@dataclass(frozen=True)
class SourceGroup:
    """A thread (video, product) and the comments cited in it, shown as one entry.

    ``number`` is None when the thread itself is not a source, only some of its comments.
    """

    where: str
    title: str
    url: str
    number: int | None
    kind: str = "reddit"
    comments: tuple[ListedSource, ...] = ()


@dataclass(frozen=True)
class SourceList:
    """The numbering and the groups to print; ``available`` counts every source there is."""

    numbers: SourceNumbers
    groups: list[SourceGroup]
    available: int

    @property
    def count(self) -> int:
        return sum((g.number is not None) + len(g.comments) for g in self.groups)

    def listed(self) -> list[ListedSource]:
        """Every numbered entry, in number order, with a label that stands alone."""
        flat: list[ListedSource] = []
        for group in self.groups:
            if group.number is not None:
                label = f"{group.where} — {group.title}" if group.where else group.title
                flat.append(ListedSource(group.number, label, group.url, group.kind))
            for comment in group.comments:
                label = f"a comment in “{group.title}”"
                flat.append(ListedSource(comment.number, label, comment.url, "comment"))
        return sorted(flat, key=lambda s: s.number)


@dataclass
class _Entry:
    keys: list[str]
    url: str
    comment: bool
    kind: str
    where: str
    title: str
    group: str = ""
    order: int = 0
    aliases: list[str] = field(default_factory=list)


def _where(kind: str, where: str) -> str:
    if kind == "youtube":
        return f"YouTube · {where}"
    if kind == "amazon":
        return f"Amazon · {where}"
    return f"r/{where}" if where else ""


def _subreddit(url: str) -> str:
    match = _SUBREDDIT.search(url)
    return f"r/{match.group(1)}" if match else ""


def _entries(summary: SummarizeResult | None, synthesis: RedditSynthesis | None) -> list[_Entry]:
    """Every source once (merged by citation key or permalink), each with its group."""
    entries: list[_Entry] = []

    def known(keys: list[str], url: str) -> _Entry | None:
        return next(
            (e for e in entries if set(keys) & set(e.keys) or (url and url_key(url) in e.aliases)),
            None,
        )

    def add(entry: _Entry) -> None:
        found = known(entry.keys, entry.url)
        if found is not None:
            found.keys += [k for k in entry.keys if k not in found.keys]
            return
        entry.order = len(entries)
        entry.aliases = [url_key(entry.url)] if entry.url else []
        entries.append(entry)

    for source in summary.sources if summary else []:
        key = f"post:{source.post_id}".lower()
        where = _where(source.kind, source.subreddit)
        add(_Entry([key], str(source.url), False, source.kind, where, source.title, key))
    for cited in synthesis.sources if synthesis else []:
        comment = cited.kind == "comment"
        key = f"{'comment' if comment else 'post'}:{cited.id}".lower()
        add(_Entry([key], cited.url, comment, "reddit", _subreddit(cited.url), cited.title))
    for entry in entries:
        if not entry.group:
            entry.group = _group_of(entry, entries)
    return entries


def _group_of(entry: _Entry, entries: list[_Entry]) -> str:
    """Threads group by their own key; a comment joins the thread whose permalink contains
    it, else the thread its URL names, else the thread with its title, else its own group."""
    if not entry.comment:
        return entry.keys[0]
    threads = [e for e in entries if not e.comment]
    key = url_key(entry.url)
    for thread in threads:
        if thread.url and key.startswith(url_key(thread.url).rstrip("/") + "/"):
            return thread.group or thread.keys[0]
    match = _THREAD_ID.search(entry.url)
    if match is not None:
        wanted = f"post:{match.group(1).lower()}"
        if any(wanted in t.keys for t in threads):
            return wanted
    for thread in threads:
        if thread.title == entry.title:
            return thread.group or thread.keys[0]
    return f"thread:{match.group(1).lower()}" if match else f"title:{entry.title}"


def _find(entries: list[_Entry], ref: str) -> _Entry | None:
    lowered = ref.lower()
    if lowered.startswith(("post:", "comment:")):
        return next((e for e in entries if lowered in e.keys), None)
    key = url_key(ref)
    return next((e for e in entries if key in e.aliases), None)


def source_list(
    summary: SummarizeResult | None,
    synthesis: RedditSynthesis | None,
    refs: Iterable[str] = (),
    *,
    complete: bool = True,
) -> SourceList:
    """The numbered list for what a reader sees.

    ``refs`` are the citation keys (``post:ID``, ``comment:ID``) and permalinks of the shown
    text in reading order; they order the groups. With ``complete`` every source is listed
    (unreferenced ones after the rest, in stored order); without, only the referenced ones,
    under the title (unnumbered, without a link) of a thread that is not cited itself.
    """
    entries = _entries(summary, synthesis)
    chosen: list[_Entry] = []
    for ref in refs:
        entry = _find(entries, ref)
        if entry is not None and entry not in chosen:
            chosen.append(entry)
    if complete:
        chosen += [e for e in entries if e not in chosen]
    groups: dict[str, list[_Entry]] = {}
    for entry in chosen:
        groups.setdefault(entry.group, []).append(entry)
    numbers = SourceNumbers()
    shown: list[SourceGroup] = []
    for group, members in groups.items():
        thread = next((e for e in entries if e.group == group and not e.comment), None)
        head = thread or members[0]
        if thread is not None and not complete and thread not in members:
            thread = None  # a short list names the thread of a cited comment, unnumbered
        number = numbers.add(thread.keys, thread.url) if thread is not None else None
        comments = tuple(
            ListedSource(numbers.add(e.keys, e.url), e.title, e.url, "comment")
            for e in members
            if e.comment
        )
        where = head.where or (_subreddit(head.url) if head.url else "")
        url = thread.url if thread is not None else ""
        shown.append(SourceGroup(where, head.title, url, number, head.kind, comments))
    return SourceList(numbers, shown, len(entries))


def numbered_sources(
    summary: SummarizeResult | None, synthesis: RedditSynthesis | None
) -> tuple[SourceNumbers, list[ListedSource]]:
    """Every source numbered in stored order, and the entries to print in number order."""
    listing = source_list(summary, synthesis, complete=True)
    return listing.numbers, listing.listed()


def compact_permalink(url: str) -> str:
    """A Reddit comment permalink without its thread's slug (Reddit resolves ``_``), so a
    comment's link fits on one line under its thread; other URLs unchanged."""
    match = _COMMENT_URL.match(url)
    if match is None:
        return url
    return f"https://www.reddit.com/r/{match['sub']}/comments/{match['post']}/_/{match['comment']}/"
