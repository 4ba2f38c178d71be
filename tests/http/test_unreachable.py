"""A source that cannot be reached: a name that does not resolve is never retried; refused
connections and failed TLS handshakes get the normal retry policy; either way the error names
the source, the host and the cause, and the transport stops asking for the rest of its run.

No request leaves the machine: ``.invalid`` lookups fail in-process (``offline_dns``), refused
connections go to a free port of 127.0.0.1, and TLS is tried against a plain-HTTP local server.
"""

from __future__ import annotations

import socket
import ssl
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from crowdsift.core.errors import SourceUnreachableError, TransportError
from crowdsift.http.retry import RetryBudget, connect_failure, is_retryable
from crowdsift.http.transport import HttpTransport
from tests.support.net import free_port
from tests.support.offline_dns import UNRESOLVABLE, unresolvable_hosts

SEARCH = "/api/posts/search"


def transport_for(base_url: str, fake_time, *, source: str = "arctic-shift", retries: int = 4):
    client = httpx.Client(base_url=base_url, timeout=5.0)
    return HttpTransport(
        client, source=source, max_retries=retries, sleep=fake_time.sleep, budget=RetryBudget(50)
    )


def _connect_error(cause: BaseException) -> httpx.ConnectError:
    error = httpx.ConnectError(str(cause))
    error.__cause__ = cause
    return error


def test_a_dns_failure_is_classified_and_not_retryable_but_refused_is():
    dns = _connect_error(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    again = _connect_error(socket.gaierror(socket.EAI_AGAIN, "Temporary failure"))
    refused = _connect_error(ConnectionRefusedError(111, "Connection refused"))
    tls = _connect_error(ssl.SSLCertVerificationError("certificate verify failed"))
    assert [connect_failure(e).cause for e in (dns, again, refused, tls)] == [  # type: ignore[union-attr]
        "dns", "dns", "refused", "tls",
    ]  # fmt: skip
    assert not is_retryable(dns) and not is_retryable(again)
    assert is_retryable(refused) and is_retryable(tls)
    assert connect_failure(httpx.ReadTimeout("slow")) is None  # reached, answered slowly
    assert connect_failure(httpx.ConnectTimeout("no SYN-ACK")).cause == "timeout"  # type: ignore[union-attr]


def test_a_name_that_does_not_resolve_fails_at_once_naming_source_host_and_cause(fake_time):
    transport = transport_for(f"http://{UNRESOLVABLE}", fake_time)
    with unresolvable_hosts() as lookups, pytest.raises(SourceUnreachableError) as caught:
        transport.get_json(SEARCH, {"query": "airflow"})
    error = caught.value
    assert str(error) == (
        f"arctic-shift unreachable: {UNRESOLVABLE} does not resolve (DNS); check the network "
        "or use --source archive"
    )
    assert (error.source, error.host, error.cause) == ("arctic-shift", UNRESOLVABLE, "dns")
    assert isinstance(error, TransportError) and error.status is None
    assert lookups[UNRESOLVABLE] == 1  # one request, no retry
    assert fake_time.sleeps == []
    assert (transport.stats.requests, transport.stats.retries) == (1, 0)
    assert transport.budget is not None and transport.budget.spent == 0


def test_once_unreachable_later_requests_fail_without_asking_again(fake_time):
    transport = transport_for(f"http://{UNRESOLVABLE}", fake_time)
    with unresolvable_hosts() as lookups:
        with pytest.raises(SourceUnreachableError):
            transport.get_json(SEARCH, {"query": "one"})
        with ThreadPoolExecutor(4) as pool:
            outcomes = list(pool.map(lambda q: _outcome(transport, q), ["a", "b", "c", "d"]))
    assert outcomes == ["does not resolve"] * 4
    assert lookups[UNRESOLVABLE] == 1
    assert transport.stats.requests == 1


def _outcome(transport: HttpTransport, query: str) -> str:
    try:
        transport.get_json(SEARCH, {"query": query})
    except SourceUnreachableError as exc:
        return "does not resolve" if "does not resolve (DNS)" in str(exc) else str(exc)
    return "answered"


def test_a_refused_connection_gets_the_retry_policy_then_is_unreachable(fake_time):
    port = free_port()  # bound and released: nothing listens there
    transport = transport_for(f"http://127.0.0.1:{port}", fake_time, retries=2)
    with pytest.raises(SourceUnreachableError) as caught:
        transport.get_json(SEARCH, {"query": "airflow"})
    assert caught.value.cause == "refused"
    assert str(caught.value) == (
        f"arctic-shift unreachable: 127.0.0.1:{port} refused the connection (3 attempts); "
        "check the network or use --source archive"
    )
    assert (transport.stats.requests, transport.stats.retries) == (3, 2)
    assert len(fake_time.sleeps) == 2  # the normal backoff, no more
    with pytest.raises(SourceUnreachableError):
        transport.get_json(SEARCH, {"query": "again"})
    assert transport.stats.requests == 3  # not asked again


def test_a_failed_tls_handshake_is_unreachable_after_the_policy(fake_time, reddit_server):
    https = reddit_server.base_url.replace("http://", "https://")  # it speaks plain HTTP
    transport = transport_for(https, fake_time, source="youtube", retries=1)
    with pytest.raises(SourceUnreachableError) as caught:
        transport.get_json("/youtube/v3/search", {"q": "x"})
    assert caught.value.cause == "tls"
    message = str(caught.value)
    assert message.startswith("youtube unreachable: the TLS handshake with 127.0.0.1:")
    assert message.endswith("(2 attempts); check the network and this source's base URL setting")
    assert transport.stats.requests == 2


def test_a_read_timeout_is_still_an_ordinary_transport_error(fake_time):
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("the server is slow", request=request)

    client = httpx.Client(base_url="http://127.0.0.1:9", transport=httpx.MockTransport(slow))
    transport = HttpTransport(client, source="arctic-shift", max_retries=1, sleep=fake_time.sleep)
    with pytest.raises(TransportError) as caught:
        transport.get_json(SEARCH)
    assert not isinstance(caught.value, SourceUnreachableError)
    assert transport.stats.requests == 2  # retried as before
