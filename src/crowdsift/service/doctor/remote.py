"""Doctor checks that ask a server: Reddit's token endpoint, Arctic Shift, the LLM endpoint.

Each makes the cheapest request that proves the thing works (a token grant, a one-post lookup,
a one-token completion) through ``DoctorContext.client``, never retries (a retry would only
make a dead host slower to report), and turns every failure into a ``Check`` that says what
happened and what to do. Keys never reach a message: only ``mask_secret`` tails.
"""

from __future__ import annotations

import time

import httpx

from crowdsift.core.config import Settings
from crowdsift.core.errors import AuthError, UsageError
from crowdsift.http.auth import RedditOAuth
from crowdsift.http.identity import crowdsift_user_agent
from crowdsift.service.doctor.context import DoctorContext
from crowdsift.service.doctor.models import Check, mask_secret
from crowdsift.sources.reddit.probe import probe_arctic_shift
from crowdsift.sources.reddit.reddit_api import reddit_user_agent

REDDIT_KEYS = "REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET"
_KEYLESS = "unset them to let auto use the keyless sources (Arctic Shift, your archive)"
_ARCHIVE_HINT = (
    "`crowdsift archive import RS_….zst RC_….zst` gives auto real data that needs no network"
)


def check_reddit(ctx: DoctorContext) -> Check:
    """Reddit API credentials: one token request (app-only, or password grant for a script
    app); skipped when no credentials are set (auto then starts at Arctic Shift)."""
    settings = ctx.settings
    if not settings.reddit_client_id or settings.reddit_client_secret is None:
        return Check(
            name="reddit-api",
            status="skipped",
            detail=f"no {REDDIT_KEYS}: auto starts at Arctic Shift",
            fix=f"optional: set {REDDIT_KEYS} (an app from https://www.reddit.com/prefs/apps) "
            "to search Reddit's own API",
        )
    try:
        agent = reddit_user_agent(settings)
    except UsageError as exc:
        return Check(
            name="reddit-api",
            status="fail",
            detail=str(exc).split(". ", 1)[0],
            fix="set REDDIT_USERNAME (your Reddit username) or REDDIT_USER_AGENT",
        )
    oauth = _reddit_oauth(settings, agent)
    who = f"client id {mask_secret(settings.reddit_client_id)}, {oauth.grant_type} grant"
    flow = oauth.auth_flow(httpx.Request("GET", f"{settings.reddit_api_base_url}/api/v1/me"))
    try:
        with ctx.client() as client:
            response = client.send(next(flow))
            try:
                flow.send(response)  # yields the API request once a token was accepted
            except StopIteration:
                return Check(
                    name="reddit-api",
                    status="fail",
                    detail=f"Reddit's token endpoint {settings.reddit_auth_url} answered HTTP "
                    f"{response.status_code} ({who}): busy or rate limited",
                    fix="try again in a minute; meanwhile auto uses the next source",
                )
    except AuthError as exc:
        return Check(
            name="reddit-api",
            status="fail",
            detail=str(exc),
            fix=f"check {REDDIT_KEYS} (and REDDIT_USERNAME/REDDIT_PASSWORD for a script app), "
            f"or {_KEYLESS}",
        )
    except httpx.HTTPError as exc:
        return Check(
            name="reddit-api",
            status="fail",
            detail=f"cannot reach {settings.reddit_auth_url}: {exc or type(exc).__name__}",
            fix=f"check the network and REDDIT_AUTH_URL, or {_KEYLESS}",
        )
    finally:
        flow.close()
    return Check(
        name="reddit-api",
        status="ok",
        detail=f"token granted by {settings.reddit_auth_url} ({who})",
    )


def _reddit_oauth(settings: Settings, agent: str) -> RedditOAuth:
    """The Reddit OAuth of the configured credentials (checked to be set)."""
    assert settings.reddit_client_id and settings.reddit_client_secret is not None
    password = settings.reddit_password
    return RedditOAuth(
        auth_url=settings.reddit_auth_url,
        client_id=settings.reddit_client_id,
        client_secret=settings.reddit_client_secret.get_secret_value(),
        user_agent=agent,
        username=settings.reddit_username,
        password=password.get_secret_value() if password is not None else None,
    )


def check_arctic_shift(ctx: DoctorContext) -> Check:
    """Arctic Shift answers: the source's own probe (one post looked up by id, no retry)."""
    base = ctx.settings.arctic_shift_base_url
    started = time.perf_counter()
    with ctx.client(base, {"User-Agent": crowdsift_user_agent()}) as client:
        status = probe_arctic_shift(ctx.settings, http_client=client)
    if status.status == "ok":
        ms = (time.perf_counter() - started) * 1000
        return Check(name="arctic-shift", status="ok", detail=f"{base} answered in {ms:.0f} ms")
    fix = (
        "Arctic Shift is throttling: wait a minute before the next run"
        if status.status == "rate_limited"
        else "check ARCTIC_SHIFT_BASE_URL and the network (Arctic Shift itself has outages); "
        f"meanwhile {_ARCHIVE_HINT}"
    )
    return Check(name="arctic-shift", status="fail", detail=status.detail or base, fix=fix)


def llm_configured(ctx: DoctorContext) -> bool:
    """The openai engine is in play: a key is set (it is then the default) or it was chosen."""
    return ctx.settings.llm_api_key is not None or ctx.settings.engine == "openai"


def check_llm(ctx: DoctorContext) -> Check:
    """The LLM endpoint: a one-token chat completion with the plan phase's model; skipped
    when the openai engine is not configured (the local engine needs no endpoint)."""
    settings = ctx.settings
    if not llm_configured(ctx):
        return Check(
            name="llm",
            status="skipped",
            detail="no CROWDSIFT_LLM_API_KEY: the local engine answers (no network, no LLM)",
            fix="optional: set CROWDSIFT_LLM_API_KEY (and CROWDSIFT_LLM_BASE_URL for another "
            "OpenAI-compatible endpoint) for LLM answers",
        )
    key = settings.llm_api_key.get_secret_value().strip() if settings.llm_api_key else ""
    model = settings.model_for("plan")
    base = settings.llm_base_url.rstrip("/")
    where = f"model {model} at {base} (key {mask_secret(key)})"
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Reply with the word OK."}],
        "max_tokens": 1,
        "temperature": 0,
    }
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    try:
        with ctx.client(base + "/", headers) as client:
            response = client.post("chat/completions", json=body)
    except httpx.HTTPError as exc:
        return Check(
            name="llm",
            status="fail",
            detail=f"cannot reach {base}: {exc or type(exc).__name__}",
            fix="check CROWDSIFT_LLM_BASE_URL and the network, or unset CROWDSIFT_LLM_API_KEY "
            "to use the local engine",
        )
    ms = (time.perf_counter() - started) * 1000
    if response.status_code == 200 and _has_choice(response):
        return Check(name="llm", status="ok", detail=f"{where} answered one token in {ms:.0f} ms")
    return Check(
        name="llm",
        status="fail",
        detail=f"{where} answered HTTP {response.status_code}: {_error_text(response)}",
        fix=_llm_fix(response.status_code),
    )


def _has_choice(response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("choices"))


def _error_text(response: httpx.Response) -> str:
    """The endpoint's own error message (OpenAI's ``error.message``), cut short."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or "no body"
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message or body)[:200]


def _llm_fix(status: int) -> str:
    if status in (401, 403):
        return "check CROWDSIFT_LLM_API_KEY (the endpoint refused it)"
    if status == 404:
        return "check CROWDSIFT_LLM_BASE_URL (it should end in /v1) and the MODEL_* names"
    if status == 429:
        return "the endpoint is rate limiting or out of quota: check your plan, or wait"
    return (
        "check CROWDSIFT_LLM_BASE_URL and the endpoint's status; unset CROWDSIFT_LLM_API_KEY "
        "to use the local engine meanwhile"
    )
