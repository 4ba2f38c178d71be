"""Language detection of a text (lingua, restricted to a few languages), for every stage.

The query analysis detects the question's language; the experts' language check compares an
answer's language with it. Detection uses lingua restricted to a few languages (the full model
set costs ~1.5 s on first use; restricted, a detection is tens of microseconds once loaded). The
detector is built on first use, never at import. Citation markers, URLs and code are removed
first: they are not prose and would pull every text towards English.

Loading lingua's models still costs about a second of a cold ``crowdsift ask``, and most
questions are plainly English: ASCII words only, several of them English function words ("how",
"the", "should") and none a function word of the other languages detected. Such a text is "en"
without lingua (``plainly_english``); anything less certain goes to lingua as before.

lingua (about 100 MB of language models) is the ``[lang]`` extra, not the core: without it a
text that is not plainly English is told by its script alone (``script_guess``: Cyrillic is
"uk" with Ukrainian's own letters, else "ru"; anything else "und"), and the first such text logs
one note with the pip line.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from crowdsift.core.citations import MARKER_GROUP
from crowdsift.core.extras import has_module, pip_line
from crowdsift.core.log import get_logger

if TYPE_CHECKING:
    from lingua import LanguageDetector

log = get_logger(__name__)
UNDETERMINED = "und"
LANGUAGES = ("ENGLISH", "RUSSIAN", "GERMAN", "FRENCH", "SPANISH", "UKRAINIAN")
"""lingua's names of the languages told apart (imported with lingua, on first use)."""
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
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_ENGLISH_WORDS = frozenset((
    "the", "is", "are", "how", "what", "which", "why", "when", "where", "who", "do", "does",
    "did", "i", "i'm", "my", "you", "your", "it", "it's", "its", "to", "of", "and", "with", "for",
    "from", "this", "that", "these", "those", "should", "can", "could", "would", "have", "been",
    "be", "not", "any", "there", "their", "they", "we", "our", "than", "about", "into", "or",
    "if", "at", "by", "just", "get", "best", "worth", "whether",
))  # fmt: skip
"""Function words of English that are not words of German, French or Spanish as well (so no
"a", "an", "in", "on", "me", "was", "will", "has", "die")."""
_OTHER_WORDS = frozenset((
    "der", "die", "das", "und", "ist", "nicht", "ich", "wie", "mit", "ein", "eine", "einen",
    "kann", "für", "auf", "le", "la", "les", "est", "et", "une", "des", "pour", "avec", "je",
    "ne", "pas", "que", "qui", "el", "los", "las", "y", "es", "por", "para", "como", "una",
    "del", "con", "lo", "se", "al", "su",
))  # fmt: skip
"""Common function words of the other Latin-script languages: any of them sends the text to
lingua."""
PLAIN_ENGLISH_MIN_LENGTH = 6
"""Words a text needs before it may be called English without lingua: on shorter ones lingua
often answers ``und`` (its two best languages too close), and that answer is kept."""
PLAIN_ENGLISH_MIN_WORDS = 3
"""Distinct English function words it needs..."""
PLAIN_ENGLISH_MIN_SHARE = 0.2
"""...and the share of its words they make up."""
_WARM_UP_SAMPLES = (
    "which recorder keeps its battery longest",
    "какой диктофон дольше держит заряд",
)


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    """Built once, on first use (never at import); language models load lazily inside."""
    from lingua import Language, LanguageDetectorBuilder

    return (
        LanguageDetectorBuilder.from_languages(*(getattr(Language, name) for name in LANGUAGES))
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
    if not lingua_installed():
        return 0.0
    for sample in _WARM_UP_SAMPLES:  # one per script: each loads that script's models
        _detector().detect_language_of(sample)  # lingua itself: plain English skips it
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
    if plainly_english(prose):
        return "en"
    if not lingua_installed():
        return script_guess(prose)
    language = _detector().detect_language_of(prose)
    if language is None:
        return UNDETERMINED
    return language.iso_code_639_1.name.lower()


_UKRAINIAN_LETTERS = re.compile(r"[іїєґІЇЄҐ]")


@lru_cache(maxsize=1)
def lingua_installed() -> bool:
    """Whether lingua can be imported; when not, says so once (the ``[lang]`` extra)."""
    if has_module("lingua"):
        return True
    log.info(
        "language_detector_missing",
        note="lingua is not installed: texts that are not plainly English are told by their "
        f"script alone; for full detection: {pip_line('lang')}",
    )
    return False


def script_guess(prose: str) -> str:
    """The language by script alone (no lingua): Cyrillic is "uk" when it holds Ukrainian's own
    letters, else "ru"; any other text is ``und`` (Latin script does not tell the language)."""
    if _CYRILLIC.search(prose):
        return "uk" if _UKRAINIAN_LETTERS.search(prose) else "ru"
    return UNDETERMINED


def plainly_english(prose: str) -> bool:
    """True when ``prose`` is English beyond doubt, without loading lingua: every letter ASCII,
    at least ``PLAIN_ENGLISH_MIN_LENGTH`` words, ``PLAIN_ENGLISH_MIN_WORDS`` distinct English
    function words making up ``PLAIN_ENGLISH_MIN_SHARE`` of them, and no function word of the
    other languages. Checked against lingua on the demo archive and the evaluation questions
    (tests/pipeline/evaluation/test_language_shortcut.py)."""
    if not prose.isascii():
        return False
    words = [word.lower() for word in _WORD.findall(prose)]
    if len(words) < PLAIN_ENGLISH_MIN_LENGTH or any(word in _OTHER_WORDS for word in words):
        return False
    english = [word for word in words if word in _ENGLISH_WORDS]
    return len(set(english)) >= PLAIN_ENGLISH_MIN_WORDS and len(
        english
    ) >= PLAIN_ENGLISH_MIN_SHARE * len(words)
