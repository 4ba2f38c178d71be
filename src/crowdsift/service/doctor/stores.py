"""Doctor checks on the stores the settings select: the database, Redis, Chroma.

Only what is in use gets a line: SQLite or PostgreSQL always (jobs, comments), Redis when
``CROWDSIFT_CACHE_URL`` or ``CROWDSIFT_BROKER_URL`` names it, Chroma as configured (a server
with ``CROWDSIFT_CHROMA_URL``, else the local directory). Each connects with a short timeout and
does the smallest read that proves it answers; URLs are shown with their passwords hidden.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from crowdsift.core.extras import has_module, pip_line
from crowdsift.core.log import REDACTED
from crowdsift.service.doctor.context import DoctorContext
from crowdsift.service.doctor.models import Check

CONNECT_TIMEOUT = 5
"""Seconds to wait for a database or Redis server to accept the connection."""
_SECRET_PARAMS = {"password", "token", "secret", "api_key", "apikey"}
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def safe_url(url: str) -> str:
    """``url`` with the password in its user part and any password/token parameter hidden."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{hostport}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode(
        [(k, REDACTED if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="*"
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def check_database(ctx: DoctorContext) -> Check:
    """The SQLAlchemy database (``CROWDSIFT_DATABASE_URL``, else SQLite in the data dir)."""
    url = ctx.settings.resolved_database_url
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
        return _check_sqlite(Path(url.removeprefix("sqlite:///")))
    import sqlalchemy

    shown = safe_url(url)
    connect_args = {"connect_timeout": CONNECT_TIMEOUT} if url.startswith("postgres") else {}
    try:
        engine = sqlalchemy.create_engine(url, connect_args=connect_args)
        try:
            with engine.connect() as conn:
                conn.execute(sqlalchemy.text("SELECT 1"))
                version = conn.dialect.server_version_info
        finally:
            engine.dispose()
    except (sqlalchemy.exc.SQLAlchemyError, ImportError, ValueError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return Check(
            name="database",
            status="fail",
            detail=f"cannot connect to {shown}: {reason}",
            fix="start the server, or fix CROWDSIFT_DATABASE_URL (e.g. "
            "postgresql+psycopg://user@host/db); unset it to use SQLite in the data directory",
        )
    release = ".".join(str(part) for part in version or ()) or "unknown version"
    return Check(name="database", status="ok", detail=f"{engine.dialect.name} {release} at {shown}")


def _check_sqlite(path: Path) -> Check:
    if not path.exists():
        if _creatable(path.parent):
            return Check(
                name="database", status="ok", detail=f"SQLite at {path} (created on first use)"
            )
        return Check(
            name="database",
            status="fail",
            detail=f"SQLite at {path}: its directory cannot be created or written",
            fix="set CROWDSIFT_HOME to a writable directory, or CROWDSIFT_DATABASE_URL",
        )
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check(
            name="database",
            status="fail",
            detail=f"SQLite at {path} cannot be read: {exc}",
            fix="move the file aside (a new one is created on first use), or set "
            "CROWDSIFT_DATABASE_URL",
        )
    size = path.stat().st_size / 1_000_000
    return Check(
        name="database", status="ok", detail=f"SQLite at {path}: {size:.1f} MB, {tables} objects"
    )


def check_redis(ctx: DoctorContext) -> Check | None:
    """Redis, when the cache or the job broker uses it (None: not in use, no line)."""
    roles: dict[str, list[str]] = {}
    for role, url in (("cache", ctx.settings.cache_url), ("broker", ctx.settings.broker_url)):
        if url and url.startswith(_REDIS_SCHEMES):
            roles.setdefault(url, []).append(role)
    if not roles:
        return None
    if not has_module("redis"):
        return Check(
            name="redis",
            status="fail" if ctx.settings.cache_url in roles else "warn",
            detail=f"{', '.join(safe_url(url) for url in roles)} is set, but the redis package "
            "is not installed",
            fix=f"{pip_line('scale')}, or unset CROWDSIFT_CACHE_URL / CROWDSIFT_BROKER_URL",
        )
    import redis

    answered, failed = [], []
    for url, used_by in roles.items():
        where = f"{safe_url(url)} ({', '.join(used_by)})"
        client = redis.Redis.from_url(
            url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT
        )
        try:
            client.ping()
            answered.append(where)
        except redis.RedisError as exc:
            failed.append((where, used_by, exc))
        finally:
            client.close()
    if not failed:
        return Check(name="redis", status="ok", detail=f"PING answered by {'; '.join(answered)}")
    needed = any("cache" in used_by for _, used_by, _ in failed)
    return Check(
        name="redis",
        # the response cache is on every run's path; the broker only on `crowdsift serve`'s
        status="fail" if needed else "warn",
        detail="; ".join(f"cannot reach {where}: {exc}" for where, _, exc in failed),
        fix="start Redis, or fix CROWDSIFT_CACHE_URL / CROWDSIFT_BROKER_URL (unset them for "
        "the SQLite cache and the in-process job pool)",
    )


def check_chroma(ctx: DoctorContext) -> Check:
    """Chroma, as feeds use it: the server's heartbeat, or the local directory's state."""
    if not has_module("chromadb"):
        return Check(
            name="chroma",
            status="ok",  # only feeds use Chroma; `ask` works without it
            detail=f"not installed: only `crowdsift feed` needs it ({pip_line('feed')})",
        )
    url = ctx.settings.chroma_url
    if url:
        base = url.rstrip("/")
        try:
            with ctx.client(base) as client:
                response = client.get("/api/v2/heartbeat")
            ok = response.status_code == 200
            reason = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            ok, reason = False, str(exc) or type(exc).__name__
        if ok:
            return Check(name="chroma", status="ok", detail=f"server at {safe_url(base)} answered")
        return Check(
            name="chroma",
            # only feeds use Chroma; `ask` works without it
            status="warn",
            detail=f"cannot reach the Chroma server at {safe_url(base)}: {reason}",
            fix="start it (`chroma run --path DIR --port PORT`) or unset CROWDSIFT_CHROMA_URL "
            "for the local store",
        )
    directory = ctx.settings.chroma_dir
    if directory.is_dir():
        size = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) / 1_000_000
        return Check(
            name="chroma", status="ok", detail=f"local store at {directory}: {size:.1f} MB"
        )
    if _creatable(directory):
        return Check(
            name="chroma",
            status="ok",
            detail=f"local store at {directory} (created by `crowdsift index`)",
        )
    return Check(
        name="chroma",
        status="warn",
        detail=f"local store at {directory}: the directory cannot be created",
        fix="set CROWDSIFT_HOME to a writable directory, or CROWDSIFT_CHROMA_URL",
    )


def _creatable(directory: Path) -> bool:
    """Whether ``directory`` exists writable, or its nearest existing parent is writable."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False
