"""The web page at ``/`` and its static files (no CDN: everything is served from here).

The page and its scripts hold no data, so they need no API key; the page asks for the key when
the API answers 401 and sends it as a bearer token.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def static_dir() -> str:
    return str(resources.files("crowdsift.service.api") / "static")


@router.get("/", response_class=HTMLResponse)
def index() -> HTMLResponse:
    page = (resources.files("crowdsift.service.api") / "static" / "index.html").read_text("utf-8")
    return HTMLResponse(page, headers=_SECURITY_HEADERS)
