"""Language detection of a text (lingua, restricted to a few languages), for every stage.

The query analysis detects the question's language; the experts' language check compares an
answer's language with it. Detection uses lingua restricted to a few languages (the full model
set costs ~1.5 s on first use; restricted, a detection is tens of microseconds once loaded). The
detector is built on first use, never at import. Citation markers, URLs and code are removed
first: they are not prose and would pull every text towards English.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

from crowdsift.core.citations import MARKER_GROUP

UNDETERMINED = "und"
LANGUAGES: tuple[Language, ...] = (
    Language.ENGLISH,
    Language.RUSSIAN,
    Language.GERMAN,
    Language.FRENCH,
    Language.SPANISH,
    Language.UKRAINIAN,
)
MIN_LETTERS = 4
"""Fewer letters than this (after markers, URLs and code are removed) is ``und``."""
MIN_RELATIVE_DISTANCE = 0.1
"""lingua answers None (→ ``und``) when the two best languages are closer than this."""
DETECT_CHARS = 2000
"""Only the start of a long answer is read: its language does not change halfway."""

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
URL_IN_PROSE = re.compile(r"https?://\S+|www\.\S+|t\.me/\S+", re.IGNORECASE)
"""A link as written in prose (also ``t.me/…`` without a scheme)."""
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WARM_UP_SAMPLES = (
    "which recorder keeps its battery longest",
    "какой диктофон дольше держит заряд",
)


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    """Built once, on first use (never at import); language models load lazily inside."""
    return (
        LanguageDetectorBuilder.from_languages(*LANGUAGES)
        .with_minimum_relative_distance(MIN_RELATIVE_DISTANCE)
        .build()
    )


def warm_up() -> float:
    """Build the detector and load every language model now; the seconds it took.

    The first detections load lingua's models (about 190 MB, 1–3 s holding the GIL). In the
    service that happened inside the first research job and stalled every request in flight,
    so ``crowdsift serve`` calls this at startup, before it accepts connections.
    """
    started = time.perf_counter()
    for sample in _WARM_UP_SAMPLES:  # one per script: each loads that script's models
        detect_language(sample)
    return time.perf_counter() - started


def prose_of(text: str) -> str:
    """``text`` without ``[post:ID]`` markers, URLs and code: what a reader reads as language."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = URL_IN_PROSE.sub(" ", text)
    text = MARKER_GROUP.sub(" ", text)
    return " ".join(text.split())


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text`` ("en", "ru", ...), or "und" when there is too little to tell.

    A single Latin-script word ("Proxmox") is ``und``: product names carry no language, and
    lingua would guess one. Cyrillic words are told apart by script, so one is enough.
    """
    prose = prose_of(text[: DETECT_CHARS * 2])[:DETECT_CHARS]
    letters = sum(ch.isalpha() for ch in prose)
    if letters < MIN_LETTERS:
        return UNDETERMINED
    if not _CYRILLIC.search(prose) and len(_LATIN_WORD.findall(prose)) < 2:
        return UNDETERMINED
    language = _detector().detect_language_of(prose)
    if language is None:
        return UNDETERMINED
    return language.iso_code_639_1.name.lower()
