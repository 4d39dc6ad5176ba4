"""CLI commands for the memory service: ``serve`` runs it, ``stop`` ends it."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from claude_memory.cli.common import EXIT_BUSY, EXIT_FAILURE
from claude_memory.client.connection import ServiceClient, ServiceUnavailable, start_service
from claude_memory.config import claude_home as resolve_claude_home
from claude_memory.core.paths import RuntimePaths, private_umask, secure_data_dir
from claude_memory.service.lock import LockHeld, holder_pid
from claude_memory.store.db import StoreError

LOG_BYTES = 1_000_000
LOG_BACKUPS = 3


def _setup_logging(paths: RuntimePaths, *, quiet: bool) -> None:
    paths.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    logger = logging.getLogger("claude_memory")
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    handler = logging.handlers.RotatingFileHandler(
        paths.log_dir / "service.log", maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [%(process)d] %(message)s"))
    logger.addHandler(handler)
    if not quiet:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(stream)


def serve(
    ctx: typer.Context,
    claude_home: Annotated[
        Path | None,
        typer.Option(
            "--claude-home", help="Claude Code's directory to watch.", show_default="$CLAUDE_CONFIG_DIR or ~/.claude"
        ),
    ] = None,
    watch: Annotated[bool, typer.Option("--watch/--no-watch", help="Capture new transcript lines live.")] = True,
    detach: Annotated[
        bool, typer.Option("--detach", help="Start in the background and return once it answers.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Log to the log file only, not to stderr.")] = False,
) -> None:
    """Run the memory service: the one process that owns the store, answers every face over a user-only
    socket, captures transcripts live and applies hook captures. Clients start it on demand."""
    data_dir: Path = ctx.obj.data_dir
    paths = RuntimePaths(data_dir)
    if detach:
        client = ServiceClient(data_dir, timeout=5)
        try:
            info = client.ping()
            typer.echo(f"A memory service is already running for {data_dir} (pid {info.get('pid')}).")
            return
        except ServiceUnavailable:
            pass
        args = ("--claude-home", str(claude_home)) if claude_home is not None else ()
        start_service(data_dir, args=(*args, *(() if watch else ("--no-watch",))))
        if not client.ensure_running(wait=60):
            typer.echo(f"Error: the memory service did not start; see {paths.log_dir / 'service.log'}.", err=True)
            raise typer.Exit(EXIT_FAILURE)
        typer.echo(f"Memory service started for {data_dir} (pid {client.ping().get('pid')}).")
        return
    from claude_memory.service.server import MemoryService, ServiceOptions  # heavy: only when serving

    private_umask()
    try:
        secure_data_dir(data_dir)
    except PermissionError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(EXIT_FAILURE) from None
    _setup_logging(paths, quiet=quiet)
    service = MemoryService(ServiceOptions(data_dir, resolve_claude_home(claude_home), watch=watch))
    service.install_signal_handlers()
    try:
        service.run()
    except LockHeld as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(EXIT_BUSY) from None
    except StoreError as exc:
        logging.getLogger("claude_memory.service").error("%s", exc)
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(EXIT_FAILURE) from None


def stop(
    ctx: typer.Context,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait before SIGKILL.")] = 30.0,
) -> None:
    """Stop the memory service of this data directory (it finishes the task in hand first)."""
    data_dir: Path = ctx.obj.data_dir
    paths = RuntimePaths(data_dir)
    pid = holder_pid(paths.lock)
    try:
        ServiceClient(data_dir, timeout=5).call("shutdown")
    except ServiceUnavailable:
        if pid is None:
            typer.echo(f"No memory service is running for {data_dir}.")
            return
        os.kill(pid, signal.SIGTERM)  # running but not answering: ask the process itself
    deadline = time.monotonic() + timeout
    while holder_pid(paths.lock) is not None:
        if time.monotonic() > deadline:
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                gone = time.monotonic() + 10
                while holder_pid(paths.lock) is not None and time.monotonic() < gone:
                    time.sleep(0.05)  # the kernel releases the lock as the process ends
                typer.echo(f"The memory service (pid {pid}) did not stop in {timeout:g} s and was killed.")
            return
        time.sleep(0.05)
    typer.echo(f"Memory service stopped{f' (pid {pid})' if pid else ''}.")


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(stop)
