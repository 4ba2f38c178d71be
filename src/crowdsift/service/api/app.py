"""``create_app(settings)``: the FastAPI application behind ``crowdsift serve``.

Routes live in ``api/routes/<resource>.py`` and take everything through ``api/deps.py``; the
lifespan builds the long-lived pieces (job service with its reaper, feed retriever) once and
closes them on shutdown. Pass ``state`` to run the app over pieces of your own (tests).
"""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from crowdsift import __version__
from crowdsift.core import language
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.service.api import errors
from crowdsift.service.api.deps import (
    MISSING_KEY,
    UNAUTHORIZED,
    ServiceState,
    bearer_token,
    key_matches,
    require_api_key,
)
from crowdsift.service.api.routes import (
    docs,
    experts,
    feed,
    fetch,
    health,
    metrics,
    reports,
    research,
    web,
)

MAX_BODY_BYTES = errors.MAX_BODY_BYTES
#: Paths whose routes need the API key (the routers included with ``require_api_key``).
GUARDED_PREFIXES = ("/api", "/metrics")

_DESCRIPTION = """\
Answers a question with what real communities said about it — Reddit threads and expert
channel archives — filtered for trust and relevance, every claim linked to its source.

Start a research job with `POST /api/research`, then poll `GET /api/research/{id}` or stream
`GET /api/research/{id}/events`. With `CROWDSIFT_API_KEY` set on the server, send
`Authorization: Bearer <key>` on every route but `/healthz`.
"""

log = get_logger(__name__)


def default_state(settings: Settings) -> ServiceState:
    """The real pieces, from settings."""
    from crowdsift.service import facade as service
    from crowdsift.service.jobs.factory import build_job_service
    from crowdsift.service.metrics import MetricsStore

    jobs = build_job_service(settings)
    counters = MetricsStore(jobs.store.engine)
    return ServiceState(
        settings=settings,
        jobs=jobs,
        feed=service.FeedService(settings),
        fetch=fetch.recording_fetch(settings, counters),
        experts=lambda: service.list_experts(settings),
        metrics=counters,
    )


def create_app(
    settings: Settings | None = None,
    *,
    state: ServiceState | None = None,
    reap_every: float | None = None,
) -> FastAPI:
    """The app; its job service starts (reaper, resumed jobs) when the app starts serving."""
    settings = settings or (state.settings if state else get_settings())
    register_secrets(settings.secret_values())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        current = state or default_state(settings)
        app.state.crowdsift = current
        seconds = await asyncio.to_thread(language.warm_up)  # not inside the first job
        log.info("language_models_loaded", seconds=round(seconds, 2))
        current.jobs.start(reap_every=reap_every)
        try:
            yield
        finally:
            current.jobs.close()
            current.feed.close()

    app = FastAPI(
        title="crowdsift",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # FastAPI's loads Swagger UI from a CDN; routes/docs.py serves it here
        redoc_url=None,  # ReDoc too, and needs inline styles the page's CSP refuses
    )
    errors.install(app)
    _key_before_body(app, settings)
    _limit_body(app)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    guarded = [Depends(require_api_key)]
    routers = [m.router for m in (research, reports, fetch, feed, experts, metrics)]
    for router in [*routers, reports.jobs_router]:
        # The router limit also stops bodies sent without Content-Length (chunked).
        app.include_router(
            router,
            dependencies=guarded,
            responses=UNAUTHORIZED,
            max_body_size=MAX_BODY_BYTES,
        )
    app.include_router(health.router)
    app.include_router(web.router)
    app.include_router(docs.router)
    # Module scripts need a JavaScript type; don't depend on the machine's /etc/mime.types.
    mimetypes.add_type("text/javascript", ".js")
    app.mount("/static", StaticFiles(directory=web.static_dir()), name="static")
    app.mount(docs.DOCS_ASSETS, StaticFiles(directory=docs.swagger_assets_dir()), name="docs")
    return app


def _limit_body(app: FastAPI) -> None:
    """Refuse bodies over ``MAX_BODY_BYTES`` before reading them (a question is < 2 kB), and
    tell browsers never to guess a content type."""

    @app.middleware("http")
    async def limit(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        length = request.headers.get("content-length")
        if length is not None and not length.isdigit():
            return errors.error_response(400, "bad_request", "Content-Length is not a number")
        if length is not None and int(length) > MAX_BODY_BYTES:
            return errors.error_response(413, "too_large", errors.TOO_LARGE)
        response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response


def _key_before_body(app: FastAPI, settings: Settings) -> None:
    """Check the API key before FastAPI reads the body: without the key, a malformed body is a
    401 like any other request, not a 422 describing the API to a stranger. The routers'
    ``require_api_key`` checks again and puts the scheme in the OpenAPI document."""
    if settings.api_key is None:
        return

    @app.middleware("http")
    async def key_first(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        token = bearer_token(request.headers.get("authorization"))
        if request.url.path.startswith(GUARDED_PREFIXES) and not key_matches(settings, token):
            return errors.error_response(401, "unauthorized", MISSING_KEY)
        return await call_next(request)
