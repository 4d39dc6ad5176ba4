"""Serving the dashboard (``claude-memory web``): bind the loopback port, start (or attach to) the memory service,
serve until interrupted. The socket is bound here, before uvicorn starts, so a port in use is one sentence and
``--port 0`` can pick a free port and say which."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import uvicorn

from claude_memory.client.transport import StartingTransport
from claude_memory.service.operations import registry
from claude_memory.web.app import CALL_TIMEOUT, create_app
from claude_memory.web.auth import Guard

log = logging.getLogger("claude_memory.web")

HOST: Final = "127.0.0.1"  # loopback only, always: the dashboard shows everything the memory holds
DEFAULT_PORT: Final = 37777


class PortUnavailable(Exception):
    """The port cannot be bound (the message says why, in one sentence)."""


@dataclass(frozen=True, slots=True)
class WebSettings:
    data_dir: Path
    port: int = DEFAULT_PORT
    start_service: bool = True
    verbose: bool = False  # uvicorn's access log on stderr (a sign-in code in it is spent by then)


def ask_running(port: int, token: str) -> str | None:
    """A new sign-in address from the dashboard already on ``port`` (None if what answers there is not ours)."""
    request = urllib.request.Request(
        f"http://{HOST}:{port}/signin", method="POST", headers={"Authorization": f"Bearer {token}"}
    )
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy: it carries the token
    try:
        with direct.open(request, timeout=5) as answer:
            return str(json.loads(answer.read())["url"])
    except (OSError, ValueError, KeyError):
        return None


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: without it a response's headers and body, written apart, wait out the
    # client's delayed ACK (40 ms a request)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortUnavailable(f"Port {port} is in use on {HOST}; pick another with --port.") from None
        raise PortUnavailable(f"Cannot listen on {HOST}:{port}: {exc.strerror or exc}.") from None
    sock.listen(128)
    return sock


class WebServer:
    def __init__(self, settings: WebSettings, token: str) -> None:
        """``token``: the data directory's (:func:`claude_memory.web.auth.load_token`)."""
        self.settings = settings
        self.sock = bind(settings.port)
        self.port = int(self.sock.getsockname()[1])
        self.guard = Guard(token, self.port)
        self.transport = StartingTransport(settings.data_dir, start=settings.start_service, timeout=CALL_TIMEOUT)
        app = create_app(self.guard, self.transport, registry())
        config = uvicorn.Config(
            app,
            log_level="info" if settings.verbose else "warning",
            access_log=settings.verbose,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)

    def sign_in_url(self) -> str:
        """An address that signs a browser in, once (:meth:`Guard.new_code`)."""
        return f"http://{HOST}:{self.port}/login?code={self.guard.new_code()}"

    def warm(self) -> None:
        """Start the memory service now (in the background), so the first page does not wait for it."""

        def ping() -> None:
            try:
                self.transport.call("ping")
            except Exception as exc:  # said once here; every page says it again when it asks
                log.warning("%s", exc)

        threading.Thread(target=ping, name="web-warm", daemon=True).start()

    def serve(self) -> None:
        """Until interrupted (Ctrl-C or SIGTERM: uvicorn's handlers)."""
        asyncio.run(self.server.serve(sockets=[self.sock]))
