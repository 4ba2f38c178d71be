"""Engine test fixtures: a real local chat-completions server, recorded sleeps, no stray env."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from crowdsift.core.config import Settings
from crowdsift.engines.openai_compat import OpenAICompatEngine
from tests.support.openai_server import ChatCompletionsServer

_API_KEY = "sk-test-Zq8rT41mVx9KpL2w"
_LLM_VARS = (
    "CROWDSIFT_ENGINE", "CROWDSIFT_LLM_BASE_URL", "CROWDSIFT_LLM_API_KEY",
    "CROWDSIFT_LLM_TIMEOUT", "CROWDSIFT_LLM_MAX_RETRIES", "CROWDSIFT_MAX_RETRY_WAIT",
    "MODEL_FILTER", "MODEL_SYNTHESIS", "MODEL_ANALYSIS", "MODEL_MAP", "MODEL_MEDIUM_SCORING",
    "MODEL_COMMENT_GROUPS", "MODEL_DRIFT_ANALYSIS", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
)  # fmt: skip


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No developer's key, base URL or model choice leaks into these tests."""
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def api_key() -> str:
    return _API_KEY


@pytest.fixture
def server(api_key: str) -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(api_key=api_key) as running:
        yield running


class SleepRecorder:
    """An async sleep that records how long it was asked to wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def make_engine(
    server: ChatCompletionsServer, sleeps: SleepRecorder, api_key: str
) -> Callable[..., OpenAICompatEngine]:
    """Build the openai engine from Settings pointing at the local server (overridable)."""

    def make(**overrides: Any) -> OpenAICompatEngine:
        values: dict[str, Any] = {
            "llm_base_url": server.base_url,
            "llm_api_key": api_key,
            "llm_timeout": 5.0,
            "llm_max_retries": 3,
            **overrides,
        }
        return OpenAICompatEngine.from_settings(Settings(**values), sleep=sleeps)

    return make
