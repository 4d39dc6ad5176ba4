"""Install the repository into Claude Code as a plugin, remove it again, and check every part (doctor).

The repository root is a one-plugin directory marketplace (``.claude-plugin/marketplace.json``) whose
plugin is the ``plugin/`` folder (``"source": "./plugin"``): its manifest, ``hooks/hooks.json``,
``.mcp.json``, ``bin/`` and ``commands/``, a few kilobytes. Claude Code copies a plugin's folder into its
cache on install; with the whole checkout as the plugin that copy took the ``.venv``, ``node_modules``
and benchmark data along (2.7 GB here). For a directory marketplace Claude Code runs the plugin from its
source folder (``readFromFolder``), so ``plugin/hooks/hooks.json`` reaches the hook launcher in the
checkout's ``hooks/`` as ``${CLAUDE_PLUGIN_ROOT}/../hooks/claude-memory-hook``.

Supported Claude Code: 2.1.197 (``MIN_CLAUDE_CODE``) and newer, tested with 2.1.197 and 2.1.330. Both run
a directory marketplace's plugin from its source folder and write the same ``settings.json``,
``plugins/installed_plugins.json`` and ``plugins/known_marketplaces.json`` (read here, never
``claude plugin list --json``, whose keys differ: 2.1.197 has no ``readFromFolder``), so install,
uninstall and doctor run the same commands on both; only doctor (and a line of install) asks
``claude --version``, to name an older Claude Code.

Installing runs Claude Code's own ``claude plugin marketplace add <root>`` and ``claude plugin install
<plugin>@<marketplace>`` (user scope). When the checkout has no ``.venv`` holding the running
interpreter, install also records that interpreter as ``CLAUDE_MEMORY_PYTHON`` in the ``env`` block of
Claude Code's user ``settings.json``: Claude Code passes that block to every hook process and MCP server
it starts, and ``plugin/bin/claude-memory`` and the hook launcher run ``$CLAUDE_MEMORY_PYTHON`` before
anything else.

Most functions here are pure (paths and JSON in, values out); only ``run_claude``, the settings writer
and the doctor's probes touch the outside world.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

PLUGIN_MANIFEST: Final = Path(".claude-plugin") / "plugin.json"
MARKETPLACE_MANIFEST: Final = Path(".claude-plugin") / "marketplace.json"
HOOKS_FILE: Final = Path("hooks") / "hooks.json"
BIN_LAUNCHER: Final = Path("bin") / "claude-memory"
# Used only when the plugin root cannot be read (uninstall after the checkout moved).
DEFAULT_PLUGIN_NAME: Final = "memory-layer"
DEFAULT_MARKETPLACE: Final = "claude-memory-local"

PYTHON_ENV: Final = "CLAUDE_MEMORY_PYTHON"
CLAUDE_BIN_ENV: Final = "CLAUDE_BIN"
MIN_PYTHON: Final = (3, 11)
REQUIRED_MODULES: Final = ("duckdb", "hnswlib", "fastembed", "mcp", "watchdog")
HOOK_EVENTS: Final = frozenset(
    {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
        "Notification",
    }
)
# The oldest Claude Code verified to run the plugin (hooks, MCP server, commands; .ci/run tests it beside the
# pinned 2.1.330). Older ones may reject hooks.json's newer events and are reported by doctor.
MIN_CLAUDE_CODE: Final = (2, 1, 197)
CLAUDE_TIMEOUT: Final = 600.0  # the claude CLI can be slow to start on a busy machine

Status = Literal["ok", "warn", "error"]


class SetupError(Exception):
    """Something stops install, uninstall or doctor; the message is one plain sentence."""


# ---------------------------------------------------------------------- JSON at the edges


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class PluginManifest(_Lenient):
    name: str = Field(min_length=1)
    version: str | None = None


class MarketplaceEntry(_Lenient):
    name: str = Field(min_length=1)
    source: Any = None


class MarketplaceManifest(_Lenient):
    name: str = Field(min_length=1)
    plugins: list[MarketplaceEntry] = Field(default_factory=list)


class InstallRecord(_Lenient):
    scope: str | None = None
    version: str | None = None


class MarketplaceSource(_Lenient):
    source: str | None = None
    path: str | None = None


class KnownMarketplace(_Lenient):
    source: MarketplaceSource = Field(default_factory=MarketplaceSource)
    installLocation: str | None = None  # Claude Code's own key


class HookHandler(_Lenient):
    type: str
    command: str | None = None
    args: list[str] | None = None
    timeout: float | None = Field(default=None, gt=0)


class MatcherGroup(_Lenient):
    matcher: str | None = None
    hooks: list[HookHandler] = Field(min_length=1)


class HooksFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str | None = None
    hooks: dict[str, list[MatcherGroup]]


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def validation_sentence(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "top level"
    return f"{where}: {error['msg']}"


def read_json_object(path: Path, *, missing_ok: bool = True) -> dict[str, Any]:
    """A JSON file holding an object; ``{}`` when it does not exist (and ``missing_ok``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise SetupError(f"{path} does not exist.") from None
    except OSError as exc:
        raise SetupError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SetupError(f"{path} is not valid JSON ({first_line(str(exc))}); fix or remove it first.") from None
    if not isinstance(data, dict):
        raise SetupError(f"{path} does not hold a JSON object; fix or remove it first.")
    return data


def write_json_object(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path`` atomically (a reader never sees half a file), keeping its permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------- the plugin itself


@dataclass(frozen=True)
class PluginInfo:
    root: Path  # the checkout: the marketplace root, holding .venv, server/ and hooks/
    name: str
    version: str
    marketplace: str
    folder: Path  # the plugin's own folder (the marketplace entry's source): manifest, hooks.json, bin/

    @property
    def plugin_id(self) -> str:
        return f"{self.name}@{self.marketplace}"


def package_plugin_root() -> Path:
    """Where the plugin would be if this package runs from its checkout: server/claude_memory -> root."""
    import claude_memory

    return Path(claude_memory.__file__).resolve().parents[2]


def find_plugin_root(explicit: Path | None = None, default: Path | None = None) -> Path:
    """The checkout holding ``.claude-plugin/marketplace.json``: ``explicit`` (--plugin-root) if given,
    else the checkout this package was installed from."""
    if explicit is not None:
        root = explicit.expanduser().resolve()
        if not (root / MARKETPLACE_MANIFEST).is_file():
            raise SetupError(f"{root} is not the plugin root: it has no {MARKETPLACE_MANIFEST}.")
        return root
    root = default if default is not None else package_plugin_root()
    if not (root / MARKETPLACE_MANIFEST).is_file():
        raise SetupError(
            f"The plugin root was not found ({root} has no {MARKETPLACE_MANIFEST}); "
            "pass --plugin-root with the path of your claude-memory-layer checkout."
        )
    return root


def plugin_folder(root: Path, entry: MarketplaceEntry) -> Path:
    """The folder a marketplace entry's relative ``source`` names (``./plugin``), inside ``root``."""
    source = entry.source
    if not isinstance(source, str) or not source.startswith("./"):
        raise SetupError(f'{root / MARKETPLACE_MANIFEST} must give the plugin {entry.name!r} a source like "./plugin".')
    folder = (root / source).resolve()
    if not folder.is_relative_to(root):
        raise SetupError(f"The plugin {entry.name!r} in {root / MARKETPLACE_MANIFEST} points outside {root}.")
    return folder


def read_plugin_info(root: Path) -> PluginInfo:
    """Marketplace name from marketplace.json; the plugin folder its one entry's source names; plugin name and
    version from that folder's plugin.json."""
    try:
        market = MarketplaceManifest.model_validate(read_json_object(root / MARKETPLACE_MANIFEST, missing_ok=False))
    except ValidationError as exc:
        raise SetupError(f"{root / MARKETPLACE_MANIFEST} is invalid ({validation_sentence(exc)}).") from None
    if len(market.plugins) != 1:
        raise SetupError(f"{root / MARKETPLACE_MANIFEST} must list exactly one plugin, not {len(market.plugins)}.")
    entry = market.plugins[0]
    folder = plugin_folder(root, entry)
    try:
        plugin = PluginManifest.model_validate(read_json_object(folder / PLUGIN_MANIFEST, missing_ok=False))
    except ValidationError as exc:
        raise SetupError(f"{folder / PLUGIN_MANIFEST} is invalid ({validation_sentence(exc)}).") from None
    if plugin.name != entry.name:
        raise SetupError(
            f"{root / MARKETPLACE_MANIFEST} lists the plugin {entry.name!r}, but {folder / PLUGIN_MANIFEST} names "
            f"{plugin.name!r}."
        )
    return PluginInfo(
        root=root, name=plugin.name, version=plugin.version or "0.0.0", marketplace=market.name, folder=folder
    )


def plugin_info_or_default(explicit: Path | None) -> PluginInfo:
    """For uninstall: the manifests when they can be read, else the names this repository ships with."""
    try:
        return read_plugin_info(find_plugin_root(explicit))
    except SetupError:
        if explicit is not None:
            raise
        root = package_plugin_root()
        return PluginInfo(
            root=root, name=DEFAULT_PLUGIN_NAME, version="", marketplace=DEFAULT_MARKETPLACE, folder=root / "plugin"
        )


# ---------------------------------------------------------------------- the claude CLI


def find_claude(
    explicit: Path | None,
    env: Mapping[str, str],
    which: Callable[[str], str | None] = shutil.which,
) -> Path:
    """``--claude-bin``, else ``$CLAUDE_BIN``, else ``claude`` on PATH."""
    for given, origin in ((explicit, "--claude-bin"), (env.get(CLAUDE_BIN_ENV) or None, f"${CLAUDE_BIN_ENV}")):
        if given:
            path = Path(given).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return path
            raise SetupError(f"{origin} points at {path}, which is not an executable file.")
    found = which("claude")
    if found is None:
        raise SetupError(
            "Claude Code's `claude` command was not found on PATH; install Claude Code, "
            f"or pass --claude-bin PATH (or set {CLAUDE_BIN_ENV})."
        )
    return Path(found)


def run_claude(claude: Path, args: Sequence[str], *, timeout: float = CLAUDE_TIMEOUT) -> str:
    """Run ``claude <args>``; its stdout, or SetupError naming the command and the first line it printed."""
    shown = "claude " + " ".join(args)
    try:
        done = subprocess.run(
            [str(claude), *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise SetupError(f"`{shown}` did not finish within {timeout:.0f} s.") from None
    except OSError as exc:
        raise SetupError(f"`{shown}` could not start: {exc.strerror or exc}.") from None
    if done.returncode != 0:
        reason = first_line(done.stderr) or first_line(done.stdout) or f"exit code {done.returncode}"
        raise SetupError(f"`{shown}` failed: {reason.lstrip('✘ ').strip()}")
    return done.stdout


def claude_version(claude: Path) -> str:
    """``2.1.330`` from ``2.1.330 (Claude Code)``."""
    out = run_claude(claude, ["--version"], timeout=60)
    return first_line(out).split(" ")[0] or "unknown"


def version_tuple(version: str) -> tuple[int, int, int] | None:
    """``(2, 1, 197)`` from ``2.1.197`` (or ``2.1.197-beta``); None when it is not such a version."""
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)", version.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def unsupported_claude(version: str, claude: Path | None = None) -> str | None:
    """One sentence with the fix when Claude Code ``version`` (at ``claude``) is older than ``MIN_CLAUDE_CODE``;
    None when it is supported, or when the version cannot be read (no claim then)."""
    parsed = version_tuple(version)
    if parsed is None or parsed >= MIN_CLAUDE_CODE:
        return None
    oldest = ".".join(str(n) for n in MIN_CLAUDE_CODE)
    where = f" ({claude})" if claude is not None else ""
    return (
        f"Claude Code {version}{where} is older than {oldest}, the oldest version claude-memory supports: "
        "update it with `claude update` (or `npm install -g @anthropic-ai/claude-code@latest`)."
    )


# ---------------------------------------------------------------------- Claude Code's state (read only)


@dataclass(frozen=True)
class PluginState:
    installed: bool  # at user scope
    enabled: bool
    version: str | None
    marketplace_known: bool
    marketplace_path: str | None


def settings_file(claude_dir: Path) -> Path:
    return claude_dir / "settings.json"


def installed_plugins_file(claude_dir: Path) -> Path:
    return claude_dir / "plugins" / "installed_plugins.json"


def known_marketplaces_file(claude_dir: Path) -> Path:
    return claude_dir / "plugins" / "known_marketplaces.json"


def install_records(installed: Mapping[str, Any], plugin_id: str) -> list[InstallRecord]:
    """The install records of ``plugin_id`` in installed_plugins.json: a list of them (format version 2, what
    every supported Claude Code writes) or one object (version 1). Other plugins' entries are not read, so
    one Claude Code does not understand cannot hide ours."""
    plugins = installed.get("plugins")
    raw = plugins.get(plugin_id) if isinstance(plugins, dict) else None
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    records: list[InstallRecord] = []
    for item in items:
        try:
            records.append(InstallRecord.model_validate(item))
        except ValidationError:
            continue
    return records


def plugin_state(
    settings: Mapping[str, Any],
    installed: Mapping[str, Any],
    marketplaces: Mapping[str, Any],
    info: PluginInfo,
) -> PluginState:
    """Whether Claude Code has the plugin installed (user scope) and enabled, and where its marketplace
    points, from the contents of settings.json, plugins/installed_plugins.json and
    plugins/known_marketplaces.json."""
    records = install_records(installed, info.plugin_id)
    user = next((r for r in records if r.scope in (None, "user")), None)
    enabled_map = settings.get("enabledPlugins")
    enabled = isinstance(enabled_map, dict) and enabled_map.get(info.plugin_id) is True
    market_path: str | None = None
    raw_market = marketplaces.get(info.marketplace)
    if raw_market is None:
        declared = settings.get("extraKnownMarketplaces")
        raw_market = declared.get(info.marketplace) if isinstance(declared, dict) else None
    if isinstance(raw_market, dict):
        try:
            market = KnownMarketplace.model_validate(raw_market)
            market_path = market.source.path or market.installLocation
        except ValidationError:
            market_path = None
    return PluginState(
        installed=user is not None,
        enabled=enabled,
        version=user.version if user else None,
        marketplace_known=raw_market is not None,
        marketplace_path=market_path,
    )


def read_plugin_state(claude_dir: Path, info: PluginInfo) -> PluginState:
    return plugin_state(
        read_json_object(settings_file(claude_dir)),
        read_json_object(installed_plugins_file(claude_dir)),
        read_json_object(known_marketplaces_file(claude_dir)),
        info,
    )


def same_path(a: str | Path | None, b: str | Path | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    except OSError:
        return False


# ---------------------------------------------------------------------- the interpreter


def needs_python_env(root: Path, prefix: str | Path) -> bool:
    """True unless ``<root>/.venv`` is the environment running now (then hooks find it on their own)."""
    venv = root / ".venv"
    return not (venv.is_dir() and same_path(venv, prefix))


def with_python_env(settings: Mapping[str, Any], python: str) -> dict[str, Any]:
    """A copy of settings with ``env.CLAUDE_MEMORY_PYTHON = python``; every other key kept as it was."""
    merged = dict(settings)
    env = merged.get("env")
    merged["env"] = {**(env if isinstance(env, dict) else {}), PYTHON_ENV: python}
    return merged


def without_python_env(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of settings without ``env.CLAUDE_MEMORY_PYTHON`` (and without ``env`` if that was all of it)."""
    cleaned = dict(settings)
    env = cleaned.get("env")
    if isinstance(env, dict) and PYTHON_ENV in env:
        rest = {k: v for k, v in env.items() if k != PYTHON_ENV}
        if rest:
            cleaned["env"] = rest
        else:
            del cleaned["env"]
    return cleaned


def recorded_python(settings: Mapping[str, Any]) -> str | None:
    env = settings.get("env")
    value = env.get(PYTHON_ENV) if isinstance(env, dict) else None
    return value if isinstance(value, str) and value else None


def hook_python(root: Path, settings: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """The interpreter bin/claude-memory and the hook launcher will pick inside a Claude Code session."""
    chosen = recorded_python(settings) or environ.get(PYTHON_ENV) or None
    if chosen:
        return chosen
    venv_python = root / ".venv" / "bin" / "python"
    if venv_python.exists():
        return str(venv_python)
    return "python3"


# ---------------------------------------------------------------------- install / uninstall


@dataclass
class Outcome:
    """What install or uninstall did, as sentences for the user."""

    changed: bool = False
    lines: list[str] = field(default_factory=list)

    def did(self, line: str) -> None:
        self.changed = True
        self.lines.append(line)


def install(info: PluginInfo, claude: Path, claude_dir: Path, *, python: str, prefix: str) -> Outcome:
    """Add the marketplace, install and enable the plugin, record the interpreter. Idempotent. A Claude Code
    older than ``MIN_CLAUDE_CODE`` gets a line saying so (the install itself is still tried)."""
    out = Outcome()
    try:
        too_old = unsupported_claude(claude_version(claude), claude)
    except SetupError:
        too_old = None  # the commands below say what is wrong with it
    if too_old:
        out.lines.append(too_old)
    state = read_plugin_state(claude_dir, info)
    if not state.marketplace_known or not same_path(state.marketplace_path, info.root):
        run_claude(claude, ["plugin", "marketplace", "add", str(info.root)])
        out.did(f"Added the marketplace {info.marketplace} ({info.root}).")
    if not state.installed or not state.enabled:
        run_claude(claude, ["plugin", "install", info.plugin_id, "--scope", "user"])
        out.did(f"Installed the Claude Code plugin {info.plugin_id} {info.version} (user scope, enabled).")
    path = settings_file(claude_dir)
    settings = read_json_object(path)
    if needs_python_env(info.root, prefix):
        if recorded_python(settings) != python:
            write_json_object(path, with_python_env(settings, python))
            out.did(f"Hooks and the MCP server will run {python} (env {PYTHON_ENV} in {path}).")
    elif recorded_python(settings) is not None:
        write_json_object(path, without_python_env(settings))
        out.did(f"Hooks and the MCP server will use {info.root / '.venv'} (removed {PYTHON_ENV} from {path}).")
    failed = precompile([info.root], python)
    if failed:
        out.lines.append(failed)
    if not out.changed:
        out.lines.append(f"The Claude Code plugin {info.plugin_id} is already installed and enabled ({info.root}).")
    else:
        out.lines.append("Start a new Claude Code session (or run /reload-plugins) to use it.")
    return out


def precompile(roots: Sequence[Path], python: str) -> str | None:
    """Write the bytecode of the Python package in each checkout (Claude Code runs a directory marketplace's
    plugin from its folder, not from its cache copy), so that no hook compiles it: compiling the hook client
    costs each hook about 10 ms where bytecode cannot be written at run time (read-only folders,
    PYTHONDONTWRITEBYTECODE).
    None when done, else one sentence (hooks still work, a little slower)."""
    packages = [
        str(root / "server" / "claude_memory") for root in roots if (root / "server" / "claude_memory").is_dir()
    ]
    if not packages:
        return None
    try:
        done = subprocess.run(
            [python, "-m", "compileall", "-q", *packages], capture_output=True, text=True, timeout=CLAUDE_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Could not precompile the plugin's Python files ({type(exc).__name__}); hooks start a little slower."
    if done.returncode != 0:
        reason = first_line(done.stdout or done.stderr) or f"exit status {done.returncode}"
        return f"Could not precompile the plugin's Python files ({reason}); hooks start a little slower."
    return None


def uninstall(info: PluginInfo, claude: Path, claude_dir: Path, *, data_dir: Path) -> Outcome:
    """Uninstall the plugin, remove the marketplace and the recorded interpreter. Memories are kept."""
    out = Outcome()
    state = read_plugin_state(claude_dir, info)
    if state.installed:
        run_claude(claude, ["plugin", "uninstall", info.plugin_id, "--scope", "user", "--keep-data"])
        out.did(f"Uninstalled the Claude Code plugin {info.plugin_id}.")
    if state.marketplace_known:
        run_claude(claude, ["plugin", "marketplace", "remove", info.marketplace])
        out.did(f"Removed the marketplace {info.marketplace}.")
    path = settings_file(claude_dir)
    settings = read_json_object(path)
    if recorded_python(settings) is not None:
        write_json_object(path, without_python_env(settings))
        out.did(f"Removed {PYTHON_ENV} from {path}.")
    if not out.changed:
        out.lines.append(f"The Claude Code plugin {info.plugin_id} is not installed; nothing to remove.")
    out.lines.append(f"Your memories are kept in {data_dir}; delete that folder to remove them too.")
    return out


def python_now() -> tuple[tuple[int, int, int], str, str]:
    """(version, executable, prefix) of the running interpreter."""
    v = sys.version_info
    return (v.major, v.minor, v.micro), sys.executable, sys.prefix
