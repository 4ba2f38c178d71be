"""Every error crowdsift raises on purpose, drawn as one tree.

```
CrowdsiftError                 base: catch this to catch everything of ours
├── ConfigError                a setting is missing or invalid
│   ├── UsageError             asked for what cannot be: a source without its credentials (exit 2)
│   │   ├── UnknownExpertError   an expert id nobody imported (exit 2; the API answers 422)
│   │   ├── MissingExtraError    a command's extra is not installed; says the pip line (exit 2)
│   │   └── ModelUnavailableError  no embedding model found and none may be downloaded (exit 2)
│   └── ModelDownloadError     the embedding model's download failed (HTTP, size, SHA-256)
├── PlanError                  a SearchPlan file cannot be read or validated
├── SourceError                a content source failed
│   ├── AuthError              the token endpoint refused our credentials
│   ├── TransportError         HTTP failed for good (status, URL), retries spent
│   │   ├── HttpStatusError      a non-retryable 4xx/3xx answer (status, URL, body)
│   │   ├── RetryBudgetExceededError  the whole fetch spent its retry budget
│   │   └── SourceUnreachableError    no connection at all (DNS, refused, TLS): the source failed
│   ├── ResponseError          the body was not the JSON shape we expect
│   └── SubredditUnavailableError   403/404 on one subreddit; the fetcher skips it
├── EngineError                an LLM task could not produce a valid answer
│   ├── EngineConfigError      no key / bad base URL; names the variable, suggests --engine local
│   │   └── EngineSetupError     the engine cannot be built as configured (a usage error: exit 2)
│   ├── EngineTransportError   the endpoint failed after retries (status, URL)
│   └── EngineOutputError      the reply was not valid JSON for the task, even after one repair
├── ArchiveError               a local archive is missing, unreadable or corrupt
│   └── DumpFormatError        an input file is not a dump / API JSON we know
├── StoreError                 a database (comments, jobs, experts) cannot be opened or written
└── BrokerError                the job broker (Redis) cannot take a job or run a worker
```

Messages say what happened, where (URL, status, file, line) and what to do next.
"""

from __future__ import annotations


class CrowdsiftError(Exception):
    """Base class of every error crowdsift raises deliberately."""


class ConfigError(CrowdsiftError):
    """A setting is missing or invalid; the message names the variable to set."""


class UsageError(ConfigError):
    """The command asked for something that cannot be done as asked: a source chosen without
    its credentials, an expert that does not exist. The user fixes the command or the
    environment, so the CLI exits 2 (a usage problem), not 1."""


class UnknownExpertError(UsageError):
    """Expert ids that are neither imported nor bundled; the message lists the known ones."""

    def __init__(self, missing: list[str], known: list[str]) -> None:
        super().__init__(
            f"unknown expert(s) {', '.join(missing)}; known: {', '.join(known) or 'none'}. "
            "Import a channel with `crowdsift experts import RESULT.json`"
        )
        self.missing = missing
        self.known = known


class MissingExtraError(UsageError):
    """A command needs an optional part (an extra) that is not installed; the message ends
    with the exact ``pip install 'crowdsift[...]'`` line (``core.extras.require_extra``)."""

    def __init__(self, message: str, *, extra: str, pip_line: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.pip_line = pip_line


class ModelUnavailableError(UsageError):
    """The local engine found no embedding model and may not download one; the message says
    the two ways to get it (``engines.model_files``)."""


class ModelDownloadError(ConfigError):
    """Downloading the embedding model failed (HTTP status, connection, size or SHA-256);
    nothing was left in the cache."""


class PlanError(CrowdsiftError):
    """A SearchPlan file is missing, not JSON, or fails validation."""


class SourceError(CrowdsiftError):
    """A content source (Reddit API, Arctic Shift, archive) failed."""


class AuthError(SourceError):
    """OAuth credentials were refused; the message names the setting to fix."""


class TransportError(SourceError):
    """An HTTP request failed after its retries; carries the status and the URL."""

    def __init__(self, message: str, *, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class HttpStatusError(TransportError):
    """A 3xx/4xx answer that retrying cannot fix; sources map it (403/404 → unavailable)."""

    def __init__(
        self, message: str, *, url: str = "", status: int | None = None, body: object = None
    ) -> None:
        super().__init__(message, url=url, status=status)
        self.body = body


class RetryBudgetExceededError(TransportError):
    """The fetch as a whole used up its retry budget; results so far are kept by the caller."""


class SourceUnreachableError(TransportError):
    """The source's host could not be reached at all: its name does not resolve (never
    retried), or connections are refused or fail TLS (after the retry policy).

    A failure of the whole source, not of one query: the fetcher stops, and a run with nothing
    else to answer fails (exit 1) instead of reporting "no discussion found".
    """

    def __init__(self, message: str, *, source: str, host: str, cause: str, url: str = "") -> None:
        super().__init__(message, url=url, status=None)
        self.source = source
        self.host = host
        self.cause = cause


class ResponseError(SourceError):
    """The server answered, but not with the JSON shape its API documents."""


class SubredditUnavailableError(SourceError):
    """A subreddit is private, banned, quarantined or missing (HTTP 403/404).

    The fetcher logs the reason and carries on with the rest of the plan.
    """

    def __init__(self, subreddit: str, reason: str, *, status: int | None = None) -> None:
        super().__init__(f"r/{subreddit} is unavailable: {reason}")
        self.subreddit = subreddit
        self.reason = reason
        self.status = status


class EngineError(CrowdsiftError):
    """An engine (LLM or local) could not complete a task."""


class BudgetExceededError(EngineError):
    """The run's ``--budget-usd`` is spent: the call was not made, and the phase degrades.

    It is an ``EngineError`` on purpose, so every phase treats it as the outage it already
    survives (the gate fails open, scoring returns empty, synthesis falls back) and the run ends
    ``partial`` with what it has.
    """


class EngineConfigError(EngineError, ConfigError):
    """The engine is not configured; the message names the variable and ``--engine local``."""


class EngineSetupError(EngineConfigError, UsageError):
    """The chosen engine cannot even be built (no API key, a base URL that is not http(s)):
    fixed in the environment before any request, so a usage error (the CLI exits 2)."""


class EngineTransportError(EngineError):
    """The chat endpoint failed after retries; carries the status and the URL."""

    def __init__(self, message: str, *, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class EngineOutputError(EngineError):
    """The model's reply did not parse or validate as the task's output, even after a repair."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class ArchiveError(CrowdsiftError):
    """A local archive is missing, unreadable or not a crowdsift archive."""


class DumpFormatError(ArchiveError):
    """An import file is neither NDJSON dump lines nor saved Reddit API JSON."""


class StoreError(CrowdsiftError):
    """A database (comments, jobs, experts) cannot be opened or written."""


class BrokerError(CrowdsiftError):
    """The job broker (Redis at CROWDSIFT_BROKER_URL) could not take a job or run a worker."""
