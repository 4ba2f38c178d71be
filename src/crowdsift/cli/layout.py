"""Terminal layout (pure): wrapped paragraphs and bullets, the numbered source list.

Everything fits the width except a URL, which stays whole on a line of its own so that it
remains clickable. A bullet can be held to a few lines (``max_lines``): its prose is cut at a
word with "…" and its ``[n]`` citations are kept.
"""

from __future__ import annotations

import re
import textwrap

from crowdsift.core.sentences import truncate_words
from crowdsift.pipeline.synthesis.display import SourceList, compact_permalink

WIDTH = 100
"""Columns the terminal answer is written for."""

_TRAILING_CITES = re.compile(r"(?:\s*\[\d+\])+[.!?]?\s*$")


def paragraph(text: str, width: int, max_lines: int | None = None) -> list[str]:
    return _wrap(text, width, "", "", max_lines)


def bullet(text: str, width: int, max_lines: int | None = None, mark: str = "•") -> list[str]:
    return _wrap(text, width, f"  {mark} ", "    ", max_lines)


def _wrap(text: str, width: int, first: str, rest: str, max_lines: int | None) -> list[str]:
    lines = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest)
    if max_lines is None or len(lines) <= max_lines:
        return lines or [first.rstrip()]
    cites = _TRAILING_CITES.search(text)
    prose, tail = (text[: cites.start()], cites.group(0).strip()) if cites else (text, "")
    room = max_lines * (width - len(rest)) - len(tail) - 8  # the last line's slack
    while room > 0:
        cut = truncate_words(prose, room) + (f" {tail}" if tail else "")
        lines = textwrap.wrap(cut, width, initial_indent=first, subsequent_indent=rest)
        if len(lines) <= max_lines:
            return lines
        room -= width // 4
    return lines[:max_lines]


def source_lines(listing: SourceList, width: int) -> list[str]:
    """``Sources:`` then, per thread (video, product), ``[n] where — title``, its URL on a line
    of its own, and one line per cited comment (``[n] comment`` and a short permalink)."""
    if not listing.groups:
        return []
    lines = ["", "Sources:"]
    for group in listing.groups:
        head = f"{group.where} — {group.title}" if group.where else group.title
        number = f"[{group.number}] " if group.number is not None else ""
        lines += textwrap.wrap(
            f"{number}{head}", width, initial_indent="  ", subsequent_indent="      "
        ) or ["  "]
        if group.url:
            lines.append(f"      {group.url}")
        for comment in group.comments:
            link = compact_permalink(comment.url)
            line = f"      [{comment.number}] comment {link}"
            lines += [line] if len(line) <= width else [line[: -len(link) - 1], f"      {link}"]
    return lines
