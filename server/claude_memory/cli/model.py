"""``claude-memory model status | fetch | use | remove``: the embedding model semantic search uses
(:mod:`claude_memory.service.operations.model`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any

import typer
from rich.console import Console

from claude_memory.cli.common import EXIT_INTERRUPTED, JsonOpt, fail
from claude_memory.cli.report import Bars
from claude_memory.client.transport import LONG_TIMEOUT, Transport

TransportFactory = Callable[[typer.Context], AbstractContextManager[Transport]]


def _megabytes(n: int | None) -> str:
    return f"{(n or 0) / 1e6:.1f} MB"


def status_lines(data: dict[str, Any]) -> list[str]:
    """``model status`` as text: which model, from where, and any download."""
    lines = [f"Model: {data['name']} ({data['model_id']})"]
    if data["available"]:
        precision = " (its int8 copy)" if data.get("int8") else ""
        lines.append(f"Semantic search: on, from {data['source']}{precision} {data['path'] or 'fastembed cache'}")
    else:
        lines.append(f"Semantic search: off. {data['reason']}")
    recorded = data.get("recorded")
    if recorded:
        lines.append(f"Recorded with the store: {recorded['model_id']} from {recorded['path'] or recorded['source']}")
    lines.append(f"Downloaded copy: {data['managed'] or 'none'}")
    download = data["download"]
    if download["state"] == "downloading":
        lines.append(f"Download: {_megabytes(download['bytes'])} of about {_megabytes(download['total'])}")
    elif download["state"] == "failed":
        lines.append(f"Download failed {download['attempts']} times: {download['error']} (next try in "
                     f"{download['retry_in']} s)")  # fmt: skip
    switch = data.get("switch")
    if switch:
        error = f"; {switch['error']}" if switch["error"] else ""
        lines.append(f"Switching to {switch['model_id']} ({switch['requested']}): {switch['done']} of "
                     f"{switch['events']} events embedded{error}")  # fmt: skip
    if data["offline"]:
        lines.append("Offline: on (nothing is downloaded)")
    return lines


def _show(data: dict[str, Any], *, as_json: bool) -> None:
    typer.echo(json.dumps(data, indent=2) if as_json else "\n".join(status_lines(data)))


def register(app: typer.Typer, transport: TransportFactory) -> None:
    """Add the ``model`` command group; ``transport`` is the app's (the running service, else this process)."""
    group = typer.Typer(help="The embedding model semantic search uses: see it, download it, change it, delete it.",
                        no_args_is_help=True)  # fmt: skip

    @group.command("status")
    def status_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Which embedding model semantic search uses and where it was found, or why there is none.

        Looked for in this order: CLAUDE_MEMORY_MODEL_PATH (or the embedding_model_path setting), the folder
        recorded with the store, the copy downloaded into the data directory, fastembed's own cache."""
        with transport(ctx) as t:
            _show(t.call("model_status"), as_json=as_json)

    @group.command("fetch")
    def fetch_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Download the embedding model into the data directory now, and use it.

        The memory service otherwise does it in the background when the model is first needed. HF_ENDPOINT names
        a mirror of the model hub, HTTPS_PROXY a proxy; offline mode forbids it."""
        err = Console(stderr=True)
        bars = Bars(err) if err.is_terminal and not as_json else None
        with transport(ctx) as t:
            try:
                data = t.call("model_fetch", progress=bars, timeout=LONG_TIMEOUT)
            except KeyboardInterrupt:
                fail("Download interrupted; nothing half-done was kept.", EXIT_INTERRUPTED)
            finally:
                if bars is not None:
                    bars.stop()
        _show(data, as_json=as_json)

    @group.command("use")
    def use_cmd(
        ctx: typer.Context,
        target: Annotated[
            str,
            typer.Argument(
                help="int8, float32, a folder holding a model.onnx, or a model name "
                "fastembed knows (e.g. BAAI/bge-small-en-v1.5)"
            ),
        ] = "",
        name: Annotated[
            str | None,
            typer.Option(help="fastembed's name for a folder's model (its pooling); by default the current model's"),
        ] = None,
        cancel: Annotated[bool, typer.Option("--cancel", help="Give up the switch in progress.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Embed every event again under another model, then use it.

        The memory service does it in the background, and the current model keeps answering searches until the
        new vectors are complete ('model status' shows how far it got); without a running service it is done now.
        int8 is the downloaded model's int8 copy (about 1.8 times as fast to embed), float32 the download itself."""
        if not target and not cancel:
            fail("Say which model to use: int8, float32, a model folder or a model name.", 2)
        err = Console(stderr=True)
        bars = Bars(err) if err.is_terminal and not as_json else None
        with transport(ctx) as t:
            try:
                data = t.call("model_use", {"target": target or "-", "name": name, "cancel": cancel},
                              progress=bars, timeout=LONG_TIMEOUT)  # fmt: skip
            except KeyboardInterrupt:
                fail("Interrupted; the switch resumes where it was ('model use --cancel' gives it up).",
                     EXIT_INTERRUPTED)  # fmt: skip
            finally:
                if bars is not None:
                    bars.stop()
        _show(data, as_json=as_json)

    @group.command("remove")
    def remove_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Delete the downloaded copy of the embedding model.

        Stored vectors stay; semantic search is off until a model is there again (claude-memory model fetch)."""
        with transport(ctx) as t:
            data = t.call("model_remove")
        typer.echo(json.dumps(data, indent=2) if as_json else data["note"])

    app.add_typer(group, name="model")
