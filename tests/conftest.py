"""Shared fixtures. Real Claude Code data lives in ../shared (never copied into this repo)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    return Path(os.environ.get("CLAUDE_MEMORY_SHARED", REPO.parent / "shared")).resolve()


@pytest.fixture(autouse=True)
def _no_model_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run keyword-only unless they ask for the real model (the ``model_dir`` fixture)."""
    monkeypatch.delenv("CLAUDE_MEMORY_MODEL_PATH", raising=False)


@pytest.fixture()
def model_dir(shared: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real all-MiniLM-L6-v2 ONNX export in ../shared/models, switched on for this test."""
    path = shared / "models" / "all-MiniLM-L6-v2-onnx"
    if not (path / "model.onnx").exists():
        pytest.skip(f"the embedding model is not in {path}")
    monkeypatch.setenv("CLAUDE_MEMORY_MODEL_PATH", str(path))
    return path


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not (path / "fixtures").is_dir():
        pytest.skip(f"../shared is absent ({path}); the real Claude Code fixtures live there")
    return path


@pytest.fixture(scope="session")
def fixtures_home(shared: Path) -> Path:
    return shared / "fixtures" / "claude_home"


@pytest.fixture(scope="session")
def transcripts(shared: Path) -> Path:
    return shared / "fixtures" / "transcripts"


@pytest.fixture(scope="session")
def corpus_module() -> ModuleType:
    """bench/corpus.py, the deterministic generator of Claude Code transcript trees."""
    spec = importlib.util.spec_from_file_location("bench_corpus", REPO / "bench" / "corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_corpus"] = module
    spec.loader.exec_module(module)
    return module


def run_cli(
    data_dir: Path, *args: str, timeout: float = 300, model: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``claude-memory`` command in a fresh process, with its store in ``data_dir`` (and the
    embedding model only when ``model`` is given)."""
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data_dir), "COLUMNS": "200"}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CLAUDE_MEMORY_MODEL_PATH", None)
    if model is not None:
        env["CLAUDE_MEMORY_MODEL_PATH"] = str(model)
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


CLAUDE_CODE_VERSION = "2.1.330"  # what .ci/run installs into .tools/claude-code


def find_claude_bin() -> Path | None:
    """Claude Code's CLI: $CLAUDE_BIN, else <repo>/.tools/claude-code/node_modules/.bin/claude, else PATH."""
    env = os.environ.get("CLAUDE_BIN")
    if env:
        return Path(env).expanduser()
    local = REPO / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
    if local.exists():
        return local
    found = shutil.which("claude")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real ``claude`` CLI. Tests using it must give it a scratch HOME. Skipped when it is not
    installed, except in CI (the CI variable set), where its absence is a failure."""
    path = find_claude_bin()
    if path is None or not (path.is_file() and os.access(path, os.X_OK)):
        reason = (
            f"Claude Code's claude CLI was not found ({path or 'not on PATH'}): set CLAUDE_BIN or run "
            f"`npm install --prefix .tools/claude-code @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}`"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path
