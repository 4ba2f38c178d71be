"""Stance: is a sentence for or against something, or a caveat? (vaderSentiment, plus our rules)

VADER is a rule-based sentiment model made for social-media text: it ships its lexicon (no
download), knows negation ("not good", "never crashed"), intensifiers and "but". On top of it:

- **idioms** of the communities we read, which VADER scores as neutral or the wrong way round
  ("a non-issue", "haven't looked back", "night and day", "rock solid", "a solution looking for a
  problem"; listed in ``lexicon`` with the words VADER lacks): each is replaced by a token
  carrying its valence before VADER reads the sentence, so VADER's own negation and "but"
  rules still apply around it;
- **contrast**: a positive clause limited by "until", "unless", "except", "only if", "as long
  as" ("Prefect is great until you need …"), or followed by "but / though / although" and a
  negative clause ("fine, but painful to test"), is a **caveat**, never praise;
- **stance toward one option** when a sentence names several: moves ("switched from X to Y",
  "stayed on X", "moved off X"), comparisons ("X is saner than Y", "pick X over Y"), then
  the clauses naming the option.

Pure and deterministic; the analyzer is built once per process (~10 ms).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from crowdsift.pipeline.synthesis import lexicon
from crowdsift.pipeline.synthesis.lexicon import phrase_pattern
from crowdsift.pipeline.synthesis.specifics import find_pivots

Polarity = Literal["positive", "negative", "caveat", "neutral"]

THRESHOLD = 0.25
"""|compound| at or above which a sentence takes a side (VADER's own ±0.05 counts any
lexicon word, "fine" included, as a stance)."""

_GOOD, _BAD = "crowdsiftgood", "crowdsiftbad"
_IDIOM_VALENCE = {_GOOD: 2.5, _BAD: -2.5}
_IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (phrase_pattern(lexicon.PRAISE_IDIOMS), _GOOD),
    # a person liking something: VADER's "like" is off (``lexicon.NOT_PRAISE``), the verb is not
    (
        re.compile(
            r"\b(?:i|we|you|they|people) (?:really |still |also |just )?(?:like|liked)\b", re.I
        ),
        _GOOD,
    ),
    (phrase_pattern(lexicon.COMPLAINT_IDIOMS), _BAD),
)
"""Praise first: "not worth it" becomes "not" + praise, which VADER's negation reads."""
_LIMITING = phrase_pattern(lexicon.LIMITING)
_ADVERSATIVE = phrase_pattern(lexicon.ADVERSATIVES)
CLAUSE = re.compile(
    r"[,;:()]|[.!?](?=\s|$)|\s[-–—]\s|\b(?:but|while|whereas|unlike|though|although|however)\b",
    re.I,
)
"""Where a clause ends: what a negation or a stance toward an option reaches no further than."""


@dataclass(frozen=True)
class Stance:
    """A sentence's lean: VADER's compound score after our rules, and what it adds up to."""

    score: float
    polarity: Polarity

    @property
    def takes_side(self) -> bool:
        return self.polarity != "neutral"


@lru_cache(maxsize=1)
def _analyzer() -> SentimentIntensityAnalyzer:
    analyzer = SentimentIntensityAnalyzer()
    analyzer.lexicon.update(_IDIOM_VALENCE)
    analyzer.lexicon.update(lexicon.COMMUNITY_VALENCE.valences)
    for word in lexicon.NOT_PRAISE:
        analyzer.lexicon.pop(word, None)
    return analyzer


def _with_idioms(text: str) -> str:
    for pattern, token in _IDIOMS:
        text = pattern.sub(token, text)
    return text


def compound(text: str) -> float:
    """VADER's compound score (−1 … 1) of ``text`` with the community idioms read right and
    names read as names (``_without_names``)."""
    if not text.strip():
        return 0.0
    plain = text.replace("’", "'").replace("‘", "'")  # VADER's negations ("can't") are ASCII
    return float(_analyzer().polarity_scores(_with_idioms(_without_names(plain)))["compound"])


_WORD = re.compile(r"(?P<before>[(\"'“‘]*)(?P<word>\S*?)(?P<after>[.,;:!?)\"'”’]*)")
_TITLE_WORD = re.compile(r"[A-Z][a-z][\w'-]*")
_SENTENCE_END = (".", "!", "?", ":")


def _without_names(text: str) -> str:
    """``text`` with its mid-sentence capitalised words (a name: "War Thunder", "Emergency
    Restart", "Dead Cells") read as a neutral word: a name's words say nothing of how the
    writer feels. A sentence's first word, "I" and shouted words (VADER reads emphasis) stay."""
    words = text.split(" ")
    first = True
    for index, token in enumerate(words):
        parts = _WORD.fullmatch(token)
        if parts is not None and not first and _TITLE_WORD.fullmatch(parts["word"]):
            words[index] = f"{parts['before']}Name{parts['after']}"
        first = token.endswith(_SENTENCE_END) or token.endswith("\n") or not token
    return " ".join(words)


def stance(text: str) -> Stance:
    """Positive, negative, caveat ("great until you need Y", "fine, but painful") or neutral."""
    score = compound(text)
    limiting = _LIMITING.search(text)
    if limiting and compound(text[: limiting.start()]) >= THRESHOLD:
        return Stance(score, "caveat")
    contrast = _ADVERSATIVE.search(text)
    if contrast:
        before, after = compound(text[: contrast.start()]), compound(text[contrast.end() :])
        if before >= THRESHOLD and after <= -THRESHOLD:
            return Stance(score, "caveat")
    than = _THAN.search(text)
    if than and abs(score) < THRESHOLD:  # "X is much nicer than people complain about"
        score = compound(text[: than.start()])
    unlike = _UNLIKE.search(text)
    if unlike and unlike.start() > 0:  # "X covers it all, unlike the shitty routers": about X
        score = compound(text[: unlike.start()])
    if score >= THRESHOLD:
        return Stance(score, "positive")
    if score <= -THRESHOLD:
        return Stance(score, "negative")
    return Stance(score, "neutral")


# --- stance toward one option -----------------------------------------------------------------

_KEEP = re.compile(
    r"\b(?:stayed|stay|staying|stuck|stick|sticking|went back|going back|moved back|switched "
    r"back)\s+(?:on|with|to)\s+(?P<o>[\w.+#-]+(?:\s+[A-Z0-9][\w.+#-]*)?)",
    re.IGNORECASE,
)
_LEAVE = re.compile(
    r"\b(?:moved|moving|migrated|migrating|switched|switching|left|leaving|ditched|dropped|"
    r"abandoned)\s+(?:off|away from|from)?\s*(?P<o>[\w.+#-]+(?:\s+[A-Z0-9][\w.+#-]*)?)",
    re.IGNORECASE,
)
_PREFER = re.compile(
    r"\b(?:pick|picked|choose|chose|prefer|preferred|go with|went with|recommend)\s+"
    r"(?P<a>[\w.+#-]+)\s+over\s+(?P<b>[\w.+#-]+)",
    re.IGNORECASE,
)
_CATCHING_UP = re.compile(r"\bcatching up (?:to|with)\s+(?P<o>[\w.+#'-]+)", re.IGNORECASE)
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)
_UNLIKE = phrase_pattern(lexicon.SET_AGAINST)


def option_stance(
    text: str, pattern: re.Pattern[str], others: Sequence[re.Pattern[str]] = ()
) -> Polarity:
    """The stance ``text`` takes toward the option ``pattern`` matches.

    Explicit relations first: a move from the option is against it and a move to it (or
    staying on it) for it; "X is saner than Y" and "pick X over Y" are for X and against Y.
    Otherwise, when other options are named too, only the clauses naming this one count
    ("Otter is great but Plaud drains the battery" is positive about Otter only).
    """
    related = _relation(text, pattern)
    if related is not None:
        return related
    if not any(other.search(text) for other in others):
        return stance(text).polarity
    clauses = [c for c in CLAUSE.split(text) if c and pattern.search(c)]
    polarities = {stance(c).polarity for c in clauses} - {"neutral"}
    if not polarities:
        return "neutral"
    if len(polarities) == 1:
        return next(iter(polarities))
    return "caveat" if "positive" in polarities else "negative"


def _relation(text: str, pattern: re.Pattern[str]) -> Polarity | None:
    """How ``text`` relates the option ``pattern`` names to another: moved to or off it, kept
    it, preferred it, or compared it ("nicer than"); None when it does not say."""
    return _moved(text, pattern) or _preferred(text, pattern) or _compared(text, pattern)


def _moved(text: str, pattern: re.Pattern[str]) -> Polarity | None:
    """A move to the option (or staying with it) leans for it; a move off it, against it."""
    for pivot in find_pivots(text):
        if pattern.fullmatch(pivot.to_option) or pattern.search(pivot.to_option):
            return "positive"
        if pattern.search(pivot.from_option):
            return "negative"
    for match in _KEEP.finditer(text):
        if pattern.search(match.group("o")):
            return "positive"
    for match in _LEAVE.finditer(text):
        if pattern.search(match.group("o")) and not _KEEP.search(text[match.start() :]):
            word = text[match.start() : match.end()].lower()
            if " to " not in word:
                return "negative"
    for match in _CATCHING_UP.finditer(text):
        if pattern.search(match.group("o")):
            return "positive"  # "X is catching up to Dagster's ideas": Dagster led
    return None


def _preferred(text: str, pattern: re.Pattern[str]) -> Polarity | None:
    """ "A over B": for A, against B."""
    for match in _PREFER.finditer(text):
        if pattern.search(match.group("a")):
            return "positive"
        if pattern.search(match.group("b")):
            return "negative"
    return None


def _compared(text: str, pattern: re.Pattern[str]) -> Polarity | None:
    """ "A is nicer than B": the sentence's lean for the option before "than", flipped after."""
    than = _THAN.search(text)
    if than:
        before, after = text[: than.start()], text[than.end() :]
        in_before, in_after = pattern.search(before), pattern.search(after)
        if in_before and in_after:
            return None  # "Airflow 2 is nicer than the Airflow people complain about"
        if in_before or in_after:
            lean = stance(before).polarity
            if lean in {"positive", "negative"}:
                flipped: Polarity = "negative" if lean == "positive" else "positive"
                return lean if in_before else flipped
    return None
