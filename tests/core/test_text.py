"""clean_text: unit cases for each markdown construct, and properties over arbitrary text."""

from __future__ import annotations

import re

import emoji
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsift.core.sentences import split_sentences, truncate_at_sentence
from crowdsift.core.text import clean_text, strip_emoji, unescape_entities, url_key, utc_now
from crowdsift.core.words import STOPWORDS, content_terms, tokenize, word_share

MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("[the manual](https://example.com/m?utm_source=x)", "the manual"),
        ("![diagram](https://i.example.com/a.png)", "diagram"),
        ("[nested [x](https://a)](https://b)", "nested x"),
        ("see [docs][1]\n\n[1]: https://example.com", "see docs"),
        ("<https://example.com/page>", "https://example.com/page"),
        ("**bold** and __strong__ and *em* and _em2_", "bold and strong and em and em2"),
        ("snake_case_name and 2*3*4 stay", "snake_case_name and 2*3*4 stay"),
        ("~~old~~ new >!spoiler!< ^(tiny) x^2", "old new spoiler tiny x2"),
        ("# Title\n## Sub\n> quoted\n> > deeper", "Title. Sub quoted deeper"),
        ("- one\n* two\n+ three\n1. four\n2) five", "one two three four five"),
        ("```python\nprint(1)\n```\nand `inline`", "print(1) and inline"),
        ("a\n\n---\n\nb", "a b"),
        ("Tom &amp; Jerry &lt;3 &amp;amp; &#39;x&#39;", "Tom & Jerry <3 & 'x'"),
        ("zero\u200bwidth\u200c join\u200d\ufeff soft\u00adhyphen", "zerowidth join softhyphen"),
        ("great 😀👍🏽 tool 🇩🇪 1️⃣ ok", "great tool 1 ok"),
        ("  lots \t of\n\n\n space  ", "lots of space"),
        ("\\*literal\\* stars", "literal stars"),
        ("Привет, мир! Это тест.", "Привет, мир! Это тест."),
        ("", ""),
    ],
)
def test_clean_text_cases(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


def test_clean_text_accepts_none() -> None:
    assert clean_text(None) == ""


def test_unescape_entities_reaches_a_fixed_point() -> None:
    assert unescape_entities("&amp;amp;lt;") == "<"
    assert unescape_entities("no entities") == "no entities"


def test_strip_emoji_removes_sequences_and_keeps_text() -> None:
    text = "fam 👨‍👩‍👧‍👦 flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿 copy © keycap #️⃣ end"
    cleaned = strip_emoji(text)
    assert emoji.emoji_count(cleaned) == 0
    assert cleaned.split() == ["fam", "flag", "copy", "keycap", "#", "end"]


def test_tokenize_splits_on_punctuation_in_any_script() -> None:
    assert tokenize("Plaud.ai isn't C++ — Привет!") == ["plaud", "ai", "isn", "t", "c", "привет"]
    assert tokenize("snake_case v2.1") == ["snake", "case", "v2", "1"]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_tokenize_ascii_fast_path_equals_the_regex(text: str) -> None:
    assert tokenize(text) == re.findall(r"[^\W_]+", text.lower())


markdownish = st.lists(
    st.sampled_from(
        [
            *"abc xyz[]()!*_~`#>-+|^\\&;:/.\n\t",
            "&amp;",
            "&lt;",
            "😀",
            "👍🏽",
            "\u200b",
            "\u200d",
            "\ufe0f",
            "\u20e3",
            "1",
            "é",
            "ж",
            "](http://a.b/c)",
            "[t](u)",
            "**",
            "```",
            "&#",
            "🇩🇪",
            "©",
            "&#x5b;",
            "&#93;",
            "&#40;",
        ]
    ),
    max_size=80,
).map("".join)


@settings(max_examples=400)
@given(st.text(max_size=300))
def test_clean_text_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = clean_text(text)
    assert clean_text(once) == once


@settings(max_examples=600)
@given(markdownish)
def test_clean_text_properties_on_markdown_like_text(text: str) -> None:
    once = clean_text(text)
    assert clean_text(once) == once
    assert MARKDOWN_LINK.search(once) is None
    assert emoji.emoji_count(once) == 0
    assert "\u200b" not in once and "\u200d" not in once
    assert once == once.strip() and "  " not in once and "\n" not in once


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("12 (DCD791) has a hammer mode", "12 (DCD791) has a hammer mode"),
        ("2024 was Airflow 3. Anything else?", "2024 was Airflow 3. Anything else?"),
        ("Steps:\n1. First step", "Steps: First step"),
        ("Steps:\n3) Third", "Steps: Third"),
        ("1. One line is prose, not a list", "1. One line is prose, not a list"),
    ],
)
def test_only_a_leading_list_number_is_a_list_mark(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


def test_stopwords_content_terms_and_the_clock() -> None:
    assert {"the", "best", "worth", "и", "какой"} <= STOPWORDS
    assert content_terms("The best batteries for recorders") == {"batte", "recor"}
    assert utc_now().tzinfo is not None


def test_a_questions_quantity_frame_is_not_its_subject() -> None:
    """ "How much overlap do they need" asks about overlap; "much" and "need" are its frame, as
    "сколько" and "нужно" are in Russian, so an answer naming overlap holds all of its subject."""
    question = "How much overlap do they need, and how many chunks?"
    assert content_terms(question) == {"overl", "chunk"}
    answer = "Start with 500 tokens per chunk and 10 to 15% overlap."
    assert word_share(question, [answer]) == [1.0]


def test_truncate_at_sentence_keeps_the_citations_of_the_last_whole_sentence() -> None:
    text = "One claim [post:a]. Two claims [comment:b-c][3]. Three."
    assert truncate_at_sentence(text, 50) == "One claim [post:a]. Two claims [comment:b-c][3]."
    assert truncate_at_sentence(text, 10).endswith("…")


# --- sentences (pysbd where a full stop is ambiguous) -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Use faster-whisper (e.g. via whisper-ctranslate2) with --vad_filter True. Next.",
            ["Use faster-whisper (e.g. via whisper-ctranslate2) with --vad_filter True.", "Next."],
        ),
        (
            "Airflow 3.0 is out. It is faster, i.e. quicker vs. 2.x in our tests. Done!",
            ["Airflow 3.0 is out.", "It is faster, i.e. quicker vs. 2.x in our tests.", "Done!"],
        ),
        ("We pinned v2.10.1 last week. It works.", ["We pinned v2.10.1 last week.", "It works."]),
        ("Respectfully, no. Celery is legacy.", ["Respectfully, no.", "Celery is legacy."]),
        ("Honestly? The clip holds. 100% this.", ["Honestly?", "The clip holds.", "100% this."]),
        (
            "It works, e.g. for calls. then it died! Why? ok",
            [
                "It works, e.g. for calls.",
                "then it died!",
                "Why?",
                "ok",
            ],
        ),
        ("no punctuation at all here", ["no punctuation at all here"]),
        ("", []),
        ("   ", []),
    ],
)
def test_sentences_know_abbreviations_and_versions(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["Airflow", "3.0", "e.g.", "i.e.", "vs.", "v2.", "no.", "it", "works", "U.S.", "(see",
             "fig.", "ok.", "Done!", "Why?", "well...", "DAGs.", "$1.5k", "3.", "and"]
        ),
        max_size=25,
    ).map(" ".join)
)  # fmt: skip
def test_every_sentence_is_a_piece_of_the_text_in_order(text: str) -> None:
    sentences = split_sentences(text)
    position = 0
    for sentence in sentences:
        assert sentence and sentence == sentence.strip()
        found = text.find(sentence, position)
        assert found >= 0, (sentence, text)
        position = found + len(sentence)
    assert "".join("".join(sentences).split()) == "".join(text.split())  # nothing lost


def test_a_url_and_its_percent_encoded_form_are_one_url() -> None:
    plain = "https://www.reddit.com/r/LocalLLaMA/comments/1ab/llama_modell_für_deutsche/"
    encoded = "https://reddit.com/r/LocalLLaMA/comments/1ab/llama_modell_f%C3%BCr_deutsche"
    assert url_key(plain) == url_key(encoded)
    assert url_key(plain) != url_key(plain.replace("für", "fur"))
