"""The answer engine's word lists, as data with a reason per entry.

The stages (``stance``, ``specifics``, ``claims``, and ``intent`` for the question) keep their
sentence *shapes* as regexes beside the code that reads them; the *words* those shapes and
checks look for live here, each list with the one principle that puts a word on it. A word
earns its place by that principle, never by one phrasing of one thread: a rule that fixes one
sentence is a test case, not an entry.

An entry is a ``WordList`` (words or multi-word phrases) or a ``ValenceTable`` (words and the
valence VADER should read them with). ``phrase_pattern`` turns lists into the whole-phrase
regex a stage searches with, so a word is listed once and every pattern built from it agrees.
``core.words.STOPWORDS`` stays where it is: every stage, not only the answer, shares it.
Pure data, built once at import; lookups are frozensets and dicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class WordList:
    """Words or phrases (lower case) that share one reason to be listed."""

    reason: str
    words: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, reason: str, words: Iterable[str]) -> WordList:
        return cls(reason, frozenset(w.lower() for w in words))

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.words))

    def __or__(self, other: WordList) -> WordList:
        return WordList(f"{self.reason}; {other.reason}", self.words | other.words)


@dataclass(frozen=True)
class ValenceTable:
    """Words and the valence (VADER's −4 … 4 scale) they carry, for one reason."""

    reason: str
    valences: Mapping[str, float]

    @classmethod
    def of(cls, reason: str, valences: Mapping[str, float]) -> ValenceTable:
        return cls(reason, MappingProxyType(dict(valences)))


def _spelling(phrase: str) -> str:
    """A phrase as people type it: apostrophes optional or typographic ("dont", "don’t"),
    a space or hyphen between words optional ("rock-solid", "gamechanger")."""
    parts = [re.escape(word).replace("'", "['’]?") for word in re.split(r"[\s-]+", phrase)]
    return r"(?:\s+|-)?".join(parts)


def alternation(*lists: WordList) -> str:
    """The lists' phrases as one non-capturing regex alternation, longest first (so "except
    when" is tried before "except"), without boundaries."""
    phrases = sorted({p for entry in lists for p in entry.words}, key=lambda p: (-len(p), p))
    return "(?:" + "|".join(_spelling(p) for p in phrases) + ")"


def phrase_pattern(*lists: WordList) -> re.Pattern[str]:
    """Any phrase of the lists as a whole phrase (never inside a longer word), any case, its
    last word also with a plural s ("caveat" reads "caveats"): lists hold the singular."""
    return re.compile(rf"(?<!\w){alternation(*lists)}s?(?!\w)", re.IGNORECASE)


# --- stance: what VADER reads wrong ------------------------------------------------------------

COMMUNITY_VALENCE = ValenceTable.of(
    "community vocabulary VADER lacks, or scores far from how people rate software and gear "
    "with it",
    {
        "saner": 2.0, "unmatched": 2.0, "flawlessly": 2.5, "reliable": 1.8, "painless": 2.0,
        "snappy": 1.5, "intuitive": 1.5, "crashed": -1.8, "crashes": -1.8, "buggy": -2.0,
        "flaky": -1.8, "laggy": -1.5, "clunky": -1.5, "gimmicky": -1.2, "legacy": -0.8,
        "awkward": -1.2, "harder": -1.0, "slower": -1.0, "pricey": -1.0, "overpriced": -2.0,
        "bloated": -1.5, "footgun": -2.0, "footguns": -2.0,
    },
)  # fmt: skip
NOT_PRAISE = WordList.of(
    "words VADER reads as praise that Reddit mostly uses otherwise ('by hand', 'looks like')",
    ("hand", "like"),
)
PRAISE_IDIOMS = WordList.of(
    "idioms of praise VADER reads as neutral or negative ('night and day', 'killer feature')",
    (
        "non-issue", "never looked back", "haven't looked back", "night and day", "rock solid",
        "just works", "no brainer", "game changer", "worth it", "worth every penny",
        "worth the money", "pays for itself",
    ),
)  # fmt: skip
COMPLAINT_IDIOMS = WordList.of(
    "idioms of complaint VADER reads as neutral or praise ('a solution looking for a problem')",
    (
        "solution looking for a problem", "fell apart", "falls apart", "falling apart",
        "not worth", "waste of money", "waste of time", "nightmare", "mess",
    ),
)  # fmt: skip
LIMITING = WordList.of(
    "what limits the praise before it to some cases: 'great until you need …' is a caveat",
    (
        "until", "unless", "except", "only if", "only when", "only for", "as long as",
        "once you need", "once you hit", "once you have", "once you get", "the moment you",
        "breaks down when", "breaks down once", "breaks down at", "break down when",
    ),
)  # fmt: skip
ADVERSATIVES = WordList.of(
    "conjunctions that turn a clause against the one before it: 'fine, but painful to test'",
    ("but", "though", "although", "however", "yet", "whereas"),
)
SET_AGAINST = WordList.of(
    "what follows is what the sentence sets its subject against, not the subject's mood",
    ("unlike", "as opposed to", "instead of"),
)

# --- specifics: quantities and options ----------------------------------------------------------

UNITS = WordList.of(
    "units a measured quantity is written in (singular; a plural s is read with any): a number "
    "with one is a specific a reader can use",
    (
        "kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib", "kbps", "mbps", "gbps", "byte",
        "token", "tok/s", "t/s", "it/s", "param", "ms", "sec", "second", "s", "min", "minute", "h",
        "hr", "hour", "day", "hz", "mhz", "ghz", "w", "wh", "kw", "kwh", "mah", "v", "fps", "rpm",
        "dpi", "db", "mm", "cm", "m", "km", "inch", "inches", "ft", "kg", "g", "lb", "oz", "°c",
        "°f", "c", "%", "x", "k", "b",
    ),
)  # fmt: skip
OPTION_DETERMINERS = WordList.of(
    "articles and possessives before an option's name are not part of it ('the Airflow')",
    ("the", "a", "an", "our", "my", "their", "his", "her"),
)
PLAIN_MODIFIERS = WordList.of(
    "adjectives that say an option is the ordinary kind, not another one ('plain cron')",
    ("plain", "old"),
)
OPTION_EDGE_WORDS = WordList.of(
    "what a loose match drags in at an option's start: a subject or the move's preposition",
    ("we", "i", "you", "to", "from"),
)
NOT_OPTIONS = WordList.of(
    "placeholders and spans of time: 'went from nothing to everything', 'from day one' "
    "(pronouns are stop words, rejected with them)",
    (
        "another", "anything", "nothing", "everything", "scratch", "home", "work", "time",
        "day", "days", "week", "weeks", "month", "months", "year", "years",
    ),
)  # fmt: skip
GENERIC_HEADS = WordList.of(
    "adjectives that describe any product: the first word of 'smart plug' names no option "
    "(stop words such as 'good' are never heads anyway)",
    ("home", "smart", "open", "free", "cheap", "small", "large", "big", "mini", "pro", "new",
     "old"),
)  # fmt: skip
DISSENT = WordList.of(
    "what a reply says when it disagrees with the thread or warns off the favourite",
    (
        "disagree", "i disagree", "hard disagree", "not sure i agree", "unpopular opinion",
        "not worth", "overrated", "i'd avoid", "avoid it", "don't buy", "counter point",
        "i wouldn't", "not true", "that's wrong",
    ),
)  # fmt: skip

# --- claims: what a quotable sentence is --------------------------------------------------------

IMPERATIVES = WordList.of(
    "verbs that open an instruction when a sentence starts with them ('Reset the hub …')",
    (
        "use", "set", "turn", "check", "make", "keep", "run", "try", "put", "add", "remove",
        "install", "reinstall", "uninstall", "update", "upgrade", "downgrade", "restart", "reboot",
        "reset", "toggle", "force-close", "close", "open", "enable", "disable", "export", "import",
        "sync", "pair", "clear", "delete", "start", "stop", "pick", "choose", "get", "buy",
        "avoid", "do", "don't", "go", "look", "switch", "move", "test", "back", "format", "hold",
        "press", "tap", "connect", "disconnect", "plug", "unplug", "let", "create", "configure",
        "change", "increase", "decrease", "limit", "wait", "skip", "ignore", "be", "apply",
        "mount", "flash", "wipe", "grab", "consider", "read", "follow", "power", "unmount", "drag",
        "copy", "paste", "select", "uncheck", "swap", "replace", "call", "return", "measure",
        "tighten", "loosen", "pre-drill", "build",
    ),
)  # fmt: skip
AUXILIARIES = WordList.of(
    "a verb (or 'of') right after the first word makes that word a subject, not an "
    "imperative: 'Support was great', 'Build quality is great'",
    ("is", "are", "was", "were", "has", "have", "had", "does", "did", "of"),
)  # fmt: skip
THANKS = WordList.of(
    "thanks: a short sentence of them answers nothing",
    ("thanks", "thank you", "thx", "ty", "appreciate it", "appreciated it", "cheers",
     "much appreciated"),
)  # fmt: skip
ASSENT = WordList.of(
    "one word of assent: a whole sentence of it is a reaction, before a comma a lead-in to cut",
    ("agreed", "yep", "yeah", "yup", "this", "exactly"),
)
REACTIONS = WordList.of(
    "a reaction that is the whole sentence ('Nope.', 'It depends.') answers nothing alone",
    ("yes", "no", "nope", "true", "same", "huh", "eh", "ok", "okay", "lol", "wow", "honestly",
     "it depends"),
)  # fmt: skip
AGREEMENT = WordList.of(
    "agreement that opens a reply: alone it is a reaction, before a claim a lead-in to cut",
    ("same here", "can confirm", "+1", "+1 to this", "100% this", "seconding this"),
)  # fmt: skip
CONFIRMED_FIX = WordList.of(
    "what an author says when something worked: their instruction is a fix, and an asker "
    "who says it reports the answer",
    (
        "fixed it", "fixes it", "solved", "that fixed", "this fixed", "did the trick",
        "worked for me", "works every time", "fixed the issue", "fixed the problem",
        "fixed my issue", "fixed my problem", "the fix is", "the fix was", "what worked",
    ),
)  # fmt: skip
DECISION = WordList.of(
    "verbs and phrases of choosing: an instruction with one says how to decide",
    (
        "pick", "choose", "go with", "start with", "stick with", "stay with", "switch to",
        "try both", "test both", "either one", "either is", "either works", "whichever",
        "depends on",
    ),
)  # fmt: skip
RISK = WordList.of(
    "words of failure, loss, cost or danger: a sentence with one (not negated) is a caution "
    "(so is one with a symptom, ``SYMPTOMS``)",
    (
        "broke", "breaks", "died", "dead", "returned", "refund", "refunded", "risk", "risky",
        "overrated", "subscription", "privacy", "beware", "regret", "downside", "drawback",
        "scam", "buggy", "unreliable", "not worth", "hidden fee", "unsafe", "dangerous",
        "hazard", "warranty", "caveat", "lost", "silently", "harder", "worse", "weaker",
        "lag behind", "lags behind", "no longer", "don't work", "won't", "can't",
    ),
)  # fmt: skip

SYMPTOMS = WordList.of(
    "what a broken thing does: a question reporting one wants a fix, an instruction for one "
    "is a fix",
    (
        "error", "errors", "fails", "failing", "failed", "failure", "crash", "crashes",
        "crashed", "crashing", "broken", "bug", "freeze", "freezes", "freezing", "hangs",
        "hanging", "stutters", "stuttering", "flickers", "flickering", "overheats",
        "overheating", "stuck", "not working", "doesn't work", "stopped working", "disconnects",
        "shuts down", "shuts off", "turns off",
    ),
)  # fmt: skip

# --- the question: compared options and search queries ------------------------------------------

LEAD_VERBS = WordList.of(
    "verbs that open an option ('learn Rust', 'stick with Airflow') but are never one; not "
    "'go', which is also a language ('Rust or Go')",
    (
        "learn", "choose", "pick", "try", "prefer", "switch", "move", "migrate", "start",
        "stick", "stay", "keep", "with", "install", "configure", "setup", "set", "fix",
        "update", "upgrade", "reset", "restart", "remove", "uninstall", "delete", "add",
        "enable", "disable", "run", "build", "create", "make", "replace", "repair", "wait",
    ),
)  # fmt: skip
QUERY_CONNECTORS = WordList.of(
    "words and symbols that only join terms: left at a query's edge by a removed term, "
    "they search for nothing",
    ("and", "or", "with", "for", "using", "via", "in", "on", "of", "to", "the", "a", "an", "+",
     "&", "/", "-", "vs"),
)  # fmt: skip

ENTRIES: Mapping[str, WordList | ValenceTable] = MappingProxyType(
    {
        name: value
        for name, value in sorted(globals().items())
        if isinstance(value, (WordList, ValenceTable))
    }
)
"""Every entry by name, for tests and for reading the lexicon as a whole."""
