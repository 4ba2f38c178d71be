"""Words: tokens, the one stop-word list, what counts as a name, and the lexical half of
every relevance score (``word_share``, ``rarity_weights``, ``blend_weights``), for every stage.

Pure. Cleaning text comes first (``crowdsift.core.text``); this module reads what is left.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

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


_STOPWORD_TEXT = """
    a about above actually after again against all also am an and any anybody anyone are as at be
    because been before being below best better between both but buy buying by can compare else
    compared could did do does doesn't doing don't down during each experience experiences few
    for from further get good got had has have having he her here hers how i if in into is isn't
    it its itself just like many me more most much my need no nor not now of off on once one only
    opinion opinions or other our out over own people question really recommend recommendation
    recommendations same she should so some someone something such than that the their them
    then there these they thing things think this those through to too under until up us use
    used using very versus vs was we were what when where which while who whom why will with
    worth would you your yours
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
    мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был
    него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней
    для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того
    потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем
    всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего
    них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя
    такой им более всегда конечно всю между это как-то какие какую каких какое который которые
    стоит нужно почему сколько
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English and Russian function words and question filler ("best", "worth", "anyone"): never
search keywords, never lexical evidence. The one list every stage uses."""
STEM_CHARS = 5
"""Words compare by their first five letters: "models" ~ "model", "модели" ~ "модель"."""


_CONTRACTED = ("'s", "'m", "'re", "'ve", "'ll", "'d")


def is_stopword(lowered: str) -> bool:
    """A stop word, also contracted: "what's", "i'm", "don't" are as empty as "what"; a name
    with an apostrophe ("o'neill") is not."""
    if lowered in STOPWORDS:
        return True
    word = lowered.replace("’", "'")
    if word.endswith("n't"):
        return True
    suffix = next((s for s in _CONTRACTED if word.endswith(s)), None)
    return suffix is not None and word[: -len(suffix)] in STOPWORDS


def looks_like_name(word: str, *, mid_sentence: bool) -> bool:
    """Whether ``word`` is spelled like a name: camel-cased ("vLLM", "iPhone"), mixing letters
    with a digit, dot, plus, hash or hyphen ("rtx4090", "llama.cpp", "C#"), or capitalised
    mid-sentence. The one test every stage uses (a question's products, a directory's names,
    the options of a migration); stop words and bare numbers never are."""
    lowered = word.lower()
    if is_stopword(lowered) or lowered.isdigit() or not any(ch.isalpha() for ch in word):
        return False
    distinctive = any(ch.isdigit() or ch in ".-+#" for ch in word)
    camel = word[1:] != word[1:].lower()
    return distinctive or camel or (mid_sentence and word[:1].isupper())


def is_acronym(word: str) -> bool:
    """A short all-capitals word without digits ("LLM", "AI", "NAS"; not "M3", "vLLM"): a
    topic's word, not a product's name."""
    return word.isalpha() and word.isupper() and len(word) <= 4


def content_terms(text: str) -> set[str]:
    """Lower-case content words of ``text`` (no stop words, digits or 1–2 letter words),
    stemmed by prefix. Crude, language-agnostic, and enough for a lexical anchor next to
    embeddings."""
    return {
        token[:STEM_CHARS]
        for token in tokenize(text)
        if len(token) > 2 and token not in STOPWORDS and not token.isdigit()
    }


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` that carry meaning, in order: 3+ characters, not stop
    words, not numbers (``content_terms`` without stemming, as a list)."""
    return [w for w in tokenize(text) if len(w) > 2 and w not in STOPWORDS and not w.isdigit()]


def word_share(question: str, texts: Sequence[str], *, by_rarity: bool = False) -> list[float]:
    """The share of the question's content words (``content_terms``) each text holds: the
    lexical half of every relevance score. ``by_rarity`` weighs a word by how rare it is among
    ``texts`` (``rarity_weights``), so "Obsidian" in a Plaud thread counts more than "Plaud"."""
    terms = content_terms(question)
    held = [content_terms(text) for text in texts]
    weight = rarity_weights(terms, held) if by_rarity else dict.fromkeys(terms, 1.0)
    total = sum(weight.values())
    if not total:
        return [0.0] * len(texts)
    return [sum(w for t, w in weight.items() if t in h) / total for h in held]


def rarity_weights(terms: Iterable[str], held: Sequence[set[str]]) -> dict[str, float]:
    """Each term's inverse document frequency over ``held`` (the terms of each text), +1 so a
    word every text holds still counts."""
    count = len(held)
    return {t: math.log((1 + count) / (1 + sum(t in h for h in held))) + 1 for t in sorted(terms)}


W_SIMILARITY, W_LEXICAL = 0.75, 0.25
W_SIMILARITY_NON_LATIN, W_LEXICAL_NON_LATIN = 0.35, 0.65
_LATIN = re.compile(r"[A-Za-z]")
_OTHER_LETTER = re.compile(r"[^\W\d_A-Za-z]")


def blend_weights(question: str) -> tuple[float, float]:
    """(cosine weight, word-overlap weight) for relevance to ``question``: overlap counts more
    for non-Latin questions, where small embedding models are weaker."""
    if len(_OTHER_LETTER.findall(question)) > len(_LATIN.findall(question)):
        return W_SIMILARITY_NON_LATIN, W_LEXICAL_NON_LATIN
    return W_SIMILARITY, W_LEXICAL


LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "ru": "Russian",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "uk": "Ukrainian",
}


def language_name(code: str) -> str:
    """A language's English name for prompts; the code itself when we have no name."""
    return LANGUAGE_NAMES.get(code, code)
