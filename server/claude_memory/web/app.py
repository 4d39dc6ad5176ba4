"""The dashboard's web application (Starlette): the pages, the HTTP API over the engine contract
(:mod:`claude_memory.web.api`), its OpenAPI schema and the live stream (:mod:`claude_memory.web.live`), all
behind the guard of :mod:`claude_memory.web.auth`.

It never opens the store: every answer is one ``call`` on a transport to the memory service (started on
demand), made in a worker thread so a slow answer holds up nothing else. The pages are static files (HTML,
one script module, one style sheet: no build step, nothing fetched from elsewhere); the index page carries
the CSRF token in a meta tag.
"""

from __future__ import annotations

import contextlib
import json
import logging
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from claude_memory import wire
from claude_memory.service.contract import Registry
from claude_memory.web import api
from claude_memory.web.auth import Guard, Refusal
from claude_memory.web.live import Hub
from claude_memory.web.openapi import schema

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("claude_memory.web")

STATIC: Final = resources.files("claude_memory.web") / "static"
MAX_BODY: Final = 1 << 20  # bytes of one API request body
CALL_TIMEOUT: Final = 120.0  # one request (a forget rewrites the store file)

HEADERS: Final = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
     b"frame-ancestors 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]  # fmt: skip


class Caller(Protocol):
    def call(self, method: str, params: dict[str, Any] | None = None, *, retry: bool = True) -> Any: ...


class Guarded:
    """ASGI middleware: every HTTP request passes :meth:`Guard.check` first; every response gets the security
    headers (and ``no-store``: nothing of the memory stays in a browser cache)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.guard.check(scope["method"], scope["path"], headers)

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS, (b"cache-control", b"no-store")]
            await send(message)

        if refusal is not None:
            await refused(refusal, scope["path"])(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


def refused(refusal: Refusal, path: str) -> Response:
    """A refusal or failure as its path's kind of answer: the API's JSON error, or a one-line page."""
    if path.startswith(api.PREFIX):
        return JSONResponse(api.error_body(refusal.code, refusal.message), status_code=refusal.status)
    page = f"<!doctype html><title>claude-memory</title><p>{refusal.message}</p>"
    return HTMLResponse(page, status_code=refusal.status)


def create_app(guard: Guard, transport: Caller, ops: Registry) -> Starlette:
    hub = Hub(partial(_call, transport))
    published = {op.name: op for op in api.published(ops)}
    openapi = schema(ops)
    index = (STATIC / "index.html").read_text(encoding="utf-8").replace("{{csrf}}", guard.csrf)

    async def home(request: Request) -> Response:
        return HTMLResponse(index)

    async def login(request: Request) -> Response:
        if not guard.login(request.query_params.get("code", "")):
            message = "This sign-in address was used already or is too old; `claude-memory web --open` gives a new one."
            return refused(Refusal(401, "unauthorized", message), "/")
        answer = RedirectResponse("/", status_code=303)  # the code leaves the address bar (it is spent anyway)
        answer.set_cookie(guard.cookie, guard.session, httponly=True, samesite="strict", path="/")
        return answer

    async def signin(request: Request) -> Response:
        """A new sign-in address, for a holder of the token (``claude-memory web --open`` while one runs)."""
        if request.headers.get("authorization") is None:
            return JSONResponse(api.error_body("unauthorized", "Only the token may ask for a sign-in address."), 403)
        return JSONResponse({"url": f"{request.base_url}login?code={guard.new_code()}"})

    async def operation(request: Request) -> Response:
        op = published.get(request.path_params["name"])
        if op is None:
            return JSONResponse(api.error_body(wire.NOT_FOUND, "No such API operation."), status_code=404)
        if request.method not in api.methods(op):
            message = f"{op.name} changes the store: send it as POST with a JSON body."
            if not op.writes:
                message = f"{op.name} answers GET (parameters in the query) or POST (a JSON body)."
            return JSONResponse(api.error_body(wire.BAD_REQUEST, message), status_code=405)
        try:
            raw = (
                await _body(request)
                if request.method == "POST"
                else api.query_params(op.params, request.query_params.multi_items())
            )
            result = await _call(transport, op.name, api.validated(op, raw), retry=not op.writes)
        except wire.OpError as exc:
            return JSONResponse(api.error_body(exc.code, str(exc)), status_code=api.status_of(exc))
        except Exception:
            log.exception("The dashboard failed to answer %s.", op.name)
            message = f"The dashboard failed to answer {op.name}; its terminal has the details."
            return JSONResponse(api.error_body(wire.INTERNAL, message), status_code=500)
        return JSONResponse(result)

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(openapi)

    async def stream(request: Request) -> Response:
        async def messages() -> AsyncIterator[dict[str, str]]:
            queue = hub.subscribe()  # here, so that a page gone before the stream started leaves nothing behind
            try:
                while True:
                    kind, data = await queue.get()
                    yield {"event": kind, "data": json.dumps(data)}
            finally:
                hub.unsubscribe(queue)

        return EventSourceResponse(messages(), ping=15, send_timeout=30)

    routes = [
        Route("/", home),
        Route("/login", login),
        Route("/signin", signin, methods=["POST"]),
        Route(f"{api.PREFIX}/openapi.json", openapi_json),
        Route(f"{api.PREFIX}/stream", stream),
        Route(f"{api.PREFIX}/{{name}}", operation, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await hub.close()

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 500:
            log.error("The dashboard failed on %s.", request.url.path, exc_info=exc)
        message = {404: "Nothing is here.", 405: "This path does not take that method."}.get(
            status, "The dashboard failed; its terminal has the details."
        )
        code = {404: wire.NOT_FOUND, 405: wire.BAD_REQUEST}.get(status, wire.INTERNAL)
        return refused(Refusal(status, code, message), request.url.path)

    return Starlette(
        routes=routes,
        middleware=[Middleware(Guarded, guard=guard)],
        exception_handlers={HTTPException: http_error, Exception: http_error},
        lifespan=lifespan,
    )


async def _body(request: Request) -> Any:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise wire.OpError(wire.BAD_REQUEST, f"The request body is over {MAX_BODY >> 20} MB.")
    data = await request.body()
    if len(data) > MAX_BODY:
        raise wire.OpError(wire.BAD_REQUEST, f"The request body is over {MAX_BODY >> 20} MB.")
    if not data:
        return {}
    try:
        return json.loads(data)
    except ValueError:
        raise wire.OpError(wire.BAD_REQUEST, "The request body is not valid JSON.") from None


async def _call(transport: Caller, method: str, params: dict[str, Any], *, retry: bool = True) -> Any:
    return await anyio.to_thread.run_sync(partial(transport.call, method, params, retry=retry))
