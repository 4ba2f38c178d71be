"""Ports and readiness for tests that start real servers (uvicorn, workers, MCP) on loopback."""

from __future__ import annotations

import socket
import time

import httpx


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_http(url: str, *, timeout: float = 60.0, interval: float = 0.1) -> httpx.Response:
    """GET ``url`` until it answers (any status); raises TimeoutError naming the URL."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=2.0)
        except httpx.TransportError as exc:
            last = exc
            time.sleep(interval)
    raise TimeoutError(f"{url} did not answer within {timeout} s (last error: {last})")
