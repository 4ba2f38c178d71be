"""The lexicon is data with a reason per entry, and its patterns read phrases as people type
them."""

from __future__ import annotations

import pytest

from crowdsift.pipeline.synthesis import lexicon
from crowdsift.pipeline.synthesis.lexicon import ENTRIES, WordList, phrase_pattern


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_entry_says_why_its_words_are_listed(name: str) -> None:
    entry = ENTRIES[name]
    assert len(entry.reason.split()) >= 5, name
    words = entry.words if isinstance(entry, WordList) else set(entry.valences)
    assert words and all(w == w.lower().strip() for w in words), name


def test_phrases_match_as_typed_and_never_inside_a_word() -> None:
    pattern = phrase_pattern(WordList.of("test entry for spelling variants", ["rock solid"]))
    for typed in ("rock solid", "Rock-solid", "rocksolid", "rock  solid"):
        assert pattern.search(f"It has been {typed} for us."), typed
    assert not pattern.search("a bedrock solidity")
    risk = phrase_pattern(lexicon.RISK)
    assert risk.search("it dont work") and risk.search("it don’t work")  # apostrophe optional
    assert not risk.search("a lostness")


def test_longer_phrases_win_over_their_prefixes() -> None:
    limiting = phrase_pattern(lexicon.LIMITING)
    found = limiting.search("great only if you pay")
    assert found is not None and found.group(0) == "only if"
