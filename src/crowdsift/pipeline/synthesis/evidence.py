"""The selected evidence as citable items: every id and permalink an answer may cite.

Pure. Drafts cite in many shapes (``post:ID``, ``[comment:ID]``, ``t1_ID``, a bare id, a
permalink with another slug); ``EvidenceIndex.resolve_cite`` maps each to the one evidence item
it names, or to None, so the grounding check (``crowdsift.pipeline.synthesis.grounding``) never
guesses. Posts include YouTube videos and Amazon products (ids ``yt-…``, ``amzn-…``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit

from crowdsift.core.citations import ID
from crowdsift.core.text import url_key
from crowdsift.pipeline.synthesis.models import CitedSource, PostPayload

EntryKind = Literal["thread", "comment"]

_CITE = re.compile(
    rf"(?:(?P<prefix>post|comment)\s*:\s*|(?P<thing>t3|t1)_)?(?P<id>{ID})", re.IGNORECASE
)
_REDDIT_PATH = re.compile(
    r"^/(?:r/[^/]+/)?comments/(?P<post>[a-z0-9]+)(?:/[^/]*(?:/(?P<comment>[a-z0-9]+))?)?/?$",
    re.IGNORECASE,
)
_REDDIT_HOSTS = frozenset({"reddit.com", "old.reddit.com", "new.reddit.com", "np.reddit.com"})
LINK = re.compile(r"https?://[^\s<>\[\]()\"'`]+|www\.[^\s<>\[\]()\"'`]+", re.IGNORECASE)
"""A web link as it appears in text (it ends before brackets, parentheses and quotes)."""
TRAILING = ".,;:!?'\""
"""Punctuation after a link that belongs to the sentence, not to the link."""


@dataclass(frozen=True)
class EvidenceEntry:
    """One citable item: a drilled thread or one of its comments."""

    kind: EntryKind
    id: str
    url: str
    title: str
    score: int
    created_at: datetime | None
    thread_id: str = field(default="", compare=False)
    """The post a comment belongs to (a thread's own id)."""
    post: PostPayload | None = field(default=None, compare=False, repr=False)
    """The evidence post of a thread, or of a comment's thread."""

    @property
    def marker(self) -> str:
        """How prompts and drafts name it: ``post:ID`` or ``comment:ID``."""
        return f"{'post' if self.kind == 'thread' else 'comment'}:{self.id}"

    def source(self) -> CitedSource:
        return CitedSource(kind=self.kind, id=self.id, url=self.url, title=self.title)


class EvidenceIndex:
    """Every citable id and permalink of the drilled threads."""

    def __init__(self, entries: Iterable[EvidenceEntry]) -> None:
        self.threads: dict[str, EvidenceEntry] = {}
        self.comments: dict[str, EvidenceEntry] = {}
        self.by_url: dict[str, EvidenceEntry] = {}
        for entry in entries:
            table = self.threads if entry.kind == "thread" else self.comments
            if entry.id.lower() in table:
                continue  # the same post drilled twice: the first copy is the evidence
            table[entry.id.lower()] = entry
            self.by_url.setdefault(url_key(entry.url), entry)

    @classmethod
    def from_payloads(cls, posts: Iterable[PostPayload]) -> EvidenceIndex:
        entries: list[EvidenceEntry] = []
        for post in posts:
            url = str(post.url)
            entries.append(
                EvidenceEntry("thread", post.post_id, url, post.title, post.post_karma,
                              post.created_at, post.post_id, post)
            )  # fmt: skip
            entries += [
                EvidenceEntry("comment", c.comment_id, c.permalink or url, post.title, c.score,
                              c.created_at, post.post_id, post)
                for c in post.comments
                if c.comment_id
            ]  # fmt: skip
        return cls(entries)

    def __len__(self) -> int:
        return len(self.threads) + len(self.comments)

    def resolve_cite(self, cite: str) -> EvidenceEntry | None:
        """The evidence item ``cite`` names, or None.

        Accepted: ``post:ID``, ``comment:ID``, ``[post:ID]``, ``t3_ID``, ``t1_ID``, a bare ID,
        or a permalink of the evidence (compared loosely: scheme, ``www.``, case, query and
        trailing slash ignored; a Reddit URL with another slug still names the same post or
        comment). A typed id that names the other kind ("post:" before a comment id) is
        accepted: models mix the prefixes up, and the item is real evidence either way.
        """
        text = cite.strip().strip("[]").strip()
        if not text:
            return None
        if LINK.fullmatch(text.rstrip(TRAILING)):
            return self._resolve_url(text.rstrip(TRAILING))
        match = _CITE.fullmatch(text)
        if match is None:
            return None
        ref = match.group("id").lower()
        typed = (match.group("prefix") or match.group("thing") or "").lower()
        thread, comment = self.threads.get(ref), self.comments.get(ref)
        if typed in {"comment", "t1"}:
            return comment or thread
        return thread or comment

    def _resolve_url(self, url: str) -> EvidenceEntry | None:
        entry = self.by_url.get(url_key(url))
        if entry is not None:
            return entry
        parts = urlsplit(url if "://" in url else f"https://{url}")
        host = parts.netloc.lower().removeprefix("www.")
        path = _REDDIT_PATH.match(parts.path)
        if host not in _REDDIT_HOSTS or path is None:
            return None
        post_id = path.group("post").lower()
        comment_id = (path.group("comment") or "").lower()
        if comment_id:
            found = self.comments.get(comment_id)
            return found if found and found.thread_id.lower() == post_id else None
        return self.threads.get(post_id)
