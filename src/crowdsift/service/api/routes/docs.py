"""``/docs`` (Swagger UI) and ``/favicon.ico``, served by the app itself: no CDN.

FastAPI's own ``/docs`` loads Swagger UI from a CDN, so it is blank offline and on any network
that blocks the CDN. Here the page comes from FastAPI's ``get_swagger_ui_html`` pointed at the
Swagger UI files the ``fastapi-offline`` package ships (mounted at ``/docs-assets``), under the
web page's Content-Security-Policy: same origin only, and the page's one inline initialiser
allowed by its exact hash. The schema validator badge (an image from validator.swagger.io) is
off, so the page asks nothing of any other host.
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from crowdsift.service.api.routes.web import security_headers, static_dir

router = APIRouter(include_in_schema=False)

DOCS_ASSETS = "/docs-assets"
"""Where the Swagger UI files are mounted (``app.py``)."""

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def swagger_assets_dir() -> str:
    """The Swagger UI distribution (``swagger-ui-bundle.js``, ``swagger-ui.css``)."""
    return str(resources.files("fastapi_offline") / "static")


def inline_script_hashes(page: str) -> list[str]:
    """``sha256-…`` of every inline ``<script>`` of ``page``, as a CSP source lists them."""
    return [
        "sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
        for body in _INLINE_SCRIPT.findall(page)
    ]


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    root = str(request.scope.get("root_path", "")).rstrip("/")
    page = get_swagger_ui_html(
        openapi_url=f"{root}{request.app.openapi_url}",
        title=f"{request.app.title} — API docs",
        swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{root}/favicon.ico",
        swagger_ui_parameters={"validatorUrl": None},
    )
    html = bytes(page.body).decode("utf-8")
    return HTMLResponse(html, headers=security_headers(*inline_script_hashes(html)))


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    return FileResponse(
        f"{static_dir()}/favicon.ico",
        media_type="image/vnd.microsoft.icon",
        headers={"Cache-Control": "public, max-age=86400"},
    )
