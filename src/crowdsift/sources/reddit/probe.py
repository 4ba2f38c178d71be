"""Is Arctic Shift answering right now? One cheap request, no retries, no cache.

``--source auto`` asks this before it relies on Arctic Shift (so a run whose Arctic Shift is
down plans for the archive instead), and ``crowdsift doctor`` reports it. The request is a
lookup of one post by id (``/api/posts/ids``), the cheapest thing the API serves; any 2xx
means it answers. A refusal, a throttle or no connection at all is a ``SourceStatus`` that
says which, with the error's own message (what happened, what to do).
"""

from __future__ import annotations

import httpx

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.models import SourceStatus
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.reddit.failures import source_failure

PROBE_PATH = "/api/posts/ids"
PROBE_PARAMS = {"ids": "t3_1"}
"""Reddit's oldest post id: a primary-key lookup, whatever the archive holds."""


def probe_arctic_shift(
    settings: Settings, *, http_client: httpx.Client | None = None
) -> SourceStatus:
    """Ask ``ARCTIC_SHIFT_BASE_URL`` once; ``ok`` when it answers, else why not.

    An injected client is used as is (and left open); otherwise one is built the way the
    ``arctic-shift`` source builds its own, and closed.
    """
    if http_client is not None:
        return probe_client(http_client)
    from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource

    source = ArcticShiftSource.from_settings(settings)
    try:
        return probe_client(source.transport.client)
    finally:
        source.close()


def probe_client(client: httpx.Client) -> SourceStatus:
    """The probe over a client whose ``base_url`` is an Arctic Shift API (its headers, its
    timeout): one attempt, so a dead host costs one connection attempt, not the retry policy."""
    transport = HttpTransport(client, source="arctic-shift", max_retries=0)
    try:
        transport.get_json(PROBE_PATH, PROBE_PARAMS)
    except CrowdsiftError as exc:
        failure = source_failure(exc)
        state = failure.state if failure is not None else "unreachable"
        detail = failure.detail if failure is not None else str(exc)
        return SourceStatus(
            source="arctic-shift", status=state, detail=detail,
            requests=transport.stats.requests,
        )  # fmt: skip
    return SourceStatus(
        source="arctic-shift", status="ok", detail=f"answered at {client.base_url}",
        requests=transport.stats.requests,
    )  # fmt: skip
