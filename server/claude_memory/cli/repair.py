"""``claude-memory repair``: rebuild a damaged store from the transcripts, every forget applied again
(:mod:`claude_memory.service.repair`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from claude_memory.cli.common import EXIT_BUSY, ClaudeHomeOpt, existing_claude_home, fail
from claude_memory.cli.report import Bars, report_text
from claude_memory.client.connection import ServiceClient
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import LockHeld, holder_pid
from claude_memory.store.db import StoreBusyError, StoreError


def repair(
    ctx: typer.Context,
    claude_home: ClaudeHomeOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild even a sound store (memories whose transcripts are gone are lost).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Replace a damaged store by one rebuilt from Claude Code's transcripts. Forgotten memories stay
    forgotten (the forget ledger is kept outside the store); the damaged file is kept in <data dir>/damaged/."""
    from claude_memory.service import repair as repairing  # the store and its engine: heavy imports

    data_dir: Path = ctx.obj.data_dir
    home = existing_claude_home(claude_home)
    _stop_service(data_dir)
    err = Console(stderr=True)
    bars = Bars(err) if err.is_terminal and not as_json else None
    try:
        report = repairing.repair(data_dir, home, force=force, progress=bars)
    except repairing.StoreSound as exc:
        typer.echo(str(exc), err=as_json)
        return
    except LockHeld as exc:
        fail(f"{exc} Stop it with `claude-memory stop`, then repair.", EXIT_BUSY)
    except StoreBusyError as exc:
        fail(str(exc), EXIT_BUSY)
    except (StoreError, OSError) as exc:
        fail(f"The repair stopped: {exc}")
    finally:
        if bars is not None:
            bars.stop()
    if as_json:
        typer.echo(json.dumps(report.as_json(), ensure_ascii=False, indent=2, default=str))
        return
    if report.moved_to:
        typer.echo(f"The damaged store was moved to {report.moved_to} (delete it once you no longer need it).")
    typer.echo(f"Forgotten memories kept forgotten: {report.forgotten_reapplied}.")
    report.import_report.setdefault("events", {}).setdefault("embedded", 0)
    report_text(report.import_report, Console(markup=False, highlight=False))
    typer.echo("The memory service embeds the rebuilt store for semantic search in the background.")


def _stop_service(data_dir: Path) -> None:
    """Ask a running service to stop (its store cannot be replaced under it) and wait until it has."""
    client = ServiceClient(data_dir, timeout=5)
    try:
        client.call("shutdown", {})
    except Exception:  # none runs (ServiceUnavailable), or it could not be asked: the lock decides below
        return
    finally:
        client.close()
    lock = RuntimePaths(data_dir).lock
    deadline = time.monotonic() + 60
    while holder_pid(lock) is not None and time.monotonic() < deadline:
        time.sleep(0.1)


def register(app: typer.Typer) -> None:
    app.command()(repair)
