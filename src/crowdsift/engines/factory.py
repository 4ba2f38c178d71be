"""Choose the engine: ``--engine`` / ``CROWDSIFT_ENGINE``, else openai with a key, else local."""

from __future__ import annotations

from typing import Literal

from crowdsift.core.config import Settings
from crowdsift.engines.base import Engine

EngineChoice = Literal["local", "openai"]


def default_engine_name(settings: Settings) -> EngineChoice:
    if settings.engine is not None:
        return settings.engine
    return "openai" if settings.llm_api_key is not None else "local"


def build_engine(settings: Settings, name: EngineChoice | None = None) -> Engine:
    """Build the named (or default) engine; heavy modules are imported only when chosen."""
    chosen = name or default_engine_name(settings)
    if chosen == "openai":
        from crowdsift.engines.openai_compat import OpenAICompatEngine

        return OpenAICompatEngine.from_settings(settings)
    from crowdsift.engines.local import LocalEngine

    return LocalEngine.from_settings(settings)
