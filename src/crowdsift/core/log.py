"""Structured logging: an event name plus fields, to stderr, with secrets redacted.

Every module logs through ``get_logger(__name__)`` and calls ``log.info("event_name", k=v)``.
Redaction happens in one processor, so no call site can leak a token by forgetting to.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any, TextIO

import structlog

_SENSITIVE_KEYS = re.compile(
    r"(?i)(token|secret|password|passwd|authorization|api[_-]?key|client_secret|cookie)"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
REDACTED = "***"

_secret_values: set[str] = set()


def register_secrets(values: Iterable[str]) -> None:
    """Remember secret values so they are masked wherever they appear in a log line."""
    _secret_values.update(v for v in values if v and len(v) >= 4)


def redact_text(text: str) -> str:
    """Mask registered secrets and bearer/basic credentials inside free text."""
    for secret in sorted(_secret_values, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def _is_sensitive(key: str) -> bool:
    """Credential-like field names; token *counts* (``prompt_tokens``) are not secrets."""
    lowered = key.lower()
    if lowered.endswith("tokens") or lowered.startswith("tok_"):
        return False
    return bool(_SENSITIVE_KEYS.search(key))


def _redact_value(key: str, value: Any) -> Any:
    if _is_sensitive(key) and value not in (None, "", False):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(key, v) for v in value]
    return value


def _redact_processor(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    return {key: _redact_value(key, value) for key, value in event_dict.items()}


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is *now*: hosts and test runners swap and close it,
    and a logger that captured an old stream would write to a closed file."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "WARNING", stream: TextIO | None = None) -> None:
    """Route structured events to ``stream`` (stderr) at ``level``; safe to call repeatedly."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact_processor,
            structlog.processors.KeyValueRenderer(
                key_order=["timestamp", "level", "event"], drop_missing=True
            ),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream or _CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )


def get_logger(name: str) -> Any:
    """A structured logger bound to the module name."""
    return structlog.get_logger(module=name)


# structlog's own default prints every event, DEBUG included, to stdout: that would corrupt the
# JSON a library user pipes on. Unless the host application configured structlog itself, start
# from a quiet, redacting default (WARNING, stderr); the CLI and tests reconfigure as needed.
if not structlog.is_configured():
    configure_logging()
