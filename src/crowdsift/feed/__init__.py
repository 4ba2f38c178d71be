"""Feeds: posts in a Chroma index, served to agents by preference or at random (seed 003).

Exports are loaded lazily so that ``crowdsift --help`` (which registers the feed commands)
never imports Chroma.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "FeedRetriever": "crowdsift.feed.retriever",
    "CrowdsiftEmbeddingFunction": "crowdsift.feed.embedding",
    "format_feed_for_prompt": "crowdsift.feed.formatting",
    "parse_feed": "crowdsift.feed.formatting",
    "SocialAgent": "crowdsift.feed.agent",
    "Decision": "crowdsift.feed.agent",
    "open_feed": "crowdsift.feed.store",
    "open_collection": "crowdsift.feed.store",
    "run_simulation": "crowdsift.feed.simulation",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'crowdsift.feed' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
