"""Optional parts (``core.extras``): a missing one is a usage error naming its pip line, and the
code that can do without one degrades and says so."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from crowdsift.core import extras, language
from crowdsift.core.config import Settings
from crowdsift.core.errors import MissingExtraError, UsageError
from crowdsift.core.extras import has_module, pip_line, require_extra
from crowdsift.http.cache import open_response_cache
from crowdsift.service.facade import FeedService


@pytest.fixture
def without(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Modules (and their submodules) that ``has_module`` reports missing."""
    missing: set[str] = set()
    found = extras.has_module

    def fake(name: str) -> bool:
        top = name.split(".")[0]
        return name not in missing and top not in missing and found(name)

    monkeypatch.setattr(extras, "has_module", fake)
    return missing


def test_has_module_finds_without_importing() -> None:
    assert has_module("json") and has_module("crowdsift.core.extras")
    assert not has_module("crowdsift_no_such_package")
    assert not has_module("json.no_such_submodule")


def test_a_missing_extra_is_a_usage_error_ending_in_its_pip_line(without: set[str]) -> None:
    without.add("fastapi")
    with pytest.raises(MissingExtraError) as info:
        require_extra("serve", "uvicorn", "fastapi")
    assert isinstance(info.value, UsageError)  # the CLI exits 2
    assert str(info.value).endswith("pip install 'crowdsift[serve]'")
    assert "fastapi is missing" in str(info.value)
    assert info.value.extra == "serve" and info.value.pip_line == pip_line("serve")
    require_extra("serve", "json")  # present: nothing happens


def test_a_redis_cache_without_redis_runs_uncached_and_says_which_extra(
    without: set[str],
) -> None:
    without.add("redis")
    with capture_logs() as logs:
        assert open_response_cache(Settings(cache_url="redis://127.0.0.1:9/0")) is None
    [warning] = [e for e in logs if e["event"] == "response_cache_unavailable"]
    assert warning["hint"] == "pip install 'crowdsift[scale]'"


def test_feeds_without_chroma_are_a_missing_extra(without: set[str]) -> None:
    without.add("chromadb")
    with pytest.raises(MissingExtraError, match=r"crowdsift\[feed\]"):
        FeedService(Settings()).retriever()


def test_without_lingua_a_language_is_told_by_its_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(language, "lingua_installed", lambda: False)
    assert language.detect_language("How do I stop the screws from spinning in concrete?") == "en"
    assert language.detect_language("Какой диктофон дольше держит заряд?") == "ru"
    assert language.detect_language("Який диктофон довше тримає заряд, і чому?") == "uk"
    assert language.detect_language("Welcher Akkuschrauber hält am längsten?") == "und"
    assert language.warm_up() == 0.0
