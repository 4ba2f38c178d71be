"""Every failure becomes ``{"error": {"code", "message"}}`` with a status that fits it.

Validation errors list each bad field with what to fix; crowdsift's own errors keep their
one-line messages (they already say what to do); anything unexpected is a 500 whose body
names no internals (the log has the traceback).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from crowdsift.errors import (
    AuthError,
    BrokerError,
    ConfigError,
    CrowdsiftError,
    PlanError,
    SourceError,
    StoreError,
)
from crowdsift.log import get_logger, redact_text

log = get_logger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
}


def error_response(
    status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": redact_text(message)}
    if details is not None:
        body["details"] = details
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def validation_message(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """One readable sentence per bad field, and the details in a JSON-safe form."""
    parts, details = [], []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        what = str(err.get("msg", "invalid"))
        parts.append(f"{where}: {what}")
        details.append({"field": where, "message": what, "type": str(err.get("type", ""))})
    return "invalid request — " + "; ".join(parts), details


def _status_for(exc: CrowdsiftError) -> tuple[int, str]:
    if isinstance(exc, PlanError):
        return 400, "bad_request"
    if isinstance(exc, AuthError | ConfigError):
        return 503, "not_configured"
    if isinstance(exc, SourceError):
        return 502, "upstream_error"
    if isinstance(exc, StoreError):
        return 503, "store_unavailable"
    if isinstance(exc, BrokerError):
        return 503, "broker_unavailable"
    if type(exc).__name__ == "EmptyIndexError":
        return 409, "empty_index"
    return 500, "internal_error"


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, details = validation_message(list(exc.errors()))
        return error_response(422, "validation_error", message, details)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(CrowdsiftError)
    async def _ours(request: Request, exc: CrowdsiftError) -> JSONResponse:
        status, code = _status_for(exc)
        log.warning("api_error", path=request.url.path, status=status, error=str(exc))
        return error_response(status, code, str(exc))

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("api_unhandled", path=request.url.path, error=repr(exc), exc_info=exc)
        return error_response(
            500, "internal_error", "the server hit an unexpected error; see its log for details"
        )
