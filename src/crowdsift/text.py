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
_FENCE = re.compile(r"^\s*(?:```|~~~).*$", re.MULTILINE)
_INLINE_CODE = re.compile(r"`+([^`]*)`+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)", re.MULTILINE)
_BLOCKQUOTE = re.compile(r"^\s{0,3}(?:>\s?)+", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-*+]\s+", re.MULTILINE)
_ORDERED = re.compile(r"^\s*\d{1,9}[.)]\s+", re.MULTILINE)
_RULE = re.compile(r"^\s{0,3}(?:[-*_]\s*){3,}$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_SPOILER = re.compile(r">!(.+?)!<")
_SUPERSCRIPT = re.compile(r"\^\(([^()]*)\)|\^(?=\S)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|^])")
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")

# Code points that only ever appear inside emoji sequences, removed wherever they are left.
_EMOJI_COMPONENTS = (
    "\ufe0e\ufe0f\u20e3\u200d"
    "\U0001f3fb-\U0001f3ff"  # skin tones
    "\U0001f1e6-\U0001f1ff"  # regional indicators (flags)
    "\U000e0020-\U000e007f"  # tag sequences (subdivision flags)
    "\U0001f9b0-\U0001f9b3"  # hair components
)


@lru_cache(maxsize=1)
def _emoji_pattern() -> re.Pattern[str]:
    """A character class of every non-ASCII code point used by any emoji, built once.

    Removing those code points (and the joiners/modifiers above) leaves no emoji behind:
    every emoji either contains one of them or is an ASCII keycap that needs U+20E3.
    Much faster than ``emoji.replace_emoji``, which walks a trie in Python.
    """
    code_points = {ch for seq in emoji.EMOJI_DATA for ch in seq if not ch.isascii()}
    ranges = "".join(re.escape(ch) for ch in sorted(code_points))
    return re.compile(f"[{ranges}{_EMOJI_COMPONENTS}]+")


def strip_emoji(text: str) -> str:
    """Remove every emoji (and the invisible pieces emoji are built from)."""
    if text.isascii():
        return text
    return _emoji_pattern().sub(" ", text)


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

    Each rule runs only when its trigger character is present: most titles and many bodies
    carry no markup at all, and this keeps them nearly free.
    """
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "`" in text or "~~~" in text:
        text = _FENCE.sub("", text)
        text = _INLINE_CODE.sub(r"\1", text)
    if "[" in text:
        text = _REF_DEFINITION.sub("", text)
        for _ in range(3):  # nested links like [[a](b)](c)
            replaced = _INLINE_LINK.sub(r"\1", _IMAGE.sub(r"\1", text))
            replaced = _LOOSE_LINK.sub(r"\1", replaced)
            if replaced == text:
                break
            text = replaced
        text = _REF_LINK.sub(r"\1", text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
    if "\n" in text or text[:1] in _LINE_START_MARKS or text[:1].isdigit():
        text = _line_marks(text)
    if ">!" in text:
        text = _SPOILER.sub(r"\1", text)
    if "*" in text or "_" in text:
        text = _BOLD.sub(r"\2", text)
        text = _ITALIC_STAR.sub(r"\1", text)
        text = _ITALIC_UNDERSCORE.sub(r"\1", text)
    if "~~" in text:
        text = _STRIKE.sub(r"\1", text)
    if "^" in text:
        text = _SUPERSCRIPT.sub(lambda m: m.group(1) or "", text)
    return text


_LINE_START_MARKS = frozenset("#>-*+_| \t")


def _line_marks(text: str) -> str:
    """Block-level marks that live at the start of a line: headings, quotes, lists, rules."""
    text = _RULE.sub(" ", text)
    if "|" in text:
        text = _TABLE_RULE.sub(" ", text)
    if "#" in text:
        text = _HEADING.sub("", text)
    if ">" in text:
        text = _BLOCKQUOTE.sub("", text)
    text = _BULLET.sub("", text)
    return _ORDERED.sub("", text)


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
        if cleaned == current:
            return cleaned
        current = cleaned
    return current


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens (letters and digits of any script); punctuation splits words."""
    return _WORD.findall(text.lower())
