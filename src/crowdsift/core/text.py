"""Text: cleaning, model escapes, URL keys and the clock, for every module.

``clean_text`` is pure, total (never raises on any ``str``) and idempotent:
``clean_text(clean_text(x)) == clean_text(x)``. It is on the hot path of every fetch, so it is
regex-based: a markdown parser costs ~30x more per body, and the filtering layer must stay
within 4x of merely parsing the raw JSON (see ``bench/bench_filtering.py``).

Besides cleaning, this module owns ``url_key`` / ``canonical_url``, ``sanitize_escapes`` and
``utc_now``. Words (tokens, stop words, the lexical relevance) live in ``crowdsift.core.words``,
sentences and truncation in ``crowdsift.core.sentences``, the citation syntax (``[post:ID]`` /
``[comment:ID]``) in ``crowdsift.core.citations``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import emoji

# Markdown constructs, each replaced by the text a reader would see.
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)")
_INLINE_LINK = re.compile(r"\[([^\[\]]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)")
# Anything else that still reads as [text](target), e.g. brackets that arrived entity-encoded.
_LOOSE_LINK = re.compile(r"\[([^\[\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]")
# "[1]: https://…" alone on its line (an optional title after it); "[edit]: Airflow 3.0 …" is prose.
_REF_DEFINITION = re.compile(
    r"^\s{0,3}\[[^\[\]]+\]:[ \t]*(?:<[^<>\s]*>|(?:https?|ftp|mailto):\S+|www\.\S+|[/#]\S*)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$",
    re.MULTILINE,
)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
_FENCE = re.compile(r"(?:```|~~~)[^\s`~]*")
_ORDERED = re.compile(r"^\d{1,9}[.)](?:\s+|$)")
_BOLD_STAR = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_BOLD_UNDERSCORE = re.compile(r"__(?=\S)(.+?)(?<=\S)__")
_ITALIC_STAR = re.compile(r"\*(?<![\w*]\*)(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"_(?<![\w_]_)(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_SPOILER = re.compile(r">!(.+?)!<")
_SUPERSCRIPT = re.compile(r"\^\(([^()]*)\)|\^(?=\S)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|^])")
# Lone surrogates (halves of a broken emoji escape) too: no encoder, printer or store takes them.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\ud800-\udfff]")

# Code points that only ever appear inside emoji sequences, removed wherever they are left.
_EMOJI_COMPONENTS = frozenset(
    [chr(c) for c in (0xFE0E, 0xFE0F, 0x20E3, 0x200D)]
    + [chr(c) for c in range(0x1F3FB, 0x1F400)]  # skin tones
    + [chr(c) for c in range(0x1F1E6, 0x1F200)]  # regional indicators (flags)
    + [chr(c) for c in range(0xE0020, 0xE0080)]  # tag sequences (subdivision flags)
    + [chr(c) for c in range(0x1F9B0, 0x1F9B4)]  # hair components
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@lru_cache(maxsize=1)
def _emoji_code_points() -> frozenset[str]:
    """Every non-ASCII code point used by any emoji, plus the joiners and modifiers above.

    Removing those code points leaves no emoji behind: every emoji either contains one of them
    or is an ASCII keycap that needs U+20E3. Checking only the non-ASCII runs of a text against
    this set is ~100x faster than ``emoji.replace_emoji`` or one big character class (whose
    astral-plane members the regex engine scans one by one).
    """
    used = {ch for seq in emoji.EMOJI_DATA for ch in seq if not ch.isascii()}
    return frozenset(used) | _EMOJI_COMPONENTS


def _strip_emoji_run(match: re.Match[str]) -> str:
    emoji_chars = _emoji_code_points()
    run = match.group()
    if not any(ch in emoji_chars for ch in run):
        return run
    return "".join(" " if ch in emoji_chars else ch for ch in run)


def strip_emoji(text: str) -> str:
    """Remove every emoji (and the invisible pieces emoji are built from)."""
    if text.isascii():
        return text
    return _NON_ASCII_RUN.sub(_strip_emoji_run, text)


def unescape_entities(text: str) -> str:
    """Decode HTML entities until none are left, so ``&amp;amp;`` and ``&amp;`` agree."""
    for _ in range(5):
        if "&" not in text:
            return text
        decoded = html.unescape(text)
        if decoded == text:
            return text
        text = decoded
    return text


def strip_markdown(text: str) -> str:
    """Turn Reddit markdown into the text a reader sees: links keep their text, marks go.

    Each rule runs only when its trigger character is present, and every pattern begins with
    a literal so the regex engine can skip ahead: most titles and many bodies carry little
    markup, and this keeps them nearly free.
    """
    text = _line_marks(text)  # first, on the lines as written: markup must not make a line start
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "`" in text:
        if "```" in text or "~~~" in text:
            text = _FENCE.sub(" ", text)
        text = text.replace("`", "")
    if "[" in text:
        text = _links(text)
    for trigger, pattern, replacement in _INLINE_MARKS:
        if trigger in text:
            text = pattern.sub(replacement, text)
    return text


def _links(text: str) -> str:
    """Links and images as their text, reference definitions gone."""
    text = _REF_DEFINITION.sub("", text) if "]:" in text else text
    for _ in range(3):  # nested links like [[a](b)](c)
        if "](" not in text:
            break
        replaced = _INLINE_LINK.sub(r"\1", _IMAGE.sub(r"\1", text) if "![" in text else text)
        replaced = _LOOSE_LINK.sub(r"\1", replaced)
        if replaced == text:
            break
        text = replaced
    if "][" in text:
        text = _REF_LINK.sub(r"\1", text)
    return text


_INLINE_MARKS: tuple[tuple[str, re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    ("<", _AUTOLINK, r"\1"),
    (">!", _SPOILER, r"\1"),
    ("**", _BOLD_STAR, r"\1"),
    ("__", _BOLD_UNDERSCORE, r"\1"),
    ("*", _ITALIC_STAR, r"\1"),
    ("_", _ITALIC_UNDERSCORE, r"\1"),
    ("~~", _STRIKE, r"\1"),
    ("^", _SUPERSCRIPT, lambda m: m.group(1) or ""),
)
"""Inline marks, in the order they are removed, each with the character that triggers it."""


_RULE_CHARS = frozenset("-*_= \t")
_TABLE_RULE_CHARS = frozenset("-:| \t")


def _line_marks(text: str) -> str:
    """Block-level marks at the start of a line: headings, quotes, lists, rules, table rules.

    A list number ("1. ", "2) ") is a mark only at the start of a line of a text that has lines:
    one line of prose ("3. Anything else?" once its "Airflow" sat in a link, a title, cleaned
    text) is not a list, and treating it as one loses a version or a count. This also keeps
    ``clean_text`` idempotent, since cleaned text is one line. A heading's text is not a list
    ("## 3. Setup"), and one line loses at most one list mark ("- 3. Anything" keeps its 3).

    A plain loop over lines: per-line string checks beat five MULTILINE regexes whose ``^``
    anchors defeat the regex engine's fast scanning.
    """
    if "\n" not in text and not _could_start_block(text):
        return text
    lines = text.split("\n")
    numbered_lists = len(lines) > 1
    for index, line in enumerate(lines):
        if line[:1].isalpha():  # plain prose: the common case, decided in one check
            continue
        stripped = line.lstrip()
        if not stripped:
            continue
        first = stripped[0]
        if first in "-*_=|:" and _is_rule(stripped):
            lines[index] = ""
            continue
        while stripped[:1] == ">":
            stripped = stripped[1:].lstrip()
        if stripped[:1] == "#":
            hashes = len(stripped) - len(stripped.lstrip("#"))
            rest = stripped[hashes:]
            if hashes <= 6 and (not rest or rest[0] in " \t"):
                lines[index] = rest.lstrip()
                continue
        if stripped[:2] in _BULLETS:
            stripped = stripped[2:].lstrip()
        elif numbered_lists and stripped[:1].isdigit():
            stripped = _ORDERED.sub("", stripped, count=1)
        lines[index] = stripped
    return "\n".join(lines)


_BULLETS = frozenset({"- ", "* ", "+ ", "-\t", "*\t", "+\t"})


def _could_start_block(text: str) -> bool:
    first = text.lstrip()[:1]
    return bool(first) and (first in "#>-*+_=|:" or first.isdigit())


def _is_rule(line: str) -> bool:
    """'---', '* * *', '___' or a table's '|---|:--:|' separator line."""
    chars = set(line)
    if chars <= _RULE_CHARS:
        return sum(line.count(mark) for mark in "-*_=") >= 3
    return chars <= _TABLE_RULE_CHARS and line.count("-") >= 3


def _clean_once(text: str) -> str:
    if "&" in text:
        text = unescape_entities(text)
    if not text.isascii():
        text = _INVISIBLE.sub("", text)
    text = strip_markdown(text)
    text = strip_emoji(text)
    return join_lines(text)


_OPEN_ENDS = frozenset(".!?:;,…([{/\\-–—&+")
"""A line ending in one of these already ends its sentence, or goes on in the next line."""


def join_lines(text: str) -> str:
    """``text`` on one line, its whitespace collapsed, and each line break that ends a sentence
    kept as a full stop: a line without closing punctuation followed by one that starts like a
    sentence (a capital or a digit). A post typed line by line ("Set the power limit to 250W" /
    "Use nvidia-smi -pl") would otherwise read as one run-on sentence; a line wrapped
    mid-sentence goes on in lower case and is joined as before."""
    if "\n" not in text:
        return " ".join(text.split())
    joined: list[str] = []
    for raw in text.split("\n"):
        line = " ".join(raw.split())
        if not line:
            continue
        if joined and joined[-1][-1] not in _OPEN_ENDS and (line[0].isupper() or line[0].isdigit()):
            joined[-1] += "."
        joined.append(line)
    return " ".join(joined)


def clean_text(text: str | None) -> str:
    """Markdown to plain text: links to their text, entities decoded, emoji and zero-width
    characters removed, whitespace collapsed to single spaces.

    A line break that ends a sentence ends it with a full stop (``join_lines``). Applied until
    nothing changes (at most a few passes: only the first has line breaks to join, and after it
    text only shrinks), so the result is a fixed point: cleaning cleaned text never changes it
    again.
    """
    if not text:
        return ""
    current = text
    for _ in range(8):
        cleaned = _clean_once(current)
        if cleaned == current or _is_inert(cleaned):
            return cleaned
        current = cleaned
    return current


# Every step of _clean_once is gated on one of these: links, emphasis, code, escapes,
# autolinks, spoilers, or an entity's start (an ampersand followed by a name or "#": the "&" of
# "good & cheap", left by decoding "&amp;", starts none). Substring tests run at memchr speed;
# one regex alternation of them stepped through the text a character at a time (4.8 µs on a
# 400-character body against 0.9, on every post of a fetch).
_TRIGGER_MARKS = ("[", "*", "_", "`", "^", "\\", "<", "~~", ">!")
_ENTITY_START = re.compile(r"&[A-Za-z#]")


def _has_trigger(text: str) -> bool:
    for mark in _TRIGGER_MARKS:
        if mark in text:
            return True
    return "&" in text and _ENTITY_START.search(text) is not None


def _is_inert(text: str) -> bool:
    """True when no step of ``_clean_once`` can change ``text``, so a re-run is skipped.

    Emoji and invisible characters are non-ASCII, block marks need a line start (and cleaned
    text is one line), and every other step needs a trigger (``_has_trigger``): without them
    the text is already a fixed point.
    """
    return text.isascii() and not _has_trigger(text) and not _could_start_block(text)


# --- escapes a model leaves behind ----------------------------------------------------------

_JSON_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))?",
    re.DOTALL,
)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "", "f": "", "\\": "\\"}


def sanitize_escapes(text: str) -> str:
    """Decode JSON escape sequences a model left as literal text; drop stray backslashes.

    ``\\n``, ``\\t``, ``\\r\\n`` become real line breaks and tabs, ``\\"``, ``\\'``, ``\\/``
    their characters, ``\\u00e9`` (and surrogate pairs such as ``\\ud83d\\ude00``) the
    character, ``\\\\`` one backslash — what decoding the JSON string once would give. A
    backslash before punctuation is stray and removed (``\\[post:1\\]`` → ``[post:1]``); one
    before a letter or digit that starts no JSON escape is a path's and kept (``C:\\Users``); a
    lone surrogate is dropped; ``\\b`` and ``\\f`` (control characters no reader wants) are
    dropped.
    """
    if "\\" not in text:
        return text

    def decode(match: re.Match[str]) -> str:
        high, low, code, other = match.groups()
        if high is not None:
            pair = (int(high, 16) - 0xD800) * 0x400 + (int(low, 16) - 0xDC00) + 0x10000
            return chr(pair)
        if code is not None:
            value = int(code, 16)
            return "" if 0xD800 <= value <= 0xDFFF else chr(value)
        if other is None:  # a backslash at the very end
            return ""
        if other.isalnum() and other not in _SIMPLE_ESCAPES and other != "u":
            return "\\" + other  # no escape at all: a path's backslash ("C:\\Users", "\\Release")
        return _SIMPLE_ESCAPES.get(other, other)

    decoded = _JSON_ESCAPE.sub(decode, text)
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


# --- URLs and the clock -----------------------------------------------------------------------


def canonical_url(url: str) -> str:
    """The URL without query string or fragment (where tracking parameters live)."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))


def url_key(url: str) -> str:
    """A URL compared loosely: scheme, ``www.``, case, query, fragment, final slash and percent
    escapes ignored (``f%C3%BCr`` is ``für``: a slug with an umlaut, as one place writes it and
    another encodes it) — except YouTube's ``v``, which is the video itself (every video's path
    is ``/watch``)."""
    parts = urlsplit(url.strip() if "://" in url else f"https://{url.strip()}")
    host = parts.netloc.lower().removeprefix("www.").removeprefix("m.")
    key = f"{host}{unquote(parts.path).rstrip('/').lower()}"
    if host == "youtube.com" and parts.path.rstrip("/") == "/watch":
        key += "?v=" + parse_qs(parts.query).get("v", [""])[0].lower()
    return key


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (inject a clock where a test must control it)."""
    return datetime.now(UTC)
