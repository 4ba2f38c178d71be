"""One settings tree: typed sections loaded with the root, passed down, old names still working."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import AliasChoices, ValidationError

from crowdsift.core.config import (
    ExpertsConfig,
    RedditConfig,
    Settings,
    load_settings,
)
from crowdsift.core.errors import ConfigError
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource


def test_sections_load_with_the_root_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CROWDSIFT_REDDIT_DRILL_TOP", "4")
    monkeypatch.setenv("MAP_MAX_PARALLEL", "7")
    settings = load_settings()
    assert settings.reddit.drill_top == 4 and settings.experts.map_max_parallel == 7
    monkeypatch.setenv("CROWDSIFT_REDDIT_DRILL_TOP", "9")
    assert settings.reddit.drill_top == 4  # read once: a run never re-reads the environment


@pytest.mark.parametrize(
    ("old", "field", "value"),
    [
        ("CROWDSIFT_SIDECAR_CONCURRENCY", "concurrency", 3),
        ("CROWDSIFT_SIDECAR_PAGE_SIZE", "page_size", 7),
        ("CROWDSIFT_SIDECAR_SUMMARY_CHARS", "summary_char_budget", 900),
    ],
)
def test_merged_duplicates_keep_their_old_names(
    monkeypatch: pytest.MonkeyPatch, old: str, field: str, value: int
) -> None:
    monkeypatch.setenv(old, str(value))
    assert getattr(load_settings(), field) == value


@pytest.mark.parametrize("field", sorted(RedditConfig.model_fields))
def test_the_reddit_section_keeps_its_older_sidecar_names(
    monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    """Every ``CROWDSIFT_REDDIT_<NAME>`` was ``CROWDSIFT_SIDECAR_<NAME>``: the old name still
    sets it, and the new one wins when both are set."""
    alias = RedditConfig.model_fields[field].validation_alias
    assert isinstance(alias, AliasChoices)
    new = str(alias.choices[0])
    assert new.startswith("CROWDSIFT_REDDIT_")
    old = new.replace("CROWDSIFT_REDDIT_", "CROWDSIFT_SIDECAR_")
    default = RedditConfig.model_fields[field].default
    if isinstance(default, int):
        changed, newer = default + 1, default + 2
    else:  # within every float's bounds: a share, a similarity of 50-100, seconds
        changed, newer = (0.5, 0.75) if default <= 1 else (default * 0.9, default * 0.95)
    monkeypatch.setenv(old, str(changed))
    assert getattr(load_settings().reddit, field) == changed
    monkeypatch.setenv(new, str(newer))
    assert getattr(load_settings().reddit, field) == newer


@pytest.mark.parametrize("name", ["CROWDSIFT_REDDIT_RERANK_TOP", "CROWDSIFT_SIDECAR_RERANK_TOP"])
def test_a_bad_section_value_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "lots")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    # the documented name, whichever spelling was set (as for the merged duplicates above)
    assert str(raised.value).startswith("CROWDSIFT_REDDIT_RERANK_TOP='lots': ")


def test_a_misspelt_section_field_is_an_error_not_a_silent_default() -> None:
    with pytest.raises(ValidationError):
        RedditConfig(page_size=3)  # type: ignore[call-arg]  # moved to the root
    with pytest.raises(ValidationError):
        ExpertsConfig(map_chunks=3)  # type: ignore[call-arg]


def test_a_run_takes_its_sections_from_the_settings_it_is_given(tmp_path: Path) -> None:
    archive = ensure_demo_archive(tmp_path)
    settings = Settings(reddit=RedditConfig(drill_top=2, rerank_top=5), page_size=5)
    older = Settings(sidecar=RedditConfig(drill_top=2, rerank_top=5), page_size=5)  # old keyword
    assert older.reddit == settings.reddit
    with ArchiveSource(archive) as source:
        deps = AskDeps(
            settings=settings,
            engine=LocalEngine(embedder=HashingEmbedder()),
            source=source,
            candidates=subreddit_profiles(archive),
        )
        result = asyncio.run(run_research("Is the Plaud Note worth it?", deps)).result
    response = result.reddit_response
    assert response is not None and result.plan is not None
    assert response.threads_drilled == 2 and len(response.ranked) <= 5
    assert all(query.limit == 5 for query in result.plan.queries)
