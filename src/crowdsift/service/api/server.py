"""``crowdsift serve``: uvicorn running ``create_app`` on one host and port."""

from __future__ import annotations

import sys

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError


def run_server(settings: Settings, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve until interrupted. Binding beyond loopback without an API key gets a warning."""
    import uvicorn

    from crowdsift.service.api.app import create_app

    if host not in ("127.0.0.1", "localhost", "::1") and settings.api_key is None:
        print(
            f"warning: serving on {host} without CROWDSIFT_API_KEY: anyone who can reach this "
            "port can run research jobs",
            file=sys.stderr,
        )
    config = uvicorn.Config(
        create_app(settings), host=host, port=port, log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    print(f"crowdsift: serving http://{host}:{port}/ (Ctrl-C to stop)", file=sys.stderr)
    try:
        server.run()
    except OSError as exc:
        raise ConfigError(f"cannot serve on {host}:{port}: {exc}; pick another --port") from exc
