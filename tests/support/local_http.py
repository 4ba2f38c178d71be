"""A threaded HTTP/1.1 server on 127.0.0.1 that hands every request to a plain ``respond``.

The protocol fakes (``RedditProtocolServer``) decide *what* to answer; this module does the
socket work: keep-alive, ``Content-Length``, closing a connection without an answer (a
``None`` reply), and a ``stop()`` that really stops — it shuts down open keep-alive sockets
and joins their threads, so tests running with ``filterwarnings = error`` see no unclosed
sockets and no stray threads.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Self


@dataclass
class Reply:
    """One HTTP answer: status, body bytes and headers (Content-Length is added on sending)."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class Responder(Protocol):
    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> Reply | None:
        """The answer to a request (headers lower-cased); None closes the connection unanswered."""
        ...


class LocalHTTPServer:
    """Serves ``responder`` on a free port of 127.0.0.1 from a background thread."""

    def __init__(self, responder: Responder, *, name: str = "local-http-server") -> None:
        self._responder = responder
        self._name = name
        self._httpd: _ThreadingServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(f"{self._name} is not running: call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        if self._httpd is not None:
            return
        self._httpd = _ThreadingServer(self._responder)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # stop() waits at most this long for the loop
            name=self._name,
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, drop open keep-alive connections, and wait for every thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class _ThreadingServer(ThreadingHTTPServer):
    """Tracks live connections so ``stop()`` can close keep-alive sockets and join threads."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._handlers: set[threading.Thread] = set()
        """Every handler thread that ever served here: one that untracked its connection may
        still be closing it, and ``close_connections`` must wait for it too."""
        self._conn_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._conn_lock:
            if alive:
                self._connections[conn] = threading.current_thread()
                self._handlers.add(threading.current_thread())
            else:
                self._connections.pop(conn, None)

    def close_connections(self) -> None:
        with self._conn_lock:
            live = list(self._connections)
            handlers = list(self._handlers)
        for conn in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in handlers:
            thread.join(timeout=5)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-answer are normal in fault tests; do not print tracebacks."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection lets its thread go after this long
    server: _ThreadingServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without NODELAY, Nagle plus delayed ACKs
        # would add ~40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        super().finish()

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.responder.respond(method, self.path, headers, body)
        if reply is None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the fakes keep their own request logs."""


class ProtocolServer:
    """What every protocol fake shares: start, stop, a context manager, its base URL.

    Subclasses set ``self._http`` to the ``LocalHTTPServer`` that serves them.
    """

    _http: LocalHTTPServer

    def start(self) -> None:
        self._http.start()

    def stop(self) -> None:
        """Stop serving, drop open keep-alive connections, and wait for handler threads."""
        self._http.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self._http.base_url
