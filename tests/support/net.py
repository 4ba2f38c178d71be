"""Ports and readiness for tests that start real servers (uvicorn, workers, MCP) on loopback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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


@contextmanager
def serve_app(app: Any, *, name: str = "test-uvicorn", **config: Any) -> Iterator[str]:
    """``app`` under a real uvicorn on a free port of 127.0.0.1 in a thread, stopped on exit.

    Yields the base URL. ``config`` goes to ``uvicorn.Config`` (e.g. graceful-shutdown time).
    """
    import uvicorn

    settings = {"log_level": "warning", "access_log": False, "lifespan": "on", **config}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, **settings))
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(timeout=10)
            raise RuntimeError("uvicorn did not start on 127.0.0.1")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        if thread.is_alive():
            raise RuntimeError("uvicorn did not stop within 30 s")
