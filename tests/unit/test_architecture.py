"""Dependencies point down only: faces (cli) -> service -> store -> core. core stays pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "claude_memory"
LAYERS = {"core": 0, "config": 1, "store": 1, "service": 2}
FACES = {"cli", "lsp", "cli_lsp"}  # a face may import the layers; no layer may import a face
HEAVY_FOR_CORE = {"duckdb", "pyarrow", "typer", "rich", "hnswlib", "fastembed", "pygls", "lsprotocol", "mcp"}


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] if len(rel) > 1 else Path(rel[0]).stem


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    own = layer_of(path)
    for name in imported(path):
        parts = name.split(".")
        if parts[0] == "claude_memory" and len(parts) > 1:
            target = parts[1]
            if own in LAYERS and target in LAYERS:
                assert LAYERS[target] <= LAYERS[own], f"{own} must not import {name}"
            if own in LAYERS:
                assert target not in FACES, f"{own} must not import the face {name}"
        if own == "core":
            assert parts[0] not in HEAVY_FOR_CORE, f"core must stay pure, but imports {name}"


def test_every_module_imports() -> None:
    import importlib

    for path in modules():
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if name.endswith("__main__"):
            continue
        importlib.import_module(name)
