"""Does the evidence discuss the question's subject? Pure: question + analysis + texts → verdict.

The synthesis abstains, rather than summarising unrelated posts, when the question's subject
never appears in what was fetched. The formulation reads the subject once
(``derive_subject``) and it travels in ``QueryAnalysis.subject``. The subject is, in order:

- the options of a comparison (``QueryAnalysis.compared``) and the products the question names
  (capitalised mid-sentence, camel-cased, or carrying a model number: "Sony WH-1000XM6",
  "Plaud NotePin", "DCF887"). A name with a model number is mentioned only when its model
  number is ("a cheap Sony voice recorder" does not discuss the WH-1000XM6), and when the
  question names a model, only model names count; any other name is mentioned when its whole,
  its first word or a camel-cased word of it is ("Plaud" discusses the Plaud Note);
- without a named product, the question's content terms (its key phrases and words, minus
  words every question uses: "keep", "fix", "help" …); with none left, or for a question in
  another language, nothing is judged.

The subject is discussed when any of it appears in a post title or body, a comment, or a
video or product text. Texts and terms are compared as word tokens, lower case, punctuation
dropped; adjacent tokens may join ("WH 1000 XM6", "WH1000XM6" and "wh-1000xm6" are one name;
"Note Pin" is "NotePin") and a plural "s" does not count. When unsure, the verdict says
discussed: a false abstention hides a real answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from crowdsift.core.words import STOPWORDS, is_acronym, tokenize
from crowdsift.pipeline.reddit.models import DrilledThread, QueryAnalysis, Subject
from crowdsift.pipeline.reddit.topicality import GENERIC_WORDS, key_phrases
from crowdsift.sources.models import EvidenceItem

__all__ = [
    "NOT_A_QUESTION",
    "Subject",
    "SubjectVerdict",
    "abstention_sentence",
    "derive_subject",
    "evidence_texts",
    "judge_subject",
    "looked_in",
    "mentions",
    "question_subject",
    "reads_as_word_salad",
    "tokens",
]

SALAD_MIN_WORDS = 20
"""Shorter input may be a keyword query ("rtx 3090 vs 4090 70b q4 speed"): judged by its
evidence, not its grammar."""
SALAD_FUNCTION_SHARE = 0.15
"""Sentences need function words ("the", "of", "is", "и", "в"): in questions people ask they
are a third or more of the words, in a heap of keywords far fewer."""
SALAD_REPEAT_WORDS = 60
SALAD_DISTINCT_SHARE = 0.25
"""A long text using a quarter as many distinct words as words repeats a small vocabulary
over and over; prose, even a long pasted post, uses about twice that share."""
_FUNCTION_WORD_LANGUAGES = frozenset({"en", "ru"})
"""The languages ``STOPWORDS`` covers; any other is never judged by it."""
NOT_A_QUESTION = (
    "This reads as a heap of words rather than a question, so nothing was answered. Ask it as "
    'a sentence, e.g. "Which cordless drill should I buy for concrete?"'
)


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*(?:[.+#-][^\W_]+)*[+#]?")
_SENTENCE_BREAK = re.compile(r"[.!?;:]\s+|\n+")
_PLURAL_SAFE = ("ss", "us", "is")
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)*[^\W\d_]{0,4}", re.IGNORECASE)


@dataclass(frozen=True)
class SubjectVerdict:
    """Whether the evidence discusses the subject; ``subject`` is None when nothing was judged."""

    discussed: bool
    subject: Subject | None = None


# --- Normalisation ------------------------------------------------------------------------------


def _stem(token: str) -> str:
    """A light plural strip: "starters" → "starter", "batteries" → "battery"; "glass" stays."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(_PLURAL_SAFE):
        return token[:-1]
    return token


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, punctuation and hyphens dropped, plurals stripped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [_stem(t) for t in tokenize(folded)]


def mentions(text_tokens: Sequence[str], term: Sequence[str]) -> bool:
    """Does ``term`` occur in ``text_tokens``, letting adjacent tokens on either side join?

    ``("wh", "1000xm6")`` is found in ``wh 1000 xm6``, ``wh1000xm6`` and ``wh-1000xm6``; it is
    never found inside a longer token ("notepin" does not mention "note").
    """
    target = "".join(term)
    if not target:
        return False
    for start, first in enumerate(text_tokens):
        if not target.startswith(first):
            continue
        joined = first
        index = start
        while len(joined) < len(target) and index + 1 < len(text_tokens):
            index += 1
            joined += text_tokens[index]
            if not target.startswith(joined):
                break
        if joined == target:
            return True
    return False


# --- The subject ----------------------------------------------------------------------------------


def _is_name_word(word: str, first_in_sentence: bool) -> bool:
    """A word of a product's name: a model number, camel case or a mid-sentence capital. Not
    ``looks_like_name``'s wider net: a hyphen or dot alone ("amp-hour", "e.g.") names no
    product a thread must mention; nor an acronym ("AI", "NAS": a topic) or an amount ("16GB",
    "7B", "300W")."""
    lowered = word.casefold().replace("’", "'")
    if lowered.split("'")[0] in STOPWORDS or not any(ch.isalpha() for ch in word) or len(word) < 2:
        return False
    if is_acronym(word) or _QUANTITY.fullmatch(word):
        return False
    camel = word[1:] != word[1:].lower()
    return (
        any(ch.isdigit() for ch in word) or camel or (not first_in_sentence and word[:1].isupper())
    )


def _names(question: str) -> list[list[str]]:
    """Runs of product-like words, as written ("Sony", "WH-1000XM6"); a bare number continues a
    name ("iPhone 15") but never starts one."""
    names: list[list[str]] = []
    for sentence in _SENTENCE_BREAK.split(question):
        run: list[str] = []
        for index, word in enumerate(_WORD.findall(sentence)):
            if _is_name_word(word, index == 0) or (run and word.isdigit()):
                run.append(word)
                continue
            if run:
                names.append(run)
            run = []
        if run:
            names.append(run)
    return names


def _model_terms(words: Sequence[str]) -> list[tuple[str, ...]]:
    """A name's model numbers: words mixing letters and digits ("WH-1000XM6"), and a bare
    number with the word before it ("iPhone 15")."""
    terms: list[tuple[str, ...]] = []
    for index, word in enumerate(words):
        if not any(ch.isdigit() for ch in word):
            continue
        if any(ch.isalpha() for ch in word):
            terms.append(tuple(tokens(word)))
        elif index > 0:
            terms.append(tuple(tokens(f"{words[index - 1]} {word}")))
    return [t for t in terms if t]


def _name_terms(words: Sequence[str]) -> list[tuple[str, ...]]:
    """What counts as mentioning a name: its model numbers if it has any, else the whole name,
    its first word (the brand: "Plaud" for "Plaud Note") or a camel-cased word ("NotePin")."""
    models = _model_terms(words)
    if models:
        return models
    whole = tuple(tokens(" ".join(words)))
    head = tuple(tokens(words[0])[:1])
    camel = [tuple(tokens(w)) for w in words[1:] if w[1:] != w[1:].lower()]
    return [t for t in dict.fromkeys([whole, head, *camel]) if t]


def _display(question: str, option: str) -> str:
    """``option`` as the question spells it, when it does."""
    found = re.search(re.escape(option), question, re.IGNORECASE)
    return found.group(0) if found else option


def _the(question: str, name: str) -> str:
    return f"the {name}" if re.search(rf"\bthe\s+{re.escape(name)}", question, re.I) else name


def _named_subject(question: str, english: str | None, compared: Sequence[str]) -> Subject | None:
    """The named products and compared options, or None when the question names none."""
    names = _names(question)
    if english is not None and english != question:
        names += _names(english)
    terms: list[tuple[str, ...]] = []
    labels: list[str] = []
    modelled = [n for n in names if _model_terms(n)]
    for words in modelled or names:  # a model number is the most specific subject there is
        terms += _name_terms(words)
        labels.append(" ".join(words))
    for option in compared:
        option_words = option.split()
        if option_words:
            terms += _name_terms(option_words)
            labels.append(_display(question, option))
    if not terms:
        return None
    shown: dict[str, str] = {}
    for label in labels:
        shown.setdefault(label.casefold(), label)
    name = " or ".join(_the(question, label) for label in list(shown.values())[:3])
    return Subject(name=name, terms=tuple(dict.fromkeys(terms)))


def _content_subject(
    question: str, english: str | None, language: str | None, keywords: Sequence[str]
) -> Subject | None:
    """Without a named product: the question's key phrases and content words (not judged for
    a question in another language, whose words the evidence may not share)."""
    if language is not None and language != "en":
        return None
    phrases = list(keywords)
    sources = [question] + ([english] if english is not None else [])
    phrases += [p for text in sources for p in key_phrases(text)]
    terms: list[tuple[str, ...]] = []
    for phrase in phrases:
        words = [
            t
            for t in tokens(phrase)
            if t not in STOPWORDS and t not in GENERIC_WORDS and len(t) > 2
        ]
        if words and len(words) == len(tokens(phrase)):
            terms.append(tuple(words))
        terms += [(w,) for w in words if not w.isdigit()]
    terms = list(dict.fromkeys(terms))
    if not terms:
        return None
    longest = max(terms, key=len)
    return Subject(name=" ".join(longest), terms=tuple(terms))


def derive_subject(
    question: str,
    *,
    english: str | None = None,
    language: str | None = None,
    keywords: Sequence[str] = (),
    compared: Sequence[str] = (),
) -> Subject | None:
    """The question's subject: its named products / compared options, else its content terms;
    None when it has neither (nothing to judge). ``english`` (its translation), ``language``,
    ``keywords`` and ``compared`` come from the formulation when there is one: the formulation
    calls this once and the subject travels in ``QueryAnalysis.subject``."""
    return _named_subject(question, english, compared) or _content_subject(
        question, english, language, keywords
    )


def question_subject(question: str, analysis: QueryAnalysis | None) -> Subject | None:
    """The subject the formulation found (``analysis.subject``, None included: nothing to
    judge). Derived here only without an analysis, or for one made without a subject (built by
    hand, or stored before the subject travelled with it), so it is the same either way."""
    if analysis is None:
        return derive_subject(question)
    if "subject" in analysis.model_fields_set:
        return analysis.subject
    return derive_subject(
        question,
        english=analysis.english_question,
        language=analysis.language,
        keywords=analysis.keywords,
        compared=analysis.compared,
    )


# --- The verdict ----------------------------------------------------------------------------------


def evidence_texts(
    threads: Sequence[DrilledThread], extra: Sequence[EvidenceItem] = ()
) -> Iterable[str]:
    """Every text the answer could quote: titles, bodies, comments; videos and products."""
    for thread in threads:
        yield thread.post.title
        yield thread.post.selftext
        yield from (comment.body for comment in thread.comments)
        yield from (comment.body for comment in thread.post.comments)
    for item in extra:
        yield item.title
        yield item.text
        yield from (comment.text for comment in item.comments)


def judge_subject(
    question: str,
    analysis: QueryAnalysis | None,
    threads: Sequence[DrilledThread],
    extra: Sequence[EvidenceItem] = (),
) -> SubjectVerdict:
    """Discussed when any of the subject's terms occurs in any evidence text."""
    subject = question_subject(question, analysis)
    if subject is None:
        return SubjectVerdict(discussed=True)
    for text in evidence_texts(threads, extra):
        found = tokens(text)
        if any(mentions(found, term) for term in subject.terms):
            return SubjectVerdict(discussed=True, subject=subject)
    return SubjectVerdict(discussed=False, subject=subject)


_KIND_NAMES = {"youtube": "YouTube", "amazon": "Amazon"}
MAX_GAPS = 3
"""Subreddits an empty answer names as not searched, at most."""


def looked_in(
    analysis: QueryAnalysis | None,
    threads: Sequence[DrilledThread],
    extra: Sequence[EvidenceItem] = (),
) -> list[str]:
    """Where the evidence came from, for people: "r/gadgets", "YouTube" …"""
    subs = [*(analysis.subreddits if analysis else []), *(t.post.subreddit for t in threads)]
    places = [f"r/{s}" for s in dict.fromkeys(s.lower() for s in subs if s)]
    places += list(dict.fromkeys(_KIND_NAMES.get(i.kind, i.kind) for i in extra))
    return places


def abstention_sentence(
    subject: Subject,
    places: Sequence[str],
    *,
    found: bool = True,
    skipped: Mapping[str, str] | None = None,
) -> str:
    """ "Nothing in r/gadgets, r/productivity discusses the Sony WH-1000XM6." When the search
    found no thread at all (``found=False``: nothing in the window, nothing matched), it says
    that instead: the forum may well discuss the subject outside what was searched; and names
    each subreddit it could not search (``skipped``) with why, so a gap in the data is never
    read as the community's silence."""
    if not found:
        gaps = {f"r/{name.lower()}": why for name, why in (skipped or {}).items()}
        searched = [place for place in places if place.lower() not in gaps]
        where = ", ".join(searched) if searched else "the sources"
        said = (
            f"The search of {where} found no thread for this question."
            if searched or not gaps
            else "No thread could be searched for this question."
        )
        notes = [f"{name} was not searched: {why}." for name, why in gaps.items()]
        return " ".join([said, *notes[:MAX_GAPS]])
    where = ", ".join(places) if places else "the fetched posts"
    return f"Nothing in {where} discusses {subject.name}."


def reads_as_word_salad(question: str, language: str) -> str | None:
    """Why ``question`` is no question at all (a heap of keywords, a vocabulary repeated), or
    None. Judged only for languages ``STOPWORDS`` covers and for ``SALAD_MIN_WORDS`` or more:
    a false "not a question" hides a real answer, so short or foreign input passes."""
    if language not in _FUNCTION_WORD_LANGUAGES:
        return None
    words = tokenize(question)
    if len(words) < SALAD_MIN_WORDS:
        return None
    function = sum(word in STOPWORDS for word in words) / len(words)
    if function < SALAD_FUNCTION_SHARE:
        return f"{len(words)} words, {function:.0%} of them function words"
    distinct = len(set(words)) / len(words)
    if len(words) >= SALAD_REPEAT_WORDS and distinct < SALAD_DISTINCT_SHARE:
        return f"{len(words)} words, only {distinct:.0%} of them distinct"
    return None
