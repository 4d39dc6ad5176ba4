"""``claude-memory install``, ``uninstall`` and ``doctor``: the Claude Code plugin, set up and checked.

The logic lives in :mod:`claude_memory.cli.plugin_setup`; this module only adds the typer commands.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from claude_memory.cli import plugin_doctor, plugin_setup
from claude_memory.cli.common import JsonOpt, fail
from claude_memory.config import claude_home, default_data_dir

PluginRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--plugin-root",
        help="The checkout: the marketplace holding .claude-plugin/marketplace.json and the plugin/ folder.",
        show_default="the checkout this package runs from",
    ),
]
ClaudeBinOpt = Annotated[
    Path | None,
    typer.Option(
        "--claude-bin",
        help="Claude Code's `claude` command.",
        show_default="$CLAUDE_BIN, else `claude` on PATH",
    ),
]

MARKS = {"ok": "✓", "warn": "⚠", "error": "✗"}


def _data_dir(ctx: typer.Context) -> Path:
    data_dir = getattr(ctx.obj, "data_dir", None)
    return data_dir if isinstance(data_dir, Path) else default_data_dir()


def install_cmd(ctx: typer.Context, plugin_root: PluginRootOpt = None, claude_bin: ClaudeBinOpt = None) -> None:
    """Install claude-memory into Claude Code as a plugin (hooks, MCP server, /memory-* commands). Safe to re-run."""
    _, executable, prefix = plugin_setup.python_now()
    try:
        info = plugin_setup.read_plugin_info(plugin_setup.find_plugin_root(plugin_root))
        claude = plugin_setup.find_claude(claude_bin, os.environ)
        outcome = plugin_setup.install(info, claude, claude_home(), python=executable, prefix=prefix)
    except plugin_setup.SetupError as exc:
        fail(str(exc))
    for line in outcome.lines:
        typer.echo(line)


def uninstall_cmd(ctx: typer.Context, plugin_root: PluginRootOpt = None, claude_bin: ClaudeBinOpt = None) -> None:
    """Remove the plugin from Claude Code. Your memories are kept."""
    try:
        info = plugin_setup.plugin_info_or_default(plugin_root)
        claude = plugin_setup.find_claude(claude_bin, os.environ)
        outcome = plugin_setup.uninstall(info, claude, claude_home(), data_dir=_data_dir(ctx))
    except plugin_setup.SetupError as exc:
        fail(str(exc))
    for line in outcome.lines:
        typer.echo(line)


def doctor_cmd(
    ctx: typer.Context,
    plugin_root: PluginRootOpt = None,
    claude_bin: ClaudeBinOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every part of the setup, one line each with the fix. Exit code 1 when something is wrong."""
    report: dict[str, Any] = plugin_doctor.run_doctor(
        plugin_root=plugin_root,
        claude_bin=claude_bin,
        data_dir=_data_dir(ctx),
        claude_dir=claude_home(),
        environ=os.environ,
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for check in report["checks"]:
            typer.echo(f"{MARKS[check['status']]} {check['name']}: {check['message']}")
    if not report["ok"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add install, uninstall and doctor to the ``claude-memory`` app."""
    app.command("install")(install_cmd)
    app.command("uninstall")(uninstall_cmd)
    app.command("doctor")(doctor_cmd)
