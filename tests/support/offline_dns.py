"""A resolver that answers for ``.invalid`` names without asking the network.

``.invalid`` never resolves (RFC 2606), but the system resolver may still send the query to
the configured name server. ``unresolvable_hosts`` makes ``socket.getaddrinfo`` fail for such
names on the spot, exactly as the resolver does (``socket.gaierror`` EAI_NONAME, which httpx
turns into a ``ConnectError``), and counts every lookup, so a test can tell how many requests
a client attempted. Other names are refused too unless they are loopback, so a test that
meant to stay on the machine cannot leave it by accident.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

UNRESOLVABLE = "crowdsift-test.invalid"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@contextmanager
def unresolvable_hosts() -> Iterator[Counter[str]]:
    """Patch the resolver for the block; yields the count of lookups per host name."""
    lookups: Counter[str] = Counter()
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        lookups[name] += 1
        if name in LOOPBACK:
            return real(host, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    socket.getaddrinfo = getaddrinfo
    try:
        yield lookups
    finally:
        socket.getaddrinfo = real
