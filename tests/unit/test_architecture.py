"""Every module of the package sits in a known layer, and imports point down only:

    faces      cli/  mcp/  lsp/  web/  hooks/  translate, then call(method, params)
    client     client/                         transports: the service socket, or in-process
    service    service/                        the engine (Memory), its operations (the contract), the daemon
    store      store/   config.py              DuckDB, the indexes, the model; settings
    core       core/    wire.py                pure logic; the wire format (standard library only)

A module this test does not know fails it, as does an upward import, a service→client or service→face
import, a heavy import in core/, wire.py or the hook client, a store import in the contract, and an import
cycle between modules at load time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "claude_memory"

# layer of each top-level name of the package: a package (folder) or a module (file)
LAYER = {
    "core": 0,
    "wire": 0,
    "config": 1,
    "store": 1,
    "service": 2,
    "client": 3,
    "cli": 4,
    "mcp": 4,
    "lsp": 4,
    "web": 4,
    "hooks": 4,
}
ROOT_MODULES = {"__init__", "__main__"}  # the package itself: the version, and `python -m claude_memory`
FACES = {"cli", "mcp", "lsp", "web", "hooks"}
# the CLI starts the MCP and language servers and the dashboard (`claude-memory mcp` / `lsp` / `web`)
LAUNCHES = {"cli": {"mcp", "lsp", "web"}}
HEAVY = {"duckdb", "pyarrow", "typer", "rich", "hnswlib", "fastembed", "pygls", "lsprotocol", "mcp"}
PURE = {"core", "wire"}  # no heavy library at all
# the hook client runs for every hook: the standard library, and these of ours (imported lazily but the first two)
HOOK_CLIENT_MAY_IMPORT = {"claude_memory.wire", "claude_memory.core.locations", "claude_memory.core.paths",
                          "claude_memory.client.connection"}  # fmt: skip
# the contract (models and operations) is imported by the MCP and language servers: no store, no heavy library
CONTRACT = ("service/contract.py", "service/operations/")


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def top(relpath: str) -> str:
    first = relpath.split("/")[0]
    return first.removesuffix(".py")


def imports(source: str, *, load_time_only: bool = False) -> list[str]:
    """Modules a source imports (absolute names). ``load_time_only``: only those imported when the module
    loads (module level, outside ``if TYPE_CHECKING``), which is what makes an import cycle."""
    tree = ast.parse(source)
    nodes: list[ast.AST] = []
    if load_time_only:
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            nodes.extend(ast.walk(node) if not isinstance(node, ast.FunctionDef | ast.ClassDef) else [])
    else:
        nodes = list(ast.walk(tree))
    names: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            # `from claude_memory.x import y` may import the submodule y
            names.extend(f"{node.module}.{alias.name}" for alias in node.names if node.module.startswith("claude_"))
    return names


def violations(relpath: str, source: str) -> list[str]:
    """Why the module at ``relpath`` (relative to the package) breaks the layering; empty when it does not."""
    own = top(relpath)
    if own in ROOT_MODULES and "/" not in relpath:
        return []
    if own not in LAYER:
        return [f"{relpath} is in no known layer: add it to LAYER in {Path(__file__).name} or move it"]
    found: list[str] = []
    for name in imports(source):
        parts = name.split(".")
        if parts[0] != "claude_memory":
            if own in PURE and parts[0] in HEAVY:
                found.append(f"{relpath} must stay pure, but imports {name}")
            if own == "hooks" and parts[0] in HEAVY | {"numpy", "pydantic", "typing_extensions"}:
                found.append(f"{relpath} (the hook client) must use the standard library only, but imports {name}")
            if relpath.startswith(CONTRACT) and parts[0] in HEAVY:
                found.append(f"{relpath} (the contract) must stay light, but imports {name}")
            continue
        if len(parts) == 1:
            continue  # the package itself (__version__)
        target = parts[1]
        if target not in LAYER:
            continue  # a name imported from the package root
        if LAYER[target] > LAYER[own] and target not in LAUNCHES.get(own, set()):
            found.append(f"{relpath} ({own}) must not import {name}: it is above it")
        if own == "service" and (target == "client" or target in FACES):
            found.append(f"{relpath}: the service must not import its clients or faces ({name})")
        if own in FACES and target in FACES and target != own and target not in LAUNCHES.get(own, set()):
            found.append(f"{relpath}: a face must not import another face ({name})")
        allowed = any(name == m or name.startswith(m + ".") for m in (*HOOK_CLIENT_MAY_IMPORT, "claude_memory.hooks"))
        if own == "hooks" and not allowed:
            found.append(f"{relpath} (the hook client) must not import {name}")
        if relpath.startswith(CONTRACT) and target == "store":
            found.append(f"{relpath} (the contract) must not import the store ({name})")
    return found


@pytest.mark.parametrize("path", modules(), ids=rel)
def test_module_is_in_its_layer(path: Path) -> None:
    assert violations(rel(path), path.read_text(encoding="utf-8")) == []


def test_every_module_is_covered() -> None:
    paths = [rel(p) for p in modules()]
    known = [p for p in paths if top(p) in LAYER or (top(p) in ROOT_MODULES and "/" not in p)]
    assert known == paths
    assert {top(p) for p in paths} - ROOT_MODULES == set(LAYER), "a layer with no module left: drop it from LAYER"


@pytest.mark.parametrize(
    ("relpath", "source", "why"),
    [
        ("service/extra.py", "from claude_memory.cli.app import app\n", "must not import"),
        ("service/extra.py", "from claude_memory.client.transport import connect\n", "its clients or faces"),
        ("store/extra.py", "import claude_memory.service.memory\n", "it is above it"),
        ("core/extra.py", "import duckdb\n", "must stay pure"),
        ("wire.py", "import duckdb\n", "must stay pure"),
        ("mcp/extra.py", "from claude_memory.lsp.server import MemoryLanguageServer\n", "another face"),
        ("hooks/extra.py", "from claude_memory.service.memory import Memory\n", "hook client"),
        ("hooks/extra.py", "import pydantic\n", "standard library only"),
        ("service/operations/extra.py", "from claude_memory.store import db\n", "the contract"),
        ("extra.py", "x = 1\n", "no known layer"),
        ("gui/app.py", "x = 1\n", "no known layer"),
        ("web/extra.py", "from claude_memory.mcp.server import run\n", "another face"),
    ],
)
def test_the_checker_catches(relpath: str, source: str, why: str) -> None:
    assert any(why in v for v in violations(relpath, source)), violations(relpath, source)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def test_no_import_cycle_at_load_time() -> None:
    names = {module_name(p): p for p in modules()}
    graph = {
        name: {dep for dep in imports(path.read_text(encoding="utf-8"), load_time_only=True) if dep in names}
        for name, path in names.items()
    }
    # a module imports its parent packages too; only edges between distinct modules count
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for dep in sorted(graph[node]):
            if dep == node or node.startswith(dep + "."):
                continue
            if state.get(dep) == 1:
                cycle.extend([*stack[stack.index(dep) :], dep] if dep in stack else [node, dep])
                return True
            if state.get(dep) is None and visit(dep, [*stack, dep]):
                return True
        state[node] = 2
        return False

    for name in sorted(graph):
        if state.get(name) is None and visit(name, [name]):
            break
    assert not cycle, " -> ".join(cycle)


def test_every_module_imports() -> None:
    import importlib

    for path in modules():
        name = module_name(path)
        if name.endswith("__main__"):
            continue
        importlib.import_module(name)


def test_the_contract_loads_without_the_store() -> None:
    """The MCP and language servers and the dashboard import the operations' models: that must not load DuckDB,
    the vector index or the model (checked in a fresh interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys, claude_memory.service.operations, claude_memory.client.transport, claude_memory.web.server; "
        "print(sorted(m for m in ('duckdb', 'hnswlib', 'fastembed', 'pyarrow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
