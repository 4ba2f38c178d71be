"""Every failure becomes ``{"error": {"code", "message"}}`` with a status that fits it.

Validation errors list each bad field with what to fix; crowdsift's own errors keep their
one-line messages (they already say what to do); anything unexpected is a 500 whose body
names no internals (the log has the traceback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from crowdsift.core.errors import (
    AuthError,
    BrokerError,
    ConfigError,
    CrowdsiftError,
    PlanError,
    SourceError,
    StoreError,
    UnknownExpertError,
)
from crowdsift.core.log import get_logger, redact_text

log = get_logger(__name__)

MAX_BODY_BYTES = 64 * 1024
TOO_LARGE = f"request body over {MAX_BODY_BYTES:,} bytes; send less"

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
    status: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The error body; ``headers`` carry what the status needs (``Allow`` on a 405)."""
    body: dict[str, Any] = {"code": code, "message": redact_text(message)}
    if details is not None:
        body["details"] = details
    sent = dict(headers or {})
    if status == 401:
        sent["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": body}, status_code=status, headers=sent or None)


def validation_message(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """One readable sentence per bad field, and the details in a JSON-safe form."""
    parts, details = [], []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        what = str(err.get("msg", "invalid"))
        if err.get("type") == "json_invalid":  # loc is ("body", offset): say so in words
            reason = (err.get("ctx") or {}).get("error", "decode error")
            where, what = "body", f"not valid JSON ({reason} at character {where})"
        elif where == "body" and err.get("type") == "missing":
            what = "empty: send a JSON object"
        parts.append(f"{where}: {what}")
        details.append({"field": where, "message": what, "type": str(err.get("type", ""))})
    return "invalid request — " + "; ".join(parts), details


def _body_not_json(request: Request, errors: list[dict[str, Any]]) -> str | None:
    """The media type ("" for none) of a body FastAPI left unparsed because it was not sent as
    JSON (the model then sees bytes and says "valid dictionary"); None if that is not it."""
    if not any(tuple(err.get("loc", ()))[:1] == ("body",) for err in errors):
        return None
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return None
    return media


def _http_message(exc: HTTPException) -> str:
    """FastAPI's and Starlette's own details, reworded to say what to send instead."""
    if exc.status_code == 413:
        return TOO_LARGE
    if exc.status_code == 400 and exc.__cause__ is not None:  # FastAPI could not parse the body
        return (
            f"could not read the request body ({type(exc.__cause__).__name__}); send one "
            "UTF-8 JSON object with 'Content-Type: application/json'"
        )
    return str(exc.detail)


def _one_line(message: str) -> str:
    """The first line: database errors append the SQL and its parameters, which are the
    server's business, not the client's."""
    return message.strip().splitlines()[0] if message.strip() else message


def _status_for(exc: CrowdsiftError) -> tuple[int, str]:
    if isinstance(exc, UnknownExpertError):  # the request names what does not exist
        return 422, "validation_error"
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
        errors = list(exc.errors())
        media = _body_not_json(request, errors)
        if media is not None:
            return error_response(
                415,
                "unsupported_media_type",
                "the body must be JSON: send it with 'Content-Type: application/json' "
                f"(got {repr(media[:80]) if media else 'no Content-Type'})",
            )
        message, details = validation_message(errors)
        return error_response(422, "validation_error", message, details)

    @app.exception_handler(HTTPException)
    async def _http(_request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, _http_message(exc), headers=exc.headers)

    @app.exception_handler(CrowdsiftError)
    async def _ours(request: Request, exc: CrowdsiftError) -> JSONResponse:
        status, code = _status_for(exc)
        log.warning("api_error", path=request.url.path, status=status, error=str(exc))
        details = None
        if isinstance(exc, UnknownExpertError):  # shaped like the other invalid fields
            details = [{"field": "experts", "message": str(exc), "type": "unknown_expert"}]
        return error_response(status, code, _one_line(str(exc)), details)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("api_unhandled", path=request.url.path, error=repr(exc), exc_info=exc)
        return error_response(
            500, "internal_error", "the server hit an unexpected error; see its log for details"
        )
