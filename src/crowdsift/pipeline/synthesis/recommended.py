"""What the replies recommend, counted: the rows a "which should I buy" answer leads its table
with (pure).

A person reading a recommendation thread tallies the names the replies give: "three people
said Unifi, two said eero". This does the same, on three principles and no product list:

- **a name is spelled like one** (``looks_like_name``): capitalised mid-sentence, camel-cased,
  or mixing letters with digits or marks ("Unifi", "TP-Link", "Qwen3"); once a word is seen
  spelled so, every reply writing it counts, in any case ("eero");
- **words written together are one name** ("TP-Link Deco", "Google WiFi"): a word that mostly
  appears beside a more common one folds into it, and the row takes the phrase written most;
- **the question's own words are its context, not an answer**: a name holding one ("Python",
  "Netgear Orbi" when it asks about Orbi) is not counted; the options it offers have rows
  of their own.

A name counts once per reply (one enthusiastic reply is one vote), needs ``MIN_REPLIES`` replies
(one reply is an anecdote), and leans the way its sentences take a side (``option_stance``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from crowdsift.core.sentences import split_sentences, truncate_words
from crowdsift.core.words import is_stopword, looks_like_name, tokenize
from crowdsift.pipeline.synthesis import lexicon
from crowdsift.pipeline.synthesis.candidates import MAX_CITES, Item
from crowdsift.pipeline.synthesis.models import DraftRow
from crowdsift.pipeline.synthesis.specifics import TABLE_SENTENCE_CHARS, verdict
from crowdsift.pipeline.synthesis.stance import option_stance

MIN_REPLIES = 2
"""A name one reply gives is an anecdote; the table counts names at least this many give."""
MAX_RECOMMENDED = 5
"""Rows of names the replies give (beside the question's own options)."""
MAX_NAME_WORDS = 3
MOSTLY = 0.5
"""The share of uses that decides how a word is read: a word is a name when at least this share
of its mid-sentence uses are spelled like one, and part of a more common name ("Deco" in
"TP-Link Deco") when written beside it in at least this share of its replies."""

_EDGE = "\"'()[]{}<>,.;:!?*`“”‘’~"


def recommended_rows(
    items: Sequence[Item], question: str, *, options: Collection[str] = ()
) -> list[DraftRow]:
    """The names ``items``' replies give, most recommended first, each row counting the
    replies that name it: "4 replies: mostly positive (3+ / 0−)". ``options``: the question's
    compared options, which have rows of their own."""
    replies = [item for item in items if item.is_comment and not item.is_title and not item.asker]
    context = set(tokenize(question)) | {w for o in options for w in tokenize(o)}
    words = [_words_of(item.text) for item in replies]
    names = _name_words(words)
    phrases = {n: _names_in(reply, names) for n, reply in enumerate(words)}
    groups = _groups(phrases, context)
    tallies = [_tally(label, members, replies) for label, members in groups]
    kept = [t for t in tallies if len(t.leans) >= MIN_REPLIES]
    kept.sort(key=lambda t: (-(len(t.leans) - len(t.negative)), -len(t.positive), t.label))
    return [tally.row(_full_name(tally.label, replies)) for tally in kept[:MAX_RECOMMENDED]]


def _full_name(label: str, replies: Sequence[Item]) -> str:
    """The label with the capitalised word the replies mostly write before it ("Home
    Assistant" where "home" alone is an ordinary word)."""
    pattern = re.compile(rf"(?:\b([A-Z][\w-]*)\s+)?{re.escape(label)}(?![\w-])")
    before = Counter(m.group(1) for item in replies for m in pattern.finditer(item.text))
    word, count = before.most_common(1)[0] if before else (None, 0)
    if word and not is_stopword(word.lower()) and count * 2 > before.total():
        return f"{word} {label}"
    return label


@dataclass(frozen=True)
class _Word:
    """A word as written: whether it starts its sentence, whether a clause ends after it, and
    whether it is a model number (``_model_number``: a name, though only digits)."""

    text: str
    first: bool
    ends: bool
    model: bool = False


def _words_of(text: str) -> list[_Word]:
    words: list[_Word] = []
    for sentence in split_sentences(text):
        raws = sentence.split()
        for position, raw in enumerate(raws):
            word = raw.strip(_EDGE)
            if word:
                ends = raw.rstrip(_EDGE) != raw and raw.rstrip()[-1:] in ",.;:!?)"
                after = raws[position + 1].strip(_EDGE) if position + 1 < len(raws) else ""
                model = _model_number(word, after)
                if model:
                    word = word.removesuffix("s")  # "two 3090s" name the 3090
                words.append(_Word(word, position == 0, ends, model))
    return words


def _model_number(word: str, after: str) -> bool:
    """A four-digit number that names a model ("3090", "two 5060s"): not a year, not a round
    amount ("1000"), not a quantity (a unit follows: "1500 W")."""
    digits = word[:-1] if word.endswith("s") else word
    if len(digits) != 4 or not digits.isdigit() or digits.endswith("00"):
        return False
    year = digits.startswith(("19", "20"))
    return not year and after.lower().rstrip("s") not in lexicon.UNITS


def _name_words(replies: Sequence[Sequence[_Word]]) -> set[str]:
    """Words the replies mostly spell as names (lower case): "Wyze" is, "Camera" in a
    title-cased phrase is not, since "camera" is written lower case everywhere else."""
    seen: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for reply in replies:
        for word in reply:
            if word.first:
                continue  # a sentence's first word is capitalised whatever it is
            seen[word.text.lower()] += 1
            named[word.text.lower()] += _name_word(word, mid_sentence=True)
    return {word for word, count in named.items() if count >= MOSTLY * seen[word]}


def _names_in(reply: Sequence[_Word], names: Collection[str]) -> list[tuple[str, ...]]:
    """The reply's names as written: runs of name words, at most ``MAX_NAME_WORDS``."""
    found: list[tuple[str, ...]] = []
    run: list[str] = []
    for word in reply:
        if word.first and run:
            found.append(tuple(run[:MAX_NAME_WORDS]))
            run = []
        if word.text.lower() in names and _name_word(word, mid_sentence=not word.first):
            run.append(word.text)
        elif run:
            found.append(tuple(run[:MAX_NAME_WORDS]))
            run = []
        if word.ends and run:
            found.append(tuple(run[:MAX_NAME_WORDS]))
            run = []
    if run:
        found.append(tuple(run[:MAX_NAME_WORDS]))
    return found


def _name_word(written: _Word, *, mid_sentence: bool) -> bool:
    """A name-like word, or a model number (``_model_number``), that is not shouting ("FULL"),
    a plural acronym ("GPUs"), a quantity ("16GB"), a flag, a path, a link, or a word that
    describes any product ("Pro", "Mini": ``lexicon.GENERIC_HEADS``) standing alone."""
    if written.model:
        return True
    word = written.text
    if (
        not looks_like_name(word, mid_sentence=mid_sentence)
        or word.lower() in lexicon.GENERIC_HEADS
    ):
        return False
    if len(word) <= 2 and not word.isupper():
        return False  # "Ti" of "5060 Ti", "Go": a two-letter name is written in capitals (LG)
    if word.startswith("-") or any(mark in word for mark in "/=\\@_"):
        return False  # a flag, path, link, setting or identifier (snake_case) is not a name
    letters = [ch for ch in word if ch.isalpha()]
    shouting = len(letters) > 1 and all(ch.isupper() for ch in letters) and word.isalpha()
    if word.isalpha() and word.endswith("s") and len(word) > 2 and word[:-1].isupper():
        return False  # "LLMs", "GPUs": a kind of thing, not one
    quantity = bool(re.fullmatch(r"[\d.,]+[a-zA-Z]{0,3}", word))
    return not shouting and not quantity


def _groups(
    phrases: dict[int, list[tuple[str, ...]]], context: Collection[str]
) -> list[tuple[str, set[str]]]:
    """(label, words) per name: words that are the question's own are dropped, a word mostly
    written beside a more common one folds into it, and the label is the phrase written most."""
    replies_of: dict[str, set[int]] = defaultdict(set)
    beside: dict[str, Counter[str]] = defaultdict(Counter)
    written: dict[str, Counter[str]] = defaultdict(Counter)
    own: dict[str, Counter[str]] = defaultdict(Counter)
    for reply, names in phrases.items():
        for name in names:
            if any(_context(w.lower(), context) for w in name):
                continue  # "Netgear Orbi" is the question's Orbi; "16 GB" its own card
            words = [_family(w) for w in name if not is_stopword(w.lower())]
            spelled = dict(zip(words, (w for w in name if not is_stopword(w.lower())), strict=True))
            for word in words:
                replies_of[word].add(reply)
                written[word][" ".join(name)] += 1
                own[word][_family_spelling(spelled[word], word)] += 1
                beside[word].update(w for w in set(words) if w != word)
    order = sorted(replies_of, key=lambda w: (-len(replies_of[w]), w))
    head: dict[str, str] = {}
    for word in order:
        partners = [p for p, n in beside[word].items() if p in head and n >= MOSTLY * len(
            replies_of[word])]  # fmt: skip
        head[word] = head[partners[0]] if partners else word
    members: dict[str, set[str]] = defaultdict(set)
    for word, root in head.items():
        members[root].add(word)
    return [(_label(written[root], own[root]), words) for root, words in members.items()]


def _label(phrases: Counter[str], spellings: Counter[str]) -> str:
    """The phrase the replies write most ("Blue Iris"), or when none is written twice, the
    name's own most common spelling ("Devstral", not one reply's file name)."""
    phrase, count = phrases.most_common(1)[0]
    return phrase if count >= MIN_REPLIES else spellings.most_common(1)[0][0]


def _family_spelling(written: str, family: str) -> str:
    """How a reply spelled the family part of a name ("Devstral" of "Devstral-Small-2507")."""
    return written[: len(family)] if written.lower().startswith(family) else written


def _family(written: str) -> str:
    """A variant's family, lower case, when its first part is spelled as a name of three or
    more characters: "Devstral-Small-2507" is Devstral ("TP-Link" and "llama-server" stay)."""
    first = re.split(r"[-.]", written, maxsplit=1)[0]
    named = len(first) >= 3 and first != written and looks_like_name(first, mid_sentence=True)
    return (first if named else written).lower()


def _context(word: str, context: Collection[str]) -> bool:
    """A word of the question (or of its options): every token of it is one."""
    tokens = tokenize(word)
    return bool(tokens) and all(t in context for t in tokens)


@dataclass(frozen=True)
class _Tally:
    """One name and the replies naming it: (reply, its lean, its longest sentence naming it)."""

    label: str
    leans: list[tuple[Item, str, str]]

    @property
    def positive(self) -> list[tuple[Item, str, str]]:
        return [found for found in self.leans if found[1] == "positive"]

    @property
    def negative(self) -> list[tuple[Item, str, str]]:
        return [found for found in self.leans if found[1] == "negative"]

    def row(self, label: str) -> DraftRow:
        """ "4 replies: mostly positive (3+ / 0−)", the best-voted replies naming it cited
        first, and its best-voted sentences for and against."""
        pros = sorted(self.positive, key=_votes)[:2]
        cons = sorted(self.negative, key=_votes)[:2]
        voted = sorted(self.leans, key=_votes)  # the best-voted replies naming it lead
        cites = [item.marker for item, _, _ in [*voted[:3], *pros, *cons, *voted]]
        return DraftRow(
            option=label,
            verdict=verdict(len(self.leans), len(self.positive), len(self.negative), "reply"),
            pros=[truncate_words(s, TABLE_SENTENCE_CHARS) for _, _, s in pros],
            cons=[truncate_words(s, TABLE_SENTENCE_CHARS) for _, _, s in cons],
            cites=list(dict.fromkeys(cites))[:MAX_CITES],
        )


def _votes(found: tuple[Item, str, str]) -> int:
    return -found[0].score


def _tally(label: str, words: set[str], replies: Sequence[Item]) -> _Tally:
    """Every reply naming one of ``words``, with its lean toward the name."""
    pattern = re.compile(
        r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        + r")(?:[-.]\w[\w.-]*)?s?(?![\w-])",  # a variant ("Devstral-Small-2507") or plural
        re.IGNORECASE,
    )  # fmt: skip
    leans: list[tuple[Item, str, str]] = []
    for item in replies:
        mentions = [s for s in split_sentences(item.text) if pattern.search(s)]
        if mentions:
            leans.append((item, _lean(mentions, pattern), max(mentions, key=len)))
    return _Tally(label, leans)


def _lean(sentences: Sequence[str], pattern: re.Pattern[str]) -> str:
    """One reply's lean toward a name: the side its sentences naming it take, on balance."""
    sides = Counter(option_stance(s, pattern) for s in sentences)
    plus, minus = sides["positive"], sides["negative"] + sides["caveat"]
    if plus > minus:
        return "positive"
    return "negative" if minus > plus else "neutral"
