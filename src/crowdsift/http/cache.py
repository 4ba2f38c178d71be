"""A shared cache of successful JSON GET bodies, so a repeated question spends no API quota.

Reddit's OAuth API allows a few hundred requests per window and Arctic Shift asks for "a couple
per second": the same search asked twice (a retried job, two users, the web page and the MCP
server) should cost the upstream nothing the second time. The transport asks the cache before
the rate limiter and the network, and stores the body of every 2xx answer that parsed, as
the transport parsed it: with usernames already replaced by salted hashes (``http.py``).

Two backends, one small protocol (``get``/``set``/``close`` of raw bytes):

* ``SqliteResponseCache`` — the default, a file in the data directory. WAL mode and a busy
  timeout let several threads and worker processes share it; expired rows are ignored on read
  and deleted now and then on write.
* ``RedisResponseCache`` — when ``CROWDSIFT_CACHE_URL`` is ``redis://…``: workers on other
  machines share it, and Redis expires keys itself (``SET … PX``).

A cache is an optimisation, never a reason for a fetch to fail: ``open_response_cache`` turns
an unreachable Redis or an unwritable file into one warning and no cache, and ``FailSafeCache``
turns errors at ``get``/``set`` time into a miss (with one warning per cache).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit, urlunsplit

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError, MissingExtraError
from crowdsift.core.extras import require_extra
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.core.schema_lock import SchemaLockTimeoutError, schema_lock

log = get_logger(__name__)

REDIS_NAMESPACE = "crowdsift:http:"
SQLITE_FILENAME = "cache.sqlite"
_KEY_VERSION = 2  # bump when the key material changes, so old entries are simply never read
_SQLITE_SCHEMA = 2  # PRAGMA user_version; older files held bodies with usernames: emptied
_PRUNE_EVERY = 256
_SQLITE_BUSY_TIMEOUT = 10.0
_REDIS_TIMEOUT = 2.0
_FAILURE_COOLDOWN = 30.0
_WHAT_TO_DO = (
    "Fetching continues without the response cache. Fix CROWDSIFT_CACHE_URL (or the data "
    "directory's permissions), or set CROWDSIFT_CACHE_TTL=0 to turn the cache off."
)


class ResponseCacheError(CrowdsiftError):
    """A response cache backend cannot be opened (unreachable Redis, unwritable file)."""


class ResponseCache(Protocol):
    """Raw response bodies by key, each kept for ``ttl`` seconds. Must be thread-safe."""

    def get(self, key: str) -> bytes | None:
        """The stored body, or None when absent or expired."""
        ...

    def set(self, key: str, value: bytes, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds (replacing any older value)."""
        ...

    def close(self) -> None:
        """Release connections or files the cache opened itself."""
        ...


class FromSettings(Enum):
    """The type of ``FROM_SETTINGS``: "no cache given, open the configured one"."""

    SENTINEL = "from-settings"


FROM_SETTINGS: Final = FromSettings.SENTINEL
"""``HttpTransport.from_settings(cache=FROM_SETTINGS)`` (the default): open the configured cache."""


def is_cacheable(body: Any) -> bool:
    """False for an API error envelope sent with a 2xx status (Arctic Shift's query timeout).

    Such an answer is a transient failure: caching it would repeat it for the whole TTL.
    """
    return not (isinstance(body, dict) and body.get("error"))


# --- keys --------------------------------------------------------------------------------


def _param_text(value: str | int | float | bool) -> str:
    """A query value as httpx sends it, so ``1`` and ``"1"`` (one request) share a key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cache_key(
    source: str,
    base_url: str,
    path: str,
    params: Mapping[str, str | int | float] | None,
    *,
    identity: str | None = None,
    privacy: str | None = None,
) -> str:
    """A stable key for one GET: source, base URL, path and the *sorted* query parameters.

    Everything is hashed (SHA-256), so nothing secret is ever stored or shown in clear.
    ``identity`` separates what different Reddit users may see (a password grant reads as that
    user); leave it None for anonymous or app-only access. ``privacy`` is the author policy's
    state (``crowdsift.core.privacy.privacy_state``): bodies scrubbed under one salt, or kept with
    names, are never served to a transport that would have stored them otherwise.
    """
    if "://" not in path:
        path = "/" + path.lstrip("/")
    material = {
        "v": _KEY_VERSION,
        "source": source,
        "base_url": base_url.rstrip("/"),
        "path": path,
        "params": sorted((str(name), _param_text(v)) for name, v in (params or {}).items()),
        "identity": identity,
        "privacy": privacy,
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{source}:{hashlib.sha256(text.encode()).hexdigest()}"


# --- SQLite ------------------------------------------------------------------------------


def sqlite_path(path_or_url: str | Path) -> Path:
    """``sqlite:///rel/path`` / ``sqlite:////abs/path`` (SQLAlchemy's spelling) or a plain path."""
    text = str(path_or_url)
    if text.startswith("sqlite:///"):
        return Path(text.removeprefix("sqlite:///"))
    if text.startswith("sqlite:"):
        raise ResponseCacheError(
            f"{text!r} is not a SQLite cache URL; write sqlite:///relative/path or "
            "sqlite:////absolute/path in CROWDSIFT_CACHE_URL."
        )
    return Path(text)


def _upgrade(conn: sqlite3.Connection) -> None:
    """Empty a cache file written before bodies were scrubbed of usernames (schema 1).

    Those rows would never be read again (the key version changed), but they hold names
    until they expire: delete them now, with ``secure_delete`` so the freed pages are zeroed,
    and checkpoint the WAL that still holds the old pages.
    """
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version >= _SQLITE_SCHEMA:
        return
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()  # another process may have
        if version < _SQLITE_SCHEMA:
            conn.execute("DELETE FROM responses")
            conn.execute(f"PRAGMA user_version = {_SQLITE_SCHEMA}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA secure_delete = OFF")


class SqliteResponseCache:
    """Responses in one SQLite file that threads and processes share (WAL, busy timeout).

    One connection serialised by a lock serves the threads of a process; other processes open
    their own and SQLite's file locking keeps them consistent.
    """

    def __init__(
        self,
        path_or_url: str | Path,
        *,
        clock: Callable[[], float] = time.time,
        prune_every: int = _PRUNE_EVERY,
    ) -> None:
        self.path = sqlite_path(path_or_url)
        self._clock = clock
        self._prune_every = max(prune_every, 1)
        self._lock = threading.Lock()
        self._writes = 0
        try:
            self._conn = self._connect()
        except (OSError, sqlite3.Error, SchemaLockTimeoutError) as exc:
            raise ResponseCacheError(
                f"cannot open the response cache {self.path}: {type(exc).__name__}: {exc}."
            ) from exc

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=_SQLITE_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
        )
        try:
            with schema_lock(self.path):  # one process at a time sets up a fresh file
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS responses ("
                    "key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL NOT NULL)"
                )
                conn.execute(
                    "CREATE INDEX IF NOT EXISTS responses_expiry ON responses (expires_at)"
                )
                _upgrade(conn)
            conn.execute("DELETE FROM responses WHERE expires_at <= ?", (self._clock(),))
        except (sqlite3.Error, SchemaLockTimeoutError):
            conn.close()
            raise
        return conn

    def get(self, key: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT value FROM responses WHERE key = ? AND expires_at > ?",
                (key, self._clock()),
            ).fetchone()
        return bytes(row[0]) if row is not None else None

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        now = self._clock()
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, expires_at) VALUES (?, ?, ?)",
                (key, value, now + ttl),
            )
            self._writes += 1
            if self._writes % self._prune_every == 0:
                self._conn.execute("DELETE FROM responses WHERE expires_at <= ?", (now,))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteResponseCache({str(self.path)!r})"


# --- Redis -------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``: safe for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:" if parts.username else ":"
    return urlunsplit(parts._replace(netloc=f"{user}***@{netloc}"))


if TYPE_CHECKING:
    import redis


class RedisResponseCache:
    """Responses in Redis under ``crowdsift:http:<key>``, expired by Redis itself.

    Built from ``url`` it owns (pings at once, closes on ``close``) its client; an injected
    ``client`` belongs to the caller and is neither pinged nor closed.
    """

    def __init__(
        self,
        url: str,
        *,
        client: redis.Redis | None = None,
        namespace: str = REDIS_NAMESPACE,
    ) -> None:
        self.url = redact_url(url)
        self.namespace = namespace
        self._owns_client = client is None
        if client is not None:
            self._client = client
            return
        require_extra("scale", "redis", purpose="a Redis response cache (CROWDSIFT_CACHE_URL)")
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        password = urlsplit(url).password
        if password:
            register_secrets([password])
        self._client = redis.Redis.from_url(
            url,
            socket_connect_timeout=_REDIS_TIMEOUT,
            socket_timeout=_REDIS_TIMEOUT,
            retry=Retry(NoBackoff(), 1),
        )
        try:
            self._client.ping()
        except redis.RedisError as exc:
            self._client.close()
            raise ResponseCacheError(
                f"cannot reach the Redis response cache at {self.url}: {type(exc).__name__}: {exc}."
            ) from exc

    def get(self, key: str) -> bytes | None:
        value = self._client.get(self.namespace + key)
        return value if isinstance(value, bytes) else None

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        # PX, not EX: a TTL in whole seconds would round sub-second settings to nothing.
        self._client.set(self.namespace + key, value, px=max(int(ttl * 1000), 1))

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __repr__(self) -> str:
        return f"RedisResponseCache({self.url!r})"


# --- failure tolerance and opening from settings -----------------------------------------


class FailSafeCache:
    """A cache whose every failure is a miss: one warning, then the fetch goes upstream.

    After a failure the cache is left alone for ``cooldown`` seconds, so a Redis that went
    away costs one connection attempt per cooldown, not two per request.
    """

    def __init__(
        self,
        inner: ResponseCache,
        *,
        cooldown: float = _FAILURE_COOLDOWN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.cooldown = cooldown
        self._clock = clock
        self._resume_at = float("-inf")
        self._warned = False

    def get(self, key: str) -> bytes | None:
        if self._clock() < self._resume_at:
            return None
        try:
            return self.inner.get(key)
        except Exception as exc:  # a cache must never fail a fetch
            self._failed("get", exc)
            return None

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if self._clock() < self._resume_at:
            return
        try:
            self.inner.set(key, value, ttl)
        except Exception as exc:  # a cache must never fail a fetch
            self._failed("set", exc)

    def close(self) -> None:
        try:
            self.inner.close()
        except Exception as exc:  # closing an already broken cache is not news
            log.debug("response_cache_close_failed", cache=repr(self.inner), error=repr(exc))

    def _failed(self, operation: str, exc: Exception) -> None:
        self._resume_at = self._clock() + self.cooldown
        fields = {
            "cache": repr(self.inner),
            "operation": operation,
            "error": f"{type(exc).__name__}: {exc}",
        }
        if self._warned:
            log.debug("response_cache_failed", **fields)
            return
        self._warned = True
        log.warning(
            "response_cache_failed",
            **fields,
            hint=f"requests go upstream; the cache is tried again every {self.cooldown:g} s "
            "and further failures are logged at debug level",
        )


def fail_safe(cache: ResponseCache) -> FailSafeCache:
    """``cache`` wrapped once in ``FailSafeCache`` (an already wrapped cache is returned as is)."""
    return cache if isinstance(cache, FailSafeCache) else FailSafeCache(cache)


def _open_backend(settings: Settings) -> ResponseCache:
    url = settings.cache_url
    if not url:
        return SqliteResponseCache(settings.data_dir / SQLITE_FILENAME)
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("redis", "rediss", "unix"):
        return RedisResponseCache(url)
    if scheme == "sqlite":
        return SqliteResponseCache(url)
    raise ResponseCacheError(
        f"CROWDSIFT_CACHE_URL={redact_url(url)!r} names no cache we know; use redis://host:port/db "
        "or sqlite:///path (or leave it unset for a SQLite file in the data directory)."
    )


def open_response_cache(settings: Settings) -> FailSafeCache | None:
    """The configured cache, fail-safe; None when ``cache_ttl`` is 0 or the cache cannot open.

    Opening failures are logged as one warning and the caller runs uncached.
    """
    if settings.cache_ttl <= 0:
        return None
    try:
        backend = _open_backend(settings)
    except ResponseCacheError as exc:
        log.warning("response_cache_unavailable", error=str(exc), hint=_WHAT_TO_DO)
        return None
    except MissingExtraError as exc:  # redis:// without the redis package: run uncached
        log.warning("response_cache_unavailable", error=str(exc), hint=exc.pip_line)
        return None
    log.debug("response_cache_opened", cache=repr(backend), ttl_s=settings.cache_ttl)
    return FailSafeCache(backend)
