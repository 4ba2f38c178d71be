"""Which URLs a report may turn into links, and the anchor each numbered source gets (pure).

Sources come from the evidence, but a URL is still a stranger's string: only an absolute
``http(s)`` URL with nothing in it that could end a Markdown destination or an HTML attribute
becomes a link (as the web page's ``dom.js`` allows only http(s)); anything else — ``javascript:``,
``data:``, a relative path — is shown as text, or not at all.
"""

from __future__ import annotations

import re

_SAFE_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?(?:/[^\s<>\"'`\\]*)?", re.IGNORECASE)


def safe_url(url: str) -> str | None:
    """``url`` when it may be a link target, else None."""
    return url if _SAFE_URL.fullmatch(url) else None


def source_anchor(number: int) -> str:
    """The id of source ``number``'s entry in the list, the target of every ``[number]``."""
    return f"source-{number}"
