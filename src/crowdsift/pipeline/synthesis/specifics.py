"""Pure text detectors behind the local (extractive) synthesis: specifics, dissent, pivots,
verdicts and option mentions.

The local engine writes no prose, so the staff-engineer sections have to be *found* in what
people wrote. Each detector is a small regex rule (stance is ``stance``'s, from VADER) that
errs on the side of precision: a hidden gem nobody can act on, or a "pivot" that is really
"went from bad to worse", costs the reader more than a missing one. No I/O, no models; the
same text always gives the same answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crowdsift.core.words import STOPWORDS, looks_like_name
from crowdsift.pipeline.reddit.topicality import product_variants
from crowdsift.pipeline.synthesis import lexicon
from crowdsift.pipeline.synthesis.lexicon import alternation, phrase_pattern

# --- specifics: the concrete things a reader can act on ------------------------------------

_UNITS = alternation(lexicon.UNITS)
_SPECIFIC_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # --max-batch 64, --no-cache, --threads=8
    ("flag", re.compile(r"(?<![\w-])--[a-z][\w-]*(?:[ =](?!-)[\w.:/]+)?", re.IGNORECASE)),
    # max_batch=64, vm.swappiness = 10 (not URLs' query strings: those never reach here)
    ("setting", re.compile(r"\b[a-z][\w.]*[_.][\w.]*\s?=\s?[\w.\"'-]+|\b[a-z]\w*=\w[\w.]*", re.I)),
    # v1.2, v3, 2.13.0
    ("version", re.compile(r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+(?:[-.]\w+)?\b", re.IGNORECASE)),
    # CUDA 12.4, Python 3.11, PyTorch 2.1
    ("version", re.compile(r"\b[A-Z][\w+#-]*\s?\d+\.\d+(?:\.\d+)*\b")),
    # RTX 4090, GTX1080, RX-7900XT, M18, A100, i7-12700K
    (
        "model",
        re.compile(
            r"\b[A-Z]{2,5}[- ]?\d{2,5}[A-Za-z]{0,3}\b|\b[A-Z]\d{1,4}[A-Za-z]{0,3}\b"
            r"|\bi[3579]-\d{4,5}[A-Za-z]{0,2}\b"
        ),
    ),
    # 64GB, 30 hours, 7B, 1.5x, 120 ms
    ("quantity", re.compile(rf"(?<![\w.])\d+(?:[.,]\d+)?\s?{_UNITS}s?(?![\w])", re.IGNORECASE)),
)


@dataclass(frozen=True)
class Specific:
    """One concrete item found in a text: what kind it is and how it was written."""

    kind: str
    text: str


def find_specifics(text: str) -> list[Specific]:
    """Concrete specifics in ``text`` in order of appearance, each once.

    Overlaps resolve to the longest match ("CUDA 12.4" over "12.4"), so one item counts once.
    """
    spans: list[tuple[int, int, str]] = []
    for kind, pattern in _SPECIFIC_PATTERNS:
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(text)]
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    found: list[Specific] = []
    seen: set[str] = set()
    end = -1
    for start, stop, kind in spans:
        if start < end:
            continue
        value = text[start:stop].strip()
        key = value.lower()
        end = stop
        if key in seen:
            continue
        seen.add(key)
        found.append(Specific(kind, value))
    return found


def specificity(text: str) -> int:
    """How many distinct specifics ``text`` holds (0 for generic talk)."""
    return len(find_specifics(text))


# --- dissent --------------------------------------------------------------------------------

_DISSENT = phrase_pattern(lexicon.DISSENT)


def dissent_marker(text: str) -> str | None:
    """The first disagreement marker in ``text`` ("I disagree", "overrated" …), or None."""
    match = _DISSENT.search(text)
    return match.group(0) if match else None


MIN_REASON_CHARS = 80
"""Dissent shorter than this, without a specific, is a grunt, not an argument."""


def gives_reason(text: str) -> bool:
    """Dissent worth reading argues: it is long enough to reason, or it names a specific."""
    return len(text.strip()) >= MIN_REASON_CHARS or specificity(text) > 0


# --- pivots ---------------------------------------------------------------------------------

_WORD = r"[A-Za-z0-9](?:[\w.+#-]*[\w+#])?"
"""A name's word: may hold dots ("Node.js") but never ends with one (a full stop)."""
_NAME = rf"{_WORD}(?:\s+(?-i:[A-Z0-9])(?:[\w.+#-]*[\w+#])?){{0,2}}"
"""An option: one word, then up to two capitalised words ("Dagster Cloud", never "Dagster last")."""
_LEAD = rf"(?:{alternation(lexicon.OPTION_DETERMINERS, lexicon.PLAIN_MODIFIERS)}\s+)?"
_PIVOT_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # (pattern, strong): a weak verb ("went", "moved") needs a name-like option
    (
        re.compile(
            rf"\b(?:switched|switching|switch|migrated|migrating|migrate|transitioned)\s+"
            rf"(?:over\s+|everything\s+|all\s+)?from\s+{_LEAD}(?P<a>{_NAME})\s+"
            rf"(?:over\s+)?(?:to|for|onto)\s+{_LEAD}(?P<b>{_NAME})",
            re.IGNORECASE,
        ),
        True,
    ),
    (
        re.compile(
            rf"\b(?:moved|moving|went|going|changed|jumped)\s+(?:over\s+)?from\s+{_LEAD}"
            rf"(?P<a>{_NAME})\s+(?:over\s+)?(?:to|onto)\s+{_LEAD}(?P<b>{_NAME})",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        re.compile(
            rf"\b(?:moved|moving|migrated|migrating|switched|switching)\s+off\s+{_LEAD}"
            rf"(?P<a>{_NAME})\s+(?:\([^()]*\)\s+)?(?:over\s+)?(?:to|onto|for)\s+{_LEAD}(?P<b>{_NAME})",
            re.IGNORECASE,
        ),
        True,
    ),
    (
        re.compile(
            rf"\breplac(?:ed|ing|e)\s+{_LEAD}(?P<a>{_NAME})\s+with\s+{_LEAD}(?P<b>{_NAME})",
            re.IGNORECASE,
        ),
        True,
    ),
    (
        re.compile(
            rf"\b(?:ditched|ditching|dropped|dumped|abandoned|left|leaving)\s+{_LEAD}(?P<a>{_NAME})\s+"
            rf"(?:for|in favou?r of)\s+{_LEAD}(?P<b>{_NAME})",
            re.IGNORECASE,
        ),
        True,
    ),
    (re.compile(rf"(?<![\w.+#-])(?P<a>{_WORD})\s*(?:→|->|=>)\s*(?P<b>{_NAME})"), False),
)
_LEADING_WORDS = lexicon.OPTION_DETERMINERS | lexicon.OPTION_EDGE_WORDS


@dataclass(frozen=True)
class Pivot:
    """One "from X to Y" statement: the options as written and their grouping key."""

    from_option: str
    to_option: str

    @property
    def key(self) -> tuple[str, str]:
        return normalise_option(self.from_option), normalise_option(self.to_option)


def normalise_option(name: str) -> str:
    """'the Airflow.' and 'airflow' are one option: lower case, no edge punctuation or
    leading articles/pronouns."""
    words = re.sub(r"[^\w.+#\s-]", " ", name).lower().split()
    while words and words[0] in _LEADING_WORDS:
        words = words[1:]
    return " ".join(words).strip(".-")


def _tidy(name: str) -> str:
    words = name.strip().rstrip(".,;:!?").split()
    while words and words[0].lower() in _LEADING_WORDS:
        words = words[1:]
    return " ".join(words)


def _named(option: str) -> bool:
    """An option written as a name ("Dagster", "k3s"; ``core.words.looks_like_name``)."""
    return any(looks_like_name(word, mid_sentence=True) for word in option.split())


def _is_option(name: str) -> bool:
    key = normalise_option(name)
    return (
        bool(key)
        and any(ch.isalpha() for ch in key)
        and key not in STOPWORDS
        and key not in lexicon.NOT_OPTIONS
    )


def find_pivots(text: str) -> list[Pivot]:
    """Every "switched from X to Y" / "replaced X with Y" / "X → Y" statement in ``text``.

    Weak verbs ("went from", "moved from") and bare arrows count only when an option looks like
    a name (a capital, digit, "." "+" or "#"): "went from bad to worse" is not a migration.
    Each (X, Y) pair counts once per text.
    """
    found: dict[tuple[str, str], Pivot] = {}
    for pattern, strong in _PIVOT_PATTERNS:
        for match in pattern.finditer(text):
            pivot = Pivot(_tidy(match.group("a")), _tidy(match.group("b")))
            if not (_is_option(pivot.from_option) and _is_option(pivot.to_option)):
                continue
            if pivot.key[0] == pivot.key[1]:
                continue
            if not strong and not (_named(pivot.from_option) or _named(pivot.to_option)):
                continue
            found.setdefault(pivot.key, pivot)
    return list(found.values())


# --- verdicts (the stance of each sentence comes from ``stance``) ------------------------------


TABLE_SENTENCE_CHARS = 200
"""A table row's pro or con is shortened to this many characters."""


def verdict(mentions: int, positive: int, negative: int, noun: str = "mention") -> str:
    """'7 mentions: mostly positive (4+ / 1−)' — the counts, then what they add up to.

    Counted over the sentences (or, with ``noun="reply"``, the replies) that take a side
    (``stance``); caveats count as negative."""
    if positive > negative * 2 and positive:
        mood = "mostly positive"
    elif negative > positive * 2 and negative:
        mood = "mostly negative"
    elif positive or negative:
        mood = "mixed"
    else:
        mood = "no clear sentiment"
    counted = noun if mentions == 1 else ("replies" if noun == "reply" else f"{noun}s")
    return f"{mentions} {counted}: {mood} ({positive}+ / {negative}−)"


# --- option mentions ------------------------------------------------------------------------


def option_pattern(option: str) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern for an option and its spelling variants
    ('Otter.ai' also matches 'otter ai' and 'Otter'). A described option ("phone recording
    app") also matches its head word ("phone") unless that word is generic ("home")."""
    words = option.strip().lower().split()
    head = [words[0]] if len(words) > 1 and len(words[0]) >= 4 else []
    head = [w for w in head if w not in STOPWORDS and w not in lexicon.GENERIC_HEADS]
    variants = sorted(
        {option.strip().lower(), *product_variants(option.strip()), *head}, key=len, reverse=True
    )
    alternatives = "|".join(re.escape(v).replace(r"\ ", r"[\s.-]?") for v in variants if v)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)
