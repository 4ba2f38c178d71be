"""Opening the Chroma collection feeds live in: local and persistent, or a Chroma server.

``CROWDSIFT_CHROMA_URL`` unset: a ``PersistentClient`` under ``<data dir>/chroma``. Set (e.g.
``http://127.0.0.1:8000``): an ``HttpClient`` to that server, for several workers sharing one
index. Either way the collection gets crowdsift's offline embedding function
(``CROWDSIFT_FEED_EMBEDDER``: ``minilm`` by default) and cosine space; reopening a collection
that was embedded with another embedder is refused with a message saying how to fix it,
because vectors from two models do not compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError, StoreError
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.feed.slots import SUFFIX as SLOTS_SUFFIX

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection


def open_client(settings: Settings) -> ClientAPI:
    """The Chroma client the settings ask for (telemetry off; nothing else leaves the box)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        host, port, ssl = parse_chroma_url(settings.chroma_url)
        try:
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=chroma_settings)
        except Exception as exc:  # chromadb raises bare ValueError/ConnectionError variants
            raise StoreError(
                f"cannot reach the Chroma server at {settings.chroma_url}: {exc}. "
                "Start it (`chroma run --path DIR --port PORT`) or unset CROWDSIFT_CHROMA_URL "
                "to use the local store"
            ) from exc
    settings.chroma_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(settings.chroma_dir), settings=chroma_settings)


def close_client(client: ClientAPI) -> None:
    """Release a client's connections or files (``close`` is on the concrete clients only).

    Chroma 1.5's ``close`` releases the client's shared systems, but an HTTP client's ``httpx``
    sessions are never closed and their sockets leak (one system also stays cached with no
    client left). Every system nobody holds any more is stopped, forgotten, and its sessions
    closed, so a later client to the same server starts fresh.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    close = getattr(client, "close", None)
    if not callable(close):
        return
    close()
    with SharedSystemClient._refcount_lock:
        systems = SharedSystemClient._identifier_to_system
        held = SharedSystemClient._identifier_to_refcount
        orphans = [ident for ident in systems if held.get(ident, 0) <= 0]
        released = [systems.pop(ident) for ident in orphans]
    components = [c for system in released for c in system.components()]
    admin = getattr(client, "_admin_client", None)
    servers = [getattr(client, "_server", None), getattr(admin, "_server", None)]
    for component in [*components, *servers]:
        session = getattr(component, "_session", None)
        if isinstance(session, httpx.Client):
            session.close()


def parse_chroma_url(url: str) -> tuple[str, int, bool]:
    """``http(s)://host[:port]`` → (host, port, ssl); anything else is a ConfigError."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"CROWDSIFT_CHROMA_URL={url!r} is not a Chroma server URL; "
            "expected http://host:port or https://host:port"
        )
    ssl = parts.scheme == "https"
    try:
        port = parts.port or (443 if ssl else 8000)
    except ValueError as exc:
        raise ConfigError(f"CROWDSIFT_CHROMA_URL={url!r} has an invalid port") from exc
    return parts.hostname, port, ssl


def open_collection(
    settings: Settings,
    *,
    client: ClientAPI | None = None,
    embedding_function: CrowdsiftEmbeddingFunction | None = None,
    name: str | None = None,
) -> Collection:
    """Get or create the feed collection with crowdsift's embedding function."""
    function = embedding_function or CrowdsiftEmbeddingFunction(
        settings.feed_embedder, model=settings.embedding_model
    )
    chroma = client or open_client(settings)
    collection_name = name or settings.chroma_collection
    try:
        collection = chroma.get_or_create_collection(
            collection_name,
            embedding_function=function,  # type: ignore[arg-type]
            metadata={"crowdsift": "feed posts"},
        )
    except ValueError as exc:
        raise ConfigError(
            f"cannot open Chroma collection {collection_name!r}: {exc}. Pick another "
            "CROWDSIFT_CHROMA_COLLECTION, or delete this one"
        ) from exc
    _check_embedder(collection_name, collection.configuration_json, function)
    return collection


def _check_embedder(
    name: str, configuration: Mapping[str, Any], function: CrowdsiftEmbeddingFunction
) -> None:
    """Chroma reopens a collection with whatever function it is given; vectors from two
    embedders do not compare, so a mismatch with the stored config is refused here."""
    stored = configuration.get("embedding_function") or {}
    stored_name = stored.get("name")
    stored_kind = (stored.get("config") or {}).get("embedder")
    if stored_name in (None, function.name()) and stored_kind in (None, function.kind):
        return
    used = stored_kind or stored_name
    raise ConfigError(
        f"Chroma collection {name!r} was indexed with the {used!r} embedder, not "
        f"{function.kind!r}: set CROWDSIFT_FEED_EMBEDDER={used} to read it, or index into "
        "another CROWDSIFT_CHROMA_COLLECTION"
    )


def open_feed(
    settings: Settings,
    *,
    embedding_function: CrowdsiftEmbeddingFunction | None = None,
    client: ClientAPI | None = None,
) -> tuple[Collection, Collection]:
    """The feed collection and its slot table (``<name>_slots``), from one client (pass your
    own to close it when done; a long-lived service should)."""
    client = client or open_client(settings)
    main = open_collection(settings, client=client, embedding_function=embedding_function)
    slots = client.get_or_create_collection(
        f"{main.name}{SLOTS_SUFFIX}", embedding_function=None, metadata={"crowdsift": "slots"}
    )
    return main, slots
