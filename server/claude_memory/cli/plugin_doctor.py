"""``claude-memory doctor``: checks every part of the install and says what is wrong in plain sentences.

Each check is a small function returning a :class:`Check` (ok, warning or error, and one sentence with
the fix); ``run_doctor`` gathers them. Split from :mod:`claude_memory.cli.plugin_setup`, whose readers of
Claude Code's state it uses.
"""

from __future__ import annotations

import importlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from claude_memory.cli.plugin_setup import (
    BIN_LAUNCHER,
    HOOK_EVENTS,
    HOOKS_FILE,
    MIN_PYTHON,
    REQUIRED_MODULES,
    HookHandler,
    HooksFile,
    PluginInfo,
    PluginState,
    SetupError,
    Status,
    claude_version,
    find_claude,
    find_plugin_root,
    first_line,
    hook_python,
    python_now,
    read_json_object,
    read_plugin_info,
    read_plugin_state,
    same_path,
    settings_file,
    unsupported_claude,
    validation_sentence,
)


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    message: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def check_python(version: tuple[int, int, int], executable: str) -> Check:
    shown = ".".join(str(v) for v in version)
    if version[:2] >= MIN_PYTHON:
        return Check("python", "ok", f"Python {shown} ({executable}).")
    return Check(
        "python",
        "error",
        f"Python {shown} is too old; claude-memory needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer: "
        "recreate the .venv with a newer python3.",
    )


def check_packages(import_module: Callable[[str], object] = importlib.import_module) -> Check:
    missing: list[str] = []
    for name in ("claude_memory", *REQUIRED_MODULES):
        try:
            import_module(name)
        except Exception as exc:  # a broken install can fail with more than ImportError
            missing.append(f"{name} ({type(exc).__name__})")
    if not missing:
        return Check("packages", "ok", f"claude_memory and {', '.join(REQUIRED_MODULES)} import.")
    return Check(
        "packages",
        "error",
        f"Cannot import {', '.join(missing)}: run `.venv/bin/pip install -e .` in the checkout.",
    )


def check_data_dir(data_dir: Path) -> Check:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-", delete=True) as f:
            f.write(b"ok")
    except OSError as exc:
        return Check(
            "data_dir",
            "error",
            f"The data directory {data_dir} is not writable ({exc.strerror or exc}): fix its permissions "
            "or point CLAUDE_MEMORY_HOME elsewhere.",
        )
    mode = data_dir.stat().st_mode & 0o777
    if mode & 0o077:
        return Check(
            "data_dir",
            "warn",
            f"The data directory {data_dir} is open to other users (mode {mode:o}); the next claude-memory "
            f"command makes it private, or run `chmod -R go-rwx {data_dir}`.",
        )
    return Check("data_dir", "ok", f"The data directory {data_dir} is writable and private to you.")


def check_embedder(available: bool, reason: str | None, download: Mapping[str, Any] | None = None) -> Check:
    if available:
        return Check("embedding_model", "ok", "The embedding model loads: semantic search is on.")
    download = download or {}
    state = download.get("state")
    if state == "downloading":
        done, total = download.get("bytes") or 0, download.get("total") or 0
        return Check(
            "embedding_model",
            "warn",
            f"The embedding model is downloading ({done / 1e6:.0f} of about {total / 1e6:.0f} MB); keyword search "
            "serves meanwhile.",
        )
    if state == "failed":
        reason = f"{download.get('error')} Fix the network (or set HF_ENDPOINT to a mirror) and run " + (
            "`claude-memory model fetch`."
        )
    return Check(
        "embedding_model",
        "warn",
        (reason or "No embedding model could be loaded.")
        + ("" if reason and "eyword search" in reason else " Keyword search still works."),
    )


def check_service(ping: Callable[[], Mapping[str, Any]], unavailable: type[Exception]) -> Check:
    try:
        answer = ping()
    except unavailable:
        return Check(
            "service",
            "warn",
            "The memory service is not running; that is fine, it starts on demand (or run `claude-memory serve`).",
        )
    except Exception as exc:
        return Check("service", "error", f"The memory service answered with an error: {first_line(str(exc))}")
    pid = answer.get("pid")
    return Check("service", "ok", "The memory service is running" + (f" (pid {pid})." if pid else "."))


def check_claude(find: Callable[[], Path], version: Callable[[Path], str]) -> tuple[Check, Path | None]:
    try:
        claude = find()
    except SetupError as exc:
        return Check("claude", "error", str(exc)), None
    try:
        shown = version(claude)
    except SetupError as exc:
        return Check("claude", "error", f"{claude} does not run: {exc}"), None
    too_old = unsupported_claude(shown, claude)
    if too_old:
        return Check("claude", "error", too_old), claude
    return Check("claude", "ok", f"Claude Code {shown} ({claude})."), claude


def check_plugin(state: PluginState, info: PluginInfo) -> Check:
    if not state.installed:
        return Check("plugin", "error", f"The plugin {info.plugin_id} is not installed: run `claude-memory install`.")
    if not state.enabled:
        return Check(
            "plugin",
            "error",
            f"The plugin {info.plugin_id} is installed but disabled: run `claude plugin enable {info.plugin_id}`.",
        )
    if state.marketplace_path is not None and not same_path(state.marketplace_path, info.root):
        return Check(
            "plugin",
            "warn",
            f"The plugin {info.plugin_id} is installed from {state.marketplace_path}, not from {info.root}: "
            "run `claude-memory install` here to switch.",
        )
    version = f" {state.version}" if state.version else ""
    return Check("plugin", "ok", f"The plugin {info.plugin_id}{version} is installed and enabled.")


def _command_executable(handler: HookHandler, root: Path) -> Path | None:
    if handler.type != "command" or not handler.command:
        return None
    command = handler.command.replace("${CLAUDE_PLUGIN_ROOT}", str(root))
    if handler.args is not None:
        return Path(os.path.normpath(command))
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return Path(os.path.normpath(words[0])) if words else None


def check_hooks(root: Path) -> Check:
    """The plugin folder's hooks/hooks.json parses, names known events, and every command it runs is an
    executable file."""
    path = root / HOOKS_FILE
    try:
        hooks = HooksFile.model_validate(read_json_object(path, missing_ok=False))
    except SetupError as exc:
        return Check("hooks", "error", str(exc))
    except ValidationError as exc:
        return Check("hooks", "error", f"{path} is invalid ({validation_sentence(exc)}).")
    unknown = sorted(set(hooks.hooks) - HOOK_EVENTS)
    if unknown:
        return Check("hooks", "error", f"{path} names unknown hook events: {', '.join(unknown)}.")
    programs = {
        program
        for groups in hooks.hooks.values()
        for group in groups
        for handler in group.hooks
        if (program := _command_executable(handler, root)) is not None
    }
    for program in sorted(programs):
        if not program.is_file():
            return Check("hooks", "error", f"The hook launcher {program} is missing.")
        if not os.access(program, os.X_OK):
            return Check("hooks", "error", f"The hook launcher {program} is not executable: run `chmod +x {program}`.")
    launcher = root / BIN_LAUNCHER
    if not os.access(launcher, os.X_OK):
        return Check("hooks", "error", f"{launcher} is missing or not executable: run `chmod +x {launcher}`.")
    base = root.parent  # the checkout, for the plugin folder ./plugin: paths as the user sees them there
    shown = ", ".join(os.path.relpath(p, base) for p in sorted(programs))
    return Check("hooks", "ok", f"{path.relative_to(base)} is valid ({len(hooks.hooks)} events); {shown} executable.")


def check_hook_python(python: str, probe: Callable[[str], str | None]) -> Check:
    """``probe(python)`` returns None when that interpreter imports claude_memory, else why not."""
    problem = probe(python)
    if problem is None:
        return Check("hook_python", "ok", f"Hooks and the MCP server run {python}, which imports claude_memory.")
    return Check(
        "hook_python",
        "error",
        f"Hooks and the MCP server would run {python}, which {problem}: run `claude-memory install` "
        "with the Python that has claude-memory installed.",
    )


def probe_python(python: str) -> str | None:
    try:
        done = subprocess.run(
            [python, "-c", "import claude_memory"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot start ({type(exc).__name__})"
    if done.returncode != 0:
        return "cannot import claude_memory"
    return None


def overall_ok(checks: Sequence[Check]) -> bool:
    return all(c.status != "error" for c in checks)


def doctor_report(checks: Sequence[Check], state: PluginState | None, info: PluginInfo | None) -> dict[str, Any]:
    return {
        "ok": overall_ok(checks),
        "checks": [c.as_dict() for c in checks],
        "plugin": None
        if info is None
        else {
            "id": info.plugin_id,
            "root": str(info.root),
            "folder": str(info.folder),
            "installed": bool(state and state.installed),
            "enabled": bool(state and state.enabled),
            "version": state.version if state else None,
        },
    }


def _embedder_check(data_dir: Path) -> Check:
    """The model as the store's owner finds it (the running service, else the store opened here), with any
    download; before there is a store, as a new one would."""
    from claude_memory import wire
    from claude_memory.client.transport import connect
    from claude_memory.config import load_settings
    from claude_memory.core.locations import DB_FILE, store_damaged
    from claude_memory.store.embedder import Embedder

    if (data_dir / DB_FILE).exists() and not store_damaged(str(data_dir)):
        try:
            transport = connect(data_dir)
            try:
                found = transport.call("model_status")
            finally:
                transport.close()
        except wire.OpError:
            pass  # busy or damaged: the store check says so; the model is judged as a new store would find it
        else:
            return check_embedder(found["available"], found["reason"], found["download"])
    settings, _ = load_settings(data_dir)
    embedder = Embedder(
        settings.embedding_model_path, data_dir=data_dir, offline=settings.is_offline, int8=settings.embedding_int8
    )
    return check_embedder(embedder.available, embedder.reason)


def _store_check(data_dir: Path) -> Check:
    """Open the store (through the service when one runs) and read all of it: damaged, busy or sound."""
    from claude_memory import wire
    from claude_memory.client.transport import LONG_TIMEOUT, connect
    from claude_memory.core.locations import DB_FILE, store_damaged

    damaged = store_damaged(str(data_dir))
    if damaged:
        return Check("store", "error", damaged)
    if not (data_dir / DB_FILE).exists():
        return Check("store", "ok", f"No memory store in {data_dir} yet; `claude-memory import` creates it.")
    try:
        transport = connect(data_dir)
        try:
            found = transport.call("verify", {}, timeout=LONG_TIMEOUT)
        finally:
            transport.close()
    except wire.OpError as exc:
        if exc.code == wire.BUSY:
            return Check("store", "warn", f"{exc} (not checked: run `claude-memory doctor` again then).")
        return Check("store", "error", str(exc))
    if not found["ok"]:
        return Check("store", "error", found["problem"])
    return Check(
        "store",
        "ok",
        f"The memory store is sound: {found['rows']} rows in {found['tables']} tables read, schema version "
        f"{found['schema_version']}.",
    )


def _service_check(data_dir: Path) -> Check:
    try:
        from claude_memory.client.connection import ServiceClient, ServiceUnavailable
    except ImportError as exc:
        return Check("service", "warn", f"The service client is not available in this install ({exc}).")
    client = ServiceClient(data_dir, timeout=3.0)
    try:
        return check_service(client.ping, ServiceUnavailable)
    finally:
        client.close()


def run_doctor(
    *,
    plugin_root: Path | None,
    claude_bin: Path | None,
    data_dir: Path,
    claude_dir: Path,
    environ: Mapping[str, str],
) -> dict[str, Any]:
    """Every check, in order, as the JSON report (``ok`` false when any check is an error)."""
    version, executable, _ = python_now()
    checks = [check_python(version, executable), check_packages(), check_data_dir(data_dir)]
    checks.append(_embedder_check(data_dir))
    checks.append(_service_check(data_dir))
    checks.append(_store_check(data_dir))
    claude_check, _claude = check_claude(lambda: find_claude(claude_bin, environ), claude_version)
    checks.append(claude_check)
    info: PluginInfo | None = None
    state: PluginState | None = None
    try:
        info = read_plugin_info(find_plugin_root(plugin_root))
    except SetupError as exc:
        checks.append(Check("plugin", "error", str(exc)))
    if info is not None:
        try:
            state = read_plugin_state(claude_dir, info)
            checks.append(check_plugin(state, info))
            settings = read_json_object(settings_file(claude_dir))
        except SetupError as exc:
            checks.append(Check("plugin", "error", str(exc)))
            settings = {}
        checks.append(check_hooks(info.folder))
        checks.append(check_hook_python(hook_python(info.root, settings, environ), probe_python))
    return doctor_report(checks, state, info)
