"""Pure detectors behind the local synthesis: specifics, dissent, pivots, verdicts, options."""

from __future__ import annotations

import pytest

from crowdsift.pipeline.synthesis.candidates import Item
from crowdsift.pipeline.synthesis.sections import minority_report
from crowdsift.pipeline.synthesis.specifics import (
    dissent_marker,
    find_pivots,
    find_specifics,
    normalise_option,
    option_pattern,
    specificity,
    verdict,
)


def _texts(text: str) -> list[str]:
    return [s.text for s in find_specifics(text)]


# --- specifics -------------------------------------------------------------------------------


def test_flags_keep_their_values_and_versions_keep_their_names() -> None:
    assert _texts("set --max-batch 64 and CUDA 12.4") == ["--max-batch 64", "CUDA 12.4"]
    assert _texts("run it with --no-cache --threads=8") == ["--no-cache", "--threads=8"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("upgrade to v1.2 first", ["v1.2"]),
        ("pin 2.13.0, not later", ["2.13.0"]),
        ("Python 3.11 is faster", ["Python 3.11"]),
        ("an RTX 4090 with 24GB of VRAM", ["RTX 4090", "24GB"]),
        ("my M18 and an A100", ["M18", "A100"]),
        ("the i7-12700K runs hot", ["i7-12700K"]),
        ("set vm.swappiness = 10 and max_batch=64", ["vm.swappiness = 10", "max_batch=64"]),
        ("battery lasts 30 hours, charging takes 90 min", ["30 hours", "90 min"]),
        ("a 7B model at 1.5x speed", ["7B", "1.5x"]),
    ],
)
def test_concrete_specifics_are_found(text: str, expected: list[str]) -> None:
    assert _texts(text) == expected


def test_overlapping_matches_count_once_as_the_longest() -> None:
    found = find_specifics("CUDA 12.4 and again CUDA 12.4")
    assert [(s.kind, s.text) for s in found] == [("version", "CUDA 12.4")]
    assert specificity("CUDA 12.4 and again CUDA 12.4") == 1


def test_generic_talk_has_no_specifics() -> None:
    assert find_specifics("I think it is great and I would recommend it to anyone.") == []
    assert find_specifics("I have about 3.5 of them lying around") == []
    assert specificity("It depends on your workflow, honestly.") == 0


# --- dissent ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I disagree, the battery is the weak point.",
        "Unpopular opinion: it is overrated.",
        "Not sure I agree: the app crashes a lot.",
        "Honestly I'd avoid it.",
        "Don't buy the Pro model.",
        "Counterpoint: the cloud plan is cheaper.",
    ],
)
def test_dissent_markers(text: str) -> None:
    assert dissent_marker(text) is not None


def test_agreement_has_no_dissent_marker() -> None:
    assert dissent_marker("Totally agree, this is the right call and it works well.") is None


def test_dissent_must_give_a_reason_to_be_reported() -> None:
    """Through the minority report: a marker alone is a grunt; a specific or a claim after the
    marker is an argument, and it is what the report quotes."""
    grunt = "I disagree."
    specific = "I disagree: --max-batch 64 was slower."
    claim = "I disagree. The sync app lost two of my recordings last week."
    items = [
        Item(f"comment:d{n}", text, 10, 0, 0, True)
        for n, text in enumerate((grunt, specific, claim))
    ]
    report = minority_report(items, 5)
    assert [c.cites for c in report] == [["comment:d1"], ["comment:d2"]]
    assert "--max-batch 64" in report[0].text and "argued with specifics" in report[0].text
    assert report[1].text == "The sync app lost two of my recordings last week."


# --- pivots ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("We switched from Airflow to Dagster last year.", ("Airflow", "Dagster")),
        ("we migrated from airflow to dagster", ("airflow", "dagster")),
        ("Moved from Jenkins to GitHub Actions in 2023", ("Jenkins", "GitHub Actions")),
        ("We replaced cron with Airflow.", ("cron", "Airflow")),
        ("ditched Otter for Plaud", ("Otter", "Plaud")),
        ("Airflow -> Dagster was worth it", ("Airflow", "Dagster")),
        ("our path: Airflow → Prefect", ("Airflow", "Prefect")),
        ("went from Notion to Obsidian", ("Notion", "Obsidian")),
    ],
)
def test_pivot_forms(text: str, pair: tuple[str, str]) -> None:
    assert [(p.from_option, p.to_option) for p in find_pivots(text)] == [pair]


@pytest.mark.parametrize(
    "text",
    [
        "things went from bad to worse",
        "battery went from 30 hours to 20 hours",
        "I moved from home to the office",
        "we switched from it to this",
    ],
)
def test_non_pivots(text: str) -> None:
    assert find_pivots(text) == []


def test_pivot_keys_ignore_case_articles_and_punctuation() -> None:
    first = find_pivots("We switched from the Airflow to Dagster.")[0]
    second = find_pivots("migrated from airflow to dagster")[0]
    assert first.key == second.key == ("airflow", "dagster")
    assert normalise_option("  The Dagster. ") == "dagster"


def test_one_pair_counts_once_per_text() -> None:
    text = "We switched from Airflow to Dagster. Airflow -> Dagster, no regrets."
    assert len(find_pivots(text)) == 1


# --- sentiment and verdicts ------------------------------------------------------------------


def test_verdict_reports_counts_and_their_meaning() -> None:
    assert verdict(7, 4, 1) == "7 mentions: mostly positive (4+ / 1−)"
    assert verdict(5, 0, 3) == "5 mentions: mostly negative (0+ / 3−)"
    assert verdict(4, 2, 2) == "4 mentions: mixed (2+ / 2−)"
    assert verdict(1, 0, 0) == "1 mention: no clear sentiment (0+ / 0−)"


def test_option_pattern_matches_variants_as_whole_words() -> None:
    pattern = option_pattern("Otter.ai")
    text = "Otter is fine, otter.ai too, otter ai as well, but otters swim and BigOtter2 no."
    assert pattern.findall(text) == ["Otter", "otter.ai", "otter ai"]
    assert option_pattern("Plaud Note").search("the plaud note pin") is not None


def test_a_described_option_also_matches_its_head_word_unless_generic() -> None:
    phone = option_pattern("phone recording app")
    assert phone.search("My phone does this for free.")
    assert phone.search("any phone recording app works")
    assert not phone.search("I use a smartphone.")
    home = option_pattern("home assistant")
    assert home.search("Home Assistant runs my lights")
    assert not home.search("I work from home.")
