"""The web page at ``/`` and its static files (no CDN: everything is served from here).

The page and its scripts hold no data, so they need no API key; the page asks for the key when
the API answers 401 and sends it as a bearer token.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)


def security_headers(*script_hashes: str) -> dict[str, str]:
    """The headers of every page we serve: same-origin only, no inline script except the
    exact scripts whose ``sha256-…`` hashes are given (the docs page's one initialiser)."""
    scripts = " ".join(["'self'", *(f"'{digest}'" for digest in script_hashes)])
    return {
        "Content-Security-Policy": (
            f"default-src 'self'; script-src {scripts}; style-src 'self'; "
            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


_SECURITY_HEADERS = security_headers()


def static_dir() -> str:
    return str(resources.files("crowdsift.service.api") / "static")


@router.get("/", response_class=HTMLResponse)
def index() -> HTMLResponse:
    page = (resources.files("crowdsift.service.api") / "static" / "index.html").read_text("utf-8")
    return HTMLResponse(page, headers=_SECURITY_HEADERS)
