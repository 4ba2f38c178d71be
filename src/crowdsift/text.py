"""Text normalisation: Reddit markdown to clean plain text, before any scoring or threshold.

``clean_text`` is pure, total (never raises on any ``str``) and idempotent:
``clean_text(clean_text(x)) == clean_text(x)``. It is on the hot path of every fetch, so it is
regex-based: a markdown parser costs ~30x more per body, and the filtering layer must stay
within 4x of merely parsing the raw JSON (see ``bench/bench_filtering.py``).
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import emoji

# Markdown constructs, each replaced by the text a reader would see.
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)")
_INLINE_LINK = re.compile(r"\[([^\[\]]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)")
# Anything else that still reads as [text](target), e.g. brackets that arrived entity-encoded.
_LOOSE_LINK = re.compile(r"\[([^\[\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]")
_REF_DEFINITION = re.compile(r"^\s{0,3}\[[^\[\]]+\]:\s*\S+.*$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
_FENCE = re.compile(r"(?:```|~~~)[^\s`~]*")
_ORDERED = re.compile(r"\d{1,9}[.)](?:\s+|$)")
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
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "`" in text:
        text = _FENCE.sub(" ", text).replace("`", "")
    if "[" in text:
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
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
    text = _line_marks(text)
    if ">!" in text:
        text = _SPOILER.sub(r"\1", text)
    if "**" in text:
        text = _BOLD_STAR.sub(r"\1", text)
    if "__" in text:
        text = _BOLD_UNDERSCORE.sub(r"\1", text)
    if "*" in text:
        text = _ITALIC_STAR.sub(r"\1", text)
    if "_" in text:
        text = _ITALIC_UNDERSCORE.sub(r"\1", text)
    if "~~" in text:
        text = _STRIKE.sub(r"\1", text)
    if "^" in text:
        text = _SUPERSCRIPT.sub(lambda m: m.group(1) or "", text)
    return text


_RULE_CHARS = frozenset("-*_= \t")
_TABLE_RULE_CHARS = frozenset("-:| \t")


def _line_marks(text: str) -> str:
    """Block-level marks at the start of a line: headings, quotes, lists, rules, table rules.

    A plain loop over lines: per-line string checks beat five MULTILINE regexes whose ``^``
    anchors defeat the regex engine's fast scanning.
    """
    if "\n" not in text and not _could_start_block(text):
        return text
    lines = text.split("\n")
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
                stripped = rest.lstrip()
        if stripped[:2] in _BULLETS:
            stripped = stripped[2:].lstrip()
        elif stripped[:1].isdigit():
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
    return " ".join(text.split())


def clean_text(text: str | None) -> str:
    """Markdown to plain text: links to their text, entities decoded, emoji and zero-width
    characters removed, whitespace collapsed to single spaces.

    Applied until nothing changes (at most a few passes; text only shrinks), so the result is a
    fixed point: cleaning cleaned text never changes it again.
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


_TRIGGERS = ("&", "[", "*", "_", "~~", "`", "^", "\\", "<", ">!")


def _is_inert(text: str) -> bool:
    """True when no step of ``_clean_once`` can change ``text``, so a re-run is skipped.

    Every step is gated on one of these triggers (entities, links, emphasis, code, escapes,
    autolinks, spoilers; emoji and invisible characters are non-ASCII; block marks need a line
    start, and cleaned text is one line), so without them the text is already a fixed point.
    """
    return (
        text.isascii()
        and not any(trigger in text for trigger in _TRIGGERS)
        and not _could_start_block(text)
    )


_WORD = re.compile(r"[^\W_]+")
_ASCII_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens: runs of letters and digits of any script; everything else
    (punctuation, underscores, apostrophes) separates words.

    ASCII text takes a translate-and-split path that yields exactly the regex's tokens at a
    fraction of the cost; this runs on every title and body of a fetch.
    """
    lowered = text.lower()
    if lowered.isascii():
        return lowered.translate(_ASCII_SEPARATORS).split()
    return _WORD.findall(lowered)
