"""How crowdsift names itself to the public APIs it reads without an account.

Arctic Shift and YouTube are asked as crowdsift, ``crowdsift/<version> (+<project URL>)``, the
convention crawlers use so an operator who sees our traffic knows whose it is and where to
read about it. They are not sent the Reddit user agent: that one names the operator's Reddit
account (Reddit's rule for its API) and is nobody else's business.

The URL is the project's own, from ``[project.urls]`` in ``pyproject.toml`` as the installed
package metadata carries it (``Homepage`` first, then ``Repository``/``Source``, then any);
without one the agent is ``crowdsift/<version>`` alone, never a made-up address.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import metadata

from crowdsift import __version__

_PREFERRED = ("homepage", "repository", "source")


def project_url(read: Callable[[str], metadata.PackageMetadata] = metadata.metadata) -> str | None:
    """The project URL from the installed metadata's ``Project-URL`` entries, or None."""
    try:
        entries = read("crowdsift").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = str(entry).partition(",")
        if url.strip().startswith(("https://", "http://")):
            urls.setdefault(label.strip().lower(), url.strip())
    for label in _PREFERRED:
        if label in urls:
            return urls[label]
    return next(iter(urls.values()), None)


def user_agent(version: str = __version__, url: str | None = None) -> str:
    """``crowdsift/<version> (+<url>)``, or ``crowdsift/<version>`` without a URL."""
    return f"crowdsift/{version} (+{url})" if url else f"crowdsift/{version}"


@cache
def crowdsift_user_agent() -> str:
    """The agent Arctic Shift and YouTube requests carry (metadata read once per process)."""
    return user_agent(__version__, project_url())
