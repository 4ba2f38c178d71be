"""A post that asks is the asker's situation, not an answer, whether or not it carries a
question mark; a post that reports (a review, a guide) still answers."""

from __future__ import annotations

import pytest

from crowdsift.pipeline.synthesis.claims import asks, statements

BODY = "I run two 3090s and a 2070. Splitting the model over all three works with llama.cpp."


@pytest.mark.parametrize(
    "title",
    [
        "Are P40s useful for 70B models",  # a question opener, no question mark
        "llama.cpp help!",  # a request for help
        "Random GPU crashes after the driver update",  # a trouble report
        "Wifi adapter not working after sleep",
        "Which mesh system for three floors?",
    ],
)
def test_a_post_that_asks_is_background(title: str) -> None:
    assert asks(title, BODY)
    assert statements(BODY, asker=asks(title, BODY)) == []


@pytest.mark.parametrize(
    "title",
    ["My dual-GPU llama.cpp setup after six months", "Guide: splitting a 70B model over two GPUs"],
)
def test_a_post_that_reports_still_answers(title: str) -> None:
    assert not asks(title, BODY)
    assert statements(BODY, asker=False)  # its sentences can be quoted
