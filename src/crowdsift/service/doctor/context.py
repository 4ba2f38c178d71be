"""What every doctor check is handed: the settings, and how to make HTTP requests.

Checks never build their own I/O: tests inject an ``httpx`` transport (or point the settings at
local servers) and an embedder factory, and every client gets the same short timeout, so one
dead host costs one timeout, never a hang.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from crowdsift.core.config import Settings
from crowdsift.engines.embedding import Embedder

HTTP_TIMEOUT = 5.0
"""Seconds any one doctor request may take (connect, read, write, pool)."""


@dataclass(frozen=True)
class DoctorContext:
    """``transport``: None for the real network; ``embedder_factory``: None for the settings'
    own model (``CROWDSIFT_EMBEDDING_MODEL`` / ``CROWDSIFT_EMBEDDING_RUNTIME``)."""

    settings: Settings
    transport: httpx.BaseTransport | None = None
    http_timeout: float = HTTP_TIMEOUT
    embedder_factory: Callable[[Settings], Embedder] | None = None

    def client(self, base_url: str = "", headers: Mapping[str, str] | None = None) -> httpx.Client:
        """A client for one check; the caller closes it (``with ctx.client(...) as c``)."""
        return httpx.Client(
            base_url=base_url,
            headers=dict(headers or {}),
            timeout=min(self.http_timeout, self.settings.http_timeout),
            transport=self.transport,
        )
