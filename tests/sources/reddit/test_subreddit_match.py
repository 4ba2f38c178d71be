"""Matching a question to the directory: meaning, words of the communities' recent threads,
names said, size, and the vectors kept."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from crowdsift.engines.embedding import HashingEmbedder, Vectors
from crowdsift.sources.reddit import directory_match
from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditInfo
from crowdsift.sources.reddit.directory_match import (
    EMBED_TITLES,
    EMPTY_PENALTY,
    NAME_NAMED,
    NAME_PLAIN,
    W_MEANING,
    W_NAME,
    W_SIZE,
    W_WORDS,
    closest,
    directory_vectors,
    entry_text,
    name_keys,
    name_scores,
    profile_bag,
    size_prior,
    vectors_key,
    word_scores,
)

NOW = datetime(2025, 3, 1, tzinfo=UTC)


class TopicEmbedder:
    """Vectors whose axes are topics: a text counts the words of each topic it contains (plus
    a small constant axis), so which text is closest to which is set by the test."""

    name = "topic-fake"

    def __init__(self, topics: dict[str, Sequence[str]]) -> None:
        self.topics = list(topics.values())
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        matrix = np.zeros((len(texts), len(self.topics) + 1), dtype=np.float32)
        for row, text in enumerate(texts):
            lowered = text.lower()
            for column, words in enumerate(self.topics):
                matrix[row, column] = sum(lowered.count(word) for word in words)
            matrix[row, -1] = 0.1
            matrix[row] /= np.linalg.norm(matrix[row])
        return matrix


TOPICS = {
    "repair": ["charg", "troubleshoot", "boot"],
    "electronics": ["electronics", "gadget", "phone"],
    "llm": ["language model", "inference", "llama", "gpu", "quantis"],
    "smarthome": ["zigbee", "sensor", "smart light", "automat"],
    "food": ["recipe", "cook"],
}


def info(name: str, title: str, description: str, subscribers: int, **extra: bool) -> SubredditInfo:
    return SubredditInfo(
        name=name,
        display_name=name,
        title=title,
        description=description,
        subscribers=subscribers,
        **extra,
    )


ENTRIES = [
    info(
        "techsupport",
        "Tech Support",
        "Troubleshooting help when a device will not charge, boot or connect.",
        1_500_000,
    ),
    info("gadgets", "Gadgets", "News and launches of consumer electronics.", 20_000_000),
    info("cooking", "Cooking", "Recipes and techniques for cooks of every level.", 4_000_000),
    info("vllm", "vLLM", "A high-throughput inference and serving engine.", 3_000),
    info(
        "localllama",
        "LocalLlama",
        "Running large language models on your own hardware: inference speed, quantisation, GPUs.",
        500_000,
    ),
    info("homeassistant", "Home Assistant", "Open source home automation platform.", 500_000),
    info(
        "homeautomation",
        "Home Automation",
        "Automating your house: smart lights, sensors, Zigbee hubs.",
        2_000_000,
    ),
    info(
        "zigbee",
        "Zigbee after dark",
        "Zigbee sensors, smart lights, automation, for adults.",
        9_000_000,
        over18=True,
    ),
    info("mechanical_keyboards", "Mechanical Keyboards", "Switches and keycaps.", 1_300_000),
]


@pytest.fixture(autouse=True)
def fresh_memory() -> Iterator[None]:
    """Each test starts as a new process would: no vectors or word index in memory."""
    directory_match._MEMORY.clear()
    directory_match._WORD_INDEXES.clear()
    yield
    directory_match._MEMORY.clear()
    directory_match._WORD_INDEXES.clear()


@pytest.fixture
def directory() -> SubredditDirectory:
    return SubredditDirectory(fetched_at=NOW, entries=ENTRIES)


@pytest.fixture
def embedder() -> TopicEmbedder:
    return TopicEmbedder(TOPICS)


def by_name(
    matches: list[directory_match.SubredditMatch],
) -> dict[str, directory_match.SubredditMatch]:
    return {m.info.name: m for m in matches}


def test_meaning_finds_the_community_for_a_question_that_names_none(
    directory: SubredditDirectory, embedder: TopicEmbedder
) -> None:
    question = "My phone will not charge or boot, how do I troubleshoot it?"
    matches = closest(question, directory, embedder, limit=3)
    assert [m.info.name for m in matches][:2] == ["techsupport", "gadgets"]
    top, gadgets = matches[0], matches[1]
    assert top.name == 0.0 and top.meaning > 0.9
    assert gadgets.size > top.size  # the bigger community loses on meaning
    for match in matches:
        expected = (
            W_MEANING * match.meaning
            + W_WORDS * match.words
            + W_NAME * match.name
            + W_SIZE * match.size
        )
        assert match.score == pytest.approx(expected, abs=1e-3)
    assert top.words == 1.0  # "troubleshoot", "charge", "boot" are in its description only
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)


@pytest.mark.parametrize(
    ("question", "named", "rival"),
    [
        ("Is vLLM faster than llama.cpp for serving models on a GPU?", "vllm", "localllama"),
        ("How do I add Zigbee sensors to Home Assistant?", "homeassistant", "homeautomation"),
    ],
)
def test_a_named_subreddit_wins_over_a_closer_bigger_one(
    directory: SubredditDirectory, embedder: TopicEmbedder, question: str, named: str, rival: str
) -> None:
    matches = by_name(closest(question, directory, embedder, limit=len(ENTRIES)))
    assert closest(question, directory, embedder, limit=1)[0].info.name == named
    assert matches[named].name == NAME_NAMED
    # without the name it would lose: the rival is closer in meaning and bigger
    assert matches[rival].meaning > matches[named].meaning
    assert matches[rival].size > matches[named].size
    assert matches[rival].name == 0.0


def test_joined_words_and_plurals_reach_names_with_underscores(
    directory: SubredditDirectory, embedder: TopicEmbedder
) -> None:
    top = closest("which mechanical keyboard is quiet?", directory, embedder, limit=1)[0]
    assert top.info.name == "mechanical_keyboards" and top.name == NAME_NAMED
    local = closest("Local LLaMA setups for a 24GB card", directory, embedder, limit=1)[0]
    assert local.info.name == "localllama" and local.name == NAME_NAMED


def test_over18_entries_never_match(directory: SubredditDirectory, embedder: TopicEmbedder) -> None:
    for question in ("zigbee sensors and smart lights", "Is r/zigbee any good?"):
        matches = closest(question, directory, embedder, limit=100)
        assert "zigbee" not in by_name(matches)
        assert len(matches) == len(ENTRIES) - 1
    only_adult = SubredditDirectory(fetched_at=NOW, entries=[ENTRIES[7]])
    assert closest("zigbee sensors", only_adult, embedder) == []


def test_limit_and_empty_questions(directory: SubredditDirectory, embedder: TopicEmbedder) -> None:
    assert len(closest("cooking recipes", directory, embedder, limit=2)) == 2
    assert closest("cooking recipes", directory, embedder, limit=0) == []
    assert closest("   ", directory, embedder) == []
    assert closest("cook", SubredditDirectory(fetched_at=NOW), embedder) == []


def test_size_breaks_a_tie_but_not_a_gap_in_meaning(embedder: TopicEmbedder) -> None:
    same = "Recipes for cooks."
    tie = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            info("smallkitchen", "Kitchen", same, 2_000),
            info("bigkitchen", "Kitchen", same, 2_000_000),
        ],
    )
    assert [m.info.name for m in closest("recipes", tie, embedder)] == [
        "bigkitchen",
        "smallkitchen",
    ]
    gap = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            info("bigkitchen", "Kitchen", "Recipes, cooks and a phone.", 2_000_000),
            info("smallkitchen", "Kitchen", "Recipes, cooking, cooks.", 2_000),
        ],
    )
    small, big = closest("recipes for cooks", gap, embedder)
    assert small.info.name == "smallkitchen"
    assert 0.05 < small.meaning - big.meaning < 0.2  # a modest gap, more than size can undo


def test_size_prior_is_log_scaled_between_the_smallest_and_biggest() -> None:
    sized = SubredditDirectory(
        fetched_at=NOW,
        entries=[info(f"sub{n}", "", "", n) for n in (1_000, 100_000, 10_000_000)],
    )
    assert size_prior(sized).tolist() == pytest.approx([0.0, 0.5, 1.0])
    even = SubredditDirectory(fetched_at=NOW, entries=[info(n, "", "", 5) for n in ("aa", "bb")])
    assert size_prior(even).tolist() == [0.0, 0.0]


# --- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "key", "strength"),
    [
        ("Is vLLM any good?", "vllm", NAME_NAMED),
        ("vLLM or TGI?", "vllm", NAME_NAMED),  # mixed case even as the first word
        ("Should I buy an iPhone 16?", "iphone", NAME_NAMED),
        ("Is the RTX4090 worth it?", "rtx4090", NAME_NAMED),
        ("I record meetings with Plaud daily", "plaud", NAME_NAMED),  # capitalised mid-sentence
        ("Plaud for meetings?", "plaud", NAME_PLAIN),  # first word: only a plain word
        ("best espresso grinder", "espresso", NAME_PLAIN),
        ("How do I set up Home Assistant?", "homeassistant", NAME_NAMED),
        ("home-assistant zigbee", "homeassistant", NAME_NAMED),
        ("is llama.cpp fast", "llamacpp", NAME_NAMED),
        ("is llama.cpp fast", "llama", NAME_PLAIN),  # its first part is still a word
        ("a kettle, Buy It For Life quality", "buyitforlife", NAME_NAMED),  # written as a name
        ("see r/Home_Improvement for that", "homeimprovement", NAME_NAMED),
    ],
)
def test_names_a_question_says(question: str, key: str, strength: float) -> None:
    assert name_keys(question)[key] == strength


@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("how to fix a leak", "howto"),  # joined words ending or starting with a stop word
        ("what is the best one", "best"),  # stop words
        ("is it ok", "ok"),  # under 3 characters
        ("buy it for life kettle", "buyitforlife"),  # starts with a stop word, not a name
        ("Home, Assistant", "homeassistant"),  # a comma ends a name
        ("costs 2024 dollars", "2024"),  # numbers
        ("is llama.cpp fast", "cpp"),  # a qualifier inside one written name
    ],
)
def test_words_that_never_name_a_community(question: str, key: str) -> None:
    assert key not in name_keys(question)


def test_name_scores_compare_without_underscores_and_in_either_number() -> None:
    directory = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            info("mechanicalkeyboards", "", "", 10),
            info("home_assistant", "", "", 10),
            info("headphone", "", "", 10),
            info("cars", "", "", 10),
        ],
    )
    scores = name_scores("Mechanical keyboard, headphones or Home Assistant?", directory)
    assert scores.tolist() == [NAME_NAMED, NAME_NAMED, NAME_PLAIN, 0.0]


# --- vectors -----------------------------------------------------------------------------------


def test_entry_text_is_name_title_and_the_start_of_the_description() -> None:
    assert entry_text(ENTRIES[0]) == (
        "r/techsupport: Tech Support. Troubleshooting help when a device will not charge, "
        "boot or connect."
    )
    assert entry_text(info("bare", "", "", 1)) == "r/bare"
    long = info("long", "Long", "word " * 200, 1)
    assert len(entry_text(long)) < len("r/long: Long. ") + 301


def test_vectors_are_embedded_once_per_process(
    directory: SubredditDirectory, embedder: TopicEmbedder
) -> None:
    closest("cooking", directory, embedder)
    closest("zigbee sensors", directory, embedder)
    assert embedder.calls == [len(ENTRIES), 1, 1]  # the directory once, then each question


def test_vectors_on_disk_serve_a_new_process_until_the_directory_changes(
    tmp_path: Path, directory: SubredditDirectory
) -> None:
    first = TopicEmbedder(TOPICS)
    notes: list[int] = []
    expected = directory_vectors(directory, first, cache_dir=tmp_path, on_embed=notes.append)
    assert notes == [len(ENTRIES)] and first.calls == [len(ENTRIES)]
    [stored] = tmp_path.glob("subreddit-vectors-*.npy")

    directory_match._MEMORY.clear()  # a new process
    second = TopicEmbedder(TOPICS)
    again = directory_vectors(directory, second, cache_dir=tmp_path, on_embed=notes.append)
    assert second.calls == [] and notes == [len(ENTRIES)]
    np.testing.assert_allclose(again, expected, atol=2e-3)  # stored as float16

    changed = SubredditDirectory(fetched_at=NOW, entries=ENTRIES[:-1])
    directory_vectors(changed, second, cache_dir=tmp_path)
    assert second.calls == [len(ENTRIES) - 1]
    [replacement] = tmp_path.glob("subreddit-vectors-*.npy")
    assert replacement != stored  # one file, for the directory in use

    directory_match._MEMORY.clear()
    other_model = HashingEmbedder(dimensions=16)
    assert directory_vectors(changed, other_model, cache_dir=tmp_path).shape == (8, 16)


def test_a_damaged_vector_file_is_embedded_again(
    tmp_path: Path, directory: SubredditDirectory, embedder: TopicEmbedder
) -> None:
    directory_vectors(directory, embedder, cache_dir=tmp_path)
    [stored] = tmp_path.glob("subreddit-vectors-*.npy")
    stored.write_bytes(b"not numpy")
    directory_match._MEMORY.clear()
    matrix = directory_vectors(directory, embedder, cache_dir=tmp_path)
    assert embedder.calls == [len(ENTRIES), len(ENTRIES)] and matrix.shape[0] == len(ENTRIES)
    np.save(stored, np.zeros((2, 6), dtype=np.float16))  # the wrong number of rows
    directory_match._MEMORY.clear()
    directory_vectors(directory, embedder, cache_dir=tmp_path)
    assert embedder.calls == [len(ENTRIES)] * 3


# --- profiles: words and the texts embedded ---------------------------------------------------

NOW_PROFILED = datetime(2025, 3, 2, tzinfo=UTC)


def profiled(entry: SubredditInfo, titles: list[str], terms: dict[str, int]) -> SubredditInfo:
    posts = max([*terms.values(), len(titles)], default=0)
    return entry.model_copy(
        update={
            "profiled_at": NOW_PROFILED,
            "profile_posts": posts,
            "recent_titles": titles,
            "recent_terms": terms,
        }
    )


LOCAL_TITLES = [
    "GLM-4.5 Air keeps thinking for minutes",
    "GLM 4.5 vs Qwen3 for agents",
    "Which quant of GLM for two 3090s?",
]


def with_profiles(*, local: bool = True) -> SubredditDirectory:
    entries = list(ENTRIES)
    if local:
        entries[4] = profiled(entries[4], LOCAL_TITLES, {"glm": 9, "qwen3": 4, "thinking": 3})
    entries[0] = profiled(
        entries[0], ["Laptop will not charge", "Phone stuck on boot logo"], {"charge": 5}
    )
    entries[1] = profiled(entries[1], ["New phone launches this week"], {"phone": 7})
    return SubredditDirectory(fetched_at=NOW, entries=entries)


class FixedEmbedder:
    """Cosines set by the test: an entry text ``"r/{name}: …"`` has ``similarity[name]`` with
    any question (0.1 when not listed), as an embedder that knows no product names would."""

    name = "fixed-fake"

    def __init__(self, similarity: dict[str, float]) -> None:
        self.similarity = similarity

    def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in enumerate(texts):
            if text.startswith("r/"):
                cosine = self.similarity.get(text[2:].split(":")[0].lower(), 0.1)
                matrix[row] = [cosine, np.sqrt(1 - cosine**2)]
            else:
                matrix[row] = [1.0, 0.0]
        return matrix


def test_a_product_only_the_communitys_titles_mention_ranks_it_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing in r/LocalLLaMA's description says GLM, and the embedder finds r/gadgets and
    r/techsupport closer (by 0.1-0.15, as MiniLM does for a name it does not know); the
    community's own titles say GLM all the time."""
    embedder = FixedEmbedder({"gadgets": 0.45, "techsupport": 0.4, "localllama": 0.3})
    question = "How do I stop GLM 4.5 from its long thinking step on my phone?"
    assert "glm" not in entry_text(ENTRIES[4]).lower()
    without = closest(question, with_profiles(local=False), embedder, limit=3)
    assert [m.info.name for m in without][:2] == ["gadgets", "techsupport"]

    matches = closest(question, with_profiles(), embedder, limit=len(ENTRIES))
    top, named = matches[0], by_name(matches)
    assert top.info.name == "localllama" and top.words == 1.0 and top.name == 0.0
    assert named["gadgets"].meaning > named["techsupport"].meaning > top.meaning
    assert 0 < named["gadgets"].words < 0.5  # "phone" is in its threads, and in others'

    monkeypatch.setattr(directory_match, "W_WORDS", 0.0)  # the words are what decide
    assert closest(question, with_profiles(), embedder, limit=1)[0].info.name == "gadgets"


def test_word_scores_weigh_rare_words_over_common_ones() -> None:
    """IDF over the directory: a word every entry uses says little, one entry's word a lot."""
    directory = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            info("alpha", "", "common words and zigbee", 10),
            info("beta", "", "common words and glm", 10),
            info("gamma", "", "common words and bananas", 10),
        ],
    )
    scores = word_scores("common glm", directory)
    assert scores.argmax() == 1
    assert scores[0] == scores[2] > 0  # "common" alone
    assert scores[1] > 3 * scores[0]
    assert word_scores("nothing shared here", directory).tolist() == [0.0, 0.0, 0.0]
    assert word_scores("how is the and", directory).tolist() == [0.0, 0.0, 0.0]  # stop words


def test_a_profile_is_not_outweighed_by_a_short_description_for_its_own_words() -> None:
    """Lengths compare within their kind: against one average, every profile would be "long"
    and one mention in a dozen-word description would beat a word most of its posts use."""
    filler = {f"word{n}": 8 for n in range(150)}  # a profile's size: 150 words, 8 posts each
    directory = SubredditDirectory(
        fetched_at=NOW,
        entries=[
            info("mentions", "Mentions", "Sometimes zigbee comes up here.", 10),
            profiled(info("uses", "Uses", "A community.", 10), [], {"zigbee": 6, **filler}),
            *(info(f"other{n}", "", "Unrelated hobby talk.", 10) for n in range(20)),
            *(profiled(info(f"busy{n}", "", "", 10), [], filler) for n in range(3)),
        ],
    )
    scores = word_scores("zigbee hub", directory)
    assert scores[1] > scores[0] > 0


def test_words_count_titles_and_terms_once_each() -> None:
    entry = profiled(
        info("localllama", "Local LLaMA", "Models on your own hardware.", 10),
        ["GLM tips", "GLM again", "Qwen news"],
        {"glm": 5, "vram": 3},
    )
    bag = profile_bag(entry)
    assert bag["glm"] == 5  # the terms (over every post read) already hold the titles
    assert bag["qwen"] == 1 and bag["vram"] == 3  # a word of the titles only, of the terms only
    assert bag["model"] == 1 and bag["llama"] == 1  # title and description


def test_an_entry_whose_source_holds_no_recent_posts_comes_after_one_that_may(
    embedder: TopicEmbedder,
) -> None:
    same = "Recipes for cooks."
    quiet = profiled(info("quietkitchen", "Kitchen", same, 2_000), [], {})
    directory = SubredditDirectory(
        fetched_at=NOW,
        entries=[quiet, info("kitchen", "Kitchen", same, 2_000)],  # never profiled: no penalty
    )
    first, second = closest("recipes for cooks", directory, embedder)
    assert (first.info.name, second.info.name) == ("kitchen", "quietkitchen")
    assert first.score - second.score == pytest.approx(EMPTY_PENALTY, abs=1e-3)
    assert quiet.profiled and quiet.profile_posts == 0
    named = closest("Is r/quietkitchen still around?", directory, embedder)
    assert named[0].info.name == "quietkitchen"  # a community the question names still comes


def test_an_adult_profile_never_sets_the_scale_of_words(embedder: TopicEmbedder) -> None:
    entries = list(ENTRIES)
    entries[7] = profiled(entries[7], ["zigbee hub"] * 3, {"zigbee": 90, "hub": 80})
    matches = closest("zigbee hub", SubredditDirectory(fetched_at=NOW, entries=entries), embedder)
    assert "zigbee" not in by_name(matches)
    assert max(m.words for m in matches) == 1.0


def test_entry_text_adds_the_best_recent_titles_and_vectors_follow_the_texts() -> None:
    titles = [f"Thread number {n}" for n in range(EMBED_TITLES + 3)]
    entry = profiled(ENTRIES[4], titles, {"glm": 3})
    text = entry_text(entry)
    assert text.startswith(entry_text(ENTRIES[4]) + " Recent threads: Thread number 0 | ")
    assert f"Thread number {EMBED_TITLES - 1}" in text
    assert f"Thread number {EMBED_TITLES}" not in text

    fake = HashingEmbedder(dimensions=8)
    plain = SubredditDirectory(fetched_at=NOW, entries=ENTRIES)
    with_titles = SubredditDirectory(fetched_at=NOW, entries=[*ENTRIES[:4], entry, *ENTRIES[5:]])
    other_terms = with_titles.replaced(
        entries=[*ENTRIES[:4], entry.model_copy(update={"recent_terms": {"x": 2}}), *ENTRIES[5:]]
    )
    assert vectors_key(plain, fake) != vectors_key(with_titles, fake)
    assert vectors_key(with_titles, fake) == vectors_key(other_terms, fake)  # same texts
