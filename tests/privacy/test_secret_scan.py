"""No secret leaves the process: every command runs with dummy secrets, then everything is scanned.

Each command is a real subprocess at DEBUG log level, talking to the local protocol servers
(Reddit, the chat-completions endpoint, YouTube, Amazon) with the dummy credentials, and, where
tracing is on, exporting spans to a local OTLP sink. Then stdout, stderr, every file under the
data directory (SQLite databases, caches, saved results) and every exported span are searched for
each secret, raw, URL-encoded and inside a Basic credential. The servers must have SEEN the
secrets (so the secrets were really in use), or the scan would prove nothing.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.support.amazon_server import AmazonCreatorsServer, product
from tests.support.corpus import build_corpus
from tests.support.local_http import LocalHTTPServer, Reply
from tests.support.net import free_port, wait_for_http
from tests.support.openai_server import ChatCompletionsServer, refusal
from tests.support.reddit_server import RedditProtocolServer
from tests.support.youtube_server import YouTubeProtocolServer

REDDIT_ID = "scan-client-id"
SECRETS = {
    "REDDIT_CLIENT_SECRET": "rcs-SECRET-7f3a9c1e55",
    "CROWDSIFT_LLM_API_KEY": "sk-SECRET-9e1c3a5b7d",
    "CROWDSIFT_API_KEY": "api-SECRET-4c6e8a0b21",
    "YOUTUBE_API_KEY": "yt-SECRET-1a3c5e7f90",
    "AMAZON_CREDENTIAL_SECRET": "amz-SECRET-8b0d2f4a63",
}
AMAZON_ID = "scan-credential-id"
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def forms(secret: str) -> set[str]:
    """The ways a secret could be written out: raw, URL-encoded, in Basic credentials."""
    found = {secret, quote(secret, safe=""), quote(secret)}
    for user in (REDDIT_ID, AMAZON_ID):
        found.add(base64.b64encode(f"{user}:{secret}".encode()).decode())
    return found


def leaks(blob: bytes | str) -> list[str]:
    """Which secrets appear in ``blob``, in any of their forms."""
    data = blob.encode("utf-8", "replace") if isinstance(blob, str) else blob
    return sorted(
        name
        for name, secret in SECRETS.items()
        if any(form.encode() in data for form in forms(secret))
    )


class OtlpSink:
    """Accepts OTLP/HTTP trace exports and keeps their bodies."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._http = LocalHTTPServer(self, name="otlp-sink")

    def respond(self, _method: str, _target: str, _headers: dict[str, str], body: bytes) -> Reply:
        with self._lock:
            self.bodies.append(body)
        return Reply(200, b"", {"Content-Type": "application/x-protobuf"})

    def __enter__(self) -> OtlpSink:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def base_url(self) -> str:
        return self._http.base_url


@dataclass
class Scan:
    """What the commands printed, and where the servers saw the secrets."""

    outputs: dict[str, str] = field(default_factory=dict)
    home: Path = Path()
    traces: list[bytes] = field(default_factory=list)
    seen_by_servers: set[str] = field(default_factory=set)
    exit_codes: dict[str, int] = field(default_factory=dict)


def _clean_environment() -> dict[str, str]:
    prefixes = ("CROWDSIFT_", "REDDIT_", "YOUTUBE_", "AMAZON_", "OTEL_", "OPENAI_", "MODEL_")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def _run(name: str, args: list[str], env: dict[str, str], scan: Scan, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "crowdsift", "-vv", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    scan.outputs[name] = done.stdout + "\n" + done.stderr
    scan.exit_codes[name] = done.returncode
    return done.stdout


def _serve(env: dict[str, str], scan: Scan, tmp: Path) -> None:
    """The service: refused and accepted keys, one research job to the end, then SIGINT."""
    port = free_port()
    log = tmp / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "crowdsift", "-vv", "serve", "--port", str(port)],
            env={**env, "CROWDSIFT_ENGINE": "local", "CROWDSIFT_SOURCE": "archive"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for_http(f"{base}/healthz", timeout=120)
            key = SECRETS["CROWDSIFT_API_KEY"]
            with httpx.Client(base_url=base, timeout=30) as client:
                assert client.get("/api/experts").status_code == 401
                wrong = {"Authorization": "Bearer not-the-key"}
                assert client.get("/api/experts", headers=wrong).status_code == 401
                auth = {"Authorization": f"Bearer {key}"}
                created = client.post(
                    "/api/research", json={"question": QUESTION, "engine": "local"}, headers=auth
                )
                assert created.status_code == 202, created.text
                job = created.json()["id"]
                deadline = time.monotonic() + 240
                status = "queued"
                while status in ("queued", "running") and time.monotonic() < deadline:
                    time.sleep(0.5)
                    status = client.get(f"/api/research/{job}", headers=auth).json()["status"]
                assert status == "done", status
                scan.outputs["serve: job"] = client.get(f"/api/research/{job}", headers=auth).text
                scan.outputs["serve: metrics"] = client.get("/metrics", headers=auth).text
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    scan.outputs["serve"] = log.read_text()


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scan]:
    tmp = tmp_path_factory.mktemp("secret-scan")
    home = tmp / "home"
    result = Scan(home=home)
    authorized: list[int] = []

    def answered(_request: object) -> object:
        """Reached only with the right key: every call is then refused, so phases degrade."""
        authorized.append(1)
        return refusal()

    with (
        RedditProtocolServer(client_id=REDDIT_ID, client_secret=SECRETS["REDDIT_CLIENT_SECRET"])
        as reddit,
        ChatCompletionsServer(api_key=SECRETS["CROWDSIFT_LLM_API_KEY"], responder=answered) as llm,
        YouTubeProtocolServer(api_key=SECRETS["YOUTUBE_API_KEY"]) as youtube,
        AmazonCreatorsServer(
            credential_id=AMAZON_ID, credential_secret=SECRETS["AMAZON_CREDENTIAL_SECRET"]
        ) as amazon,
        OtlpSink() as sink,
    ):  # fmt: skip
        build_corpus(["gadgets"], ["plaud"], posts_per_query=6, comments_per_post=2).load_into(
            reddit
        )
        youtube.add_video(
            "plaudReview1", "Plaud Note review: worth it over a phone recording app?",
            description="Six months of meetings recorded with the Plaud Note.", channel="Desk",
            views=5400, likes=310, comments=[{"text": "Plaud transcripts help.", "likes": 3}],
        )  # fmt: skip
        amazon.add_products(
            [product("B0CFQ8Y4ZT", "Plaud Note AI voice recorder", features=["Records calls"])]
        )
        env = {
            **_clean_environment(),
            **SECRETS,
            "CROWDSIFT_HOME": str(home),
            "REDDIT_CLIENT_ID": REDDIT_ID,
            "REDDIT_USER_AGENT": "python:crowdsift-secret-scan:1.0 (by /u/crowdsift-tests)",
            "REDDIT_API_BASE_URL": reddit.base_url,
            "ARCTIC_SHIFT_BASE_URL": f"http://127.0.0.1:{free_port()}",  # refused: never the web
            "REDDIT_AUTH_URL": reddit.auth_url,
            "CROWDSIFT_LLM_BASE_URL": llm.base_url,
            "CROWDSIFT_LLM_MAX_RETRIES": "0",
            "YOUTUBE_API_BASE_URL": youtube.base_url,
            "AMAZON_CREDENTIAL_ID": AMAZON_ID,
            "AMAZON_PARTNER_TAG": "crowdsift-20",
            "AMAZON_API_BASE_URL": amazon.base_url,
            "AMAZON_AUTH_URL": amazon.auth_url,
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink.base_url,
        }
        plan = tmp / "plan.json"
        plan.write_text(json.dumps({"search_terms": ["plaud"], "subreddits": ["gadgets"]}))

        commands = {
            "fetch reddit-api": ["fetch", "--plan", str(plan), "--source", "reddit-api", "--json"],
            "ask openai (refusals)": ["ask", QUESTION, "--engine", "openai", "--source",
                                         "archive", "--json"],
            "ask youtube+amazon": ["ask", QUESTION, "--engine", "local", "--sources",
                                   "youtube,amazon", "--no-reddit", "--json"],
            "ask local": ["ask", QUESTION, "--engine", "local", "--source", "archive",
                          "--experts", "desk_gear_weekly"],
            "schema": ["schema"],
            "prices": ["prices", "show"],
            "experts list": ["experts", "list"],
            "doctor": ["doctor"],
            "doctor json": ["doctor", "--json"],
        }  # fmt: skip
        for name, args in commands.items():
            _run(name, args, env, result)
        _serve(env, result, tmp)

        # Each server checks the credential itself; an authorised answer means it was presented.
        accepted = {
            "REDDIT_CLIENT_SECRET": any(r.bearer and r.status == 200 for r in reddit.requests),
            "YOUTUBE_API_KEY": any(r.key_sent and r.status == 200 for r in youtube.requests),
            "AMAZON_CREDENTIAL_SECRET": any(r.bearer and r.status == 200 for r in amazon.requests),
            "CROWDSIFT_LLM_API_KEY": bool(authorized),
        }
        result.seen_by_servers = {name for name, ok in accepted.items() if ok}
        result.traces = list(sink.bodies)
    yield result


def test_the_secrets_were_really_in_use(scan: Scan) -> None:
    assert scan.seen_by_servers >= {
        "REDDIT_CLIENT_SECRET", "YOUTUBE_API_KEY", "CROWDSIFT_LLM_API_KEY",
        "AMAZON_CREDENTIAL_SECRET",
    }  # fmt: skip
    assert scan.exit_codes["fetch reddit-api"] == 0, scan.outputs["fetch reddit-api"][-2000:]
    assert scan.exit_codes["ask youtube+amazon"] == 0, scan.outputs["ask youtube+amazon"][-2000:]
    assert scan.exit_codes["ask local"] == 0, scan.outputs["ask local"][-2000:]
    assert "plaudReview1" in scan.outputs["ask youtube+amazon"]


@pytest.mark.parametrize(
    "command",
    [
        "fetch reddit-api", "ask openai (refusals)", "ask youtube+amazon", "ask local",
        "schema", "prices", "experts list", "serve", "serve: job", "serve: metrics",
    ],
)  # fmt: skip
def test_no_command_prints_a_secret(scan: Scan, command: str) -> None:
    assert leaks(scan.outputs[command]) == [], scan.outputs[command][-3000:]


def test_no_file_written_holds_a_secret(scan: Scan) -> None:
    files = [p for p in scan.home.rglob("*") if p.is_file()]
    assert files, "the commands wrote nothing: the scan would prove nothing"
    assert any(p.suffix == ".sqlite" for p in files)
    found = {str(p.relative_to(scan.home)): leaks(p.read_bytes()) for p in files}
    assert {path: names for path, names in found.items() if names} == {}


def test_no_exported_span_holds_a_secret(scan: Scan) -> None:
    assert scan.traces, "no spans reached the OTLP sink: tracing was not exercised"
    assert [leaks(body) for body in scan.traces if leaks(body)] == []
