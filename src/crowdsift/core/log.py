"""Structured logging: an event name plus fields, to stderr, with secrets redacted.

Every module logs through ``get_logger(__name__)`` and calls ``log.info("event_name", k=v)``.
Redaction happens in one processor, so no call site can leak a token by forgetting to.

Two ways out: ``configure_logging`` writes every event at or above a level as one structured
line (``timestamp=… level=… event=…``) — for ``-v``, ``CROWDSIFT_LOG_LEVEL``, the service and
library users; ``configure_terminal_logging`` is a normal CLI run's: each warning once, as one
plain line (``warning: archive subreddits not held (missing: foo)``), and the structured lines
only in a log file when one is given.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path
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


_HIDDEN_FIELDS = frozenset({"timestamp", "level", "event", "module", "exc_info"})


def plain_line(event_dict: MutableMapping[str, Any]) -> str:
    """One event as a plain terminal line: ``warning: <event in words> (<field>: <value>; …)``.

    Every level reads "warning": the run goes on (a failed run says ``error:`` itself)."""
    words = str(event_dict.get("event", "")).replace("_", " ")
    details = [
        f"{key.replace('_', ' ')}: {_plain_value(value)}"
        for key, value in event_dict.items()
        if key not in _HIDDEN_FIELDS
    ]
    line = f"warning: {words}" + (f" ({'; '.join(details)})" if details else "")
    return " ".join(line.split())  # one line, whatever a value held


def _plain_value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


class _TerminalAndFile:
    """The last processor of a normal CLI run: each distinct warning line once on the
    terminal; every event at or above ``file_level`` as a structured line in ``log_file``."""

    def __init__(self, stream: TextIO | None, log_file: Path | None, file_level: int) -> None:
        self._stream = stream
        self._log_file = log_file
        self._file_level = file_level
        self._shown: set[str] = set()
        self._render = structlog.processors.KeyValueRenderer(
            key_order=["timestamp", "level", "event"], drop_missing=True
        )

    def __call__(
        self, logger: Any, name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        level = logging.getLevelNamesMapping().get(str(event_dict.get("level", "")).upper(), 0)
        if self._log_file is not None and level >= self._file_level:
            line = self._render(logger, name, dict(event_dict))
            with self._log_file.open("a", encoding="utf-8") as handle:  # O_APPEND: one line
                handle.write(f"{line}\n")
        if level >= logging.WARNING:
            text = plain_line(event_dict)
            if text not in self._shown:
                self._shown.add(text)
                stream = self._stream or sys.stderr
                stream.write(f"{text}\n")
                stream.flush()
        raise structlog.DropEvent


def configure_terminal_logging(
    *, log_file: Path | None = None, file_level: str = "INFO", stream: TextIO | None = None
) -> None:
    """A normal CLI run: no structured line on the terminal, each warning once as a plain
    line on ``stream`` (stderr); with ``log_file``, every event at or above ``file_level`` is
    appended there as a structured line."""
    mapping = logging.getLevelNamesMapping()
    to_file = mapping.get(file_level.upper(), logging.INFO)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
    lowest = min(to_file, logging.WARNING) if log_file is not None else logging.WARNING
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact_processor,
            _TerminalAndFile(stream, log_file, to_file),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lowest),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
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
