"""``crowdsift serve`` as users run it: a real uvicorn process on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.net import free_port, wait_for_http


def test_serve_answers_on_loopback_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "CROWDSIFT_HOME": str(tmp_path / "home"),
        "CROWDSIFT_API_KEY": "serve-test-key-41",
        "HF_HUB_OFFLINE": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "crowdsift", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        health = wait_for_http(f"{base}/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert httpx.get(f"{base}/api/experts").status_code == 401
        auth = {"Authorization": "Bearer serve-test-key-41"}
        plan = {"search_terms": ["impact driver"], "subreddits": ["homeimprovement"]}
        fetched = httpx.post(f"{base}/api/fetch", json=plan, headers=auth, timeout=30)
        assert fetched.status_code == 200 and fetched.json()["posts"]
        page = httpx.get(f"{base}/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "default-src 'self'" in page.headers["content-security-policy"]
        script = httpx.get(f"{base}/static/app.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert script.headers["x-content-type-options"] == "nosniff"
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the signal it caught (exit -15).
    assert process.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
    assert f"serving http://127.0.0.1:{port}/" in err
    assert "serve-test-key-41" not in out + err


def test_serve_on_a_taken_port_fails_with_a_message(tmp_path: Path) -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "crowdsift", "serve", "--port", str(port)],
            env={**os.environ, "CROWDSIFT_HOME": str(tmp_path / "home")},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert str(port) in result.stderr
