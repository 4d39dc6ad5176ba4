"""Shared fixtures.

The Claude Code data the suite needs (a ~/.claude tree, transcripts, hook payloads) is the project's own, in
tests/fixtures: written by the real Claude Code CLI against the fake Anthropic API in tests/support (see
tests/fixtures/README.md). ../shared (or $CLAUDE_MEMORY_SHARED) holds what is not ours to copy here: the
embedding model, benchmark data and third-party transcripts; tests that need those skip without it and say
which they need."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support import own_fixtures
from support.fake_anthropic import FakeAnthropic, Rule
from support.shared_data import embedding_model, shared_dir

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_model_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run keyword-only unless they ask for the real model (the ``model_dir`` fixture), and offline: no
    process they start downloads a model (pytest_configure sets CLAUDE_MEMORY_OFFLINE for the whole run, module
    fixtures included), unless the test serves one (tests/support/fake_model_hub.py) and lifts it."""
    monkeypatch.delenv("CLAUDE_MEMORY_MODEL_PATH", raising=False)


@pytest.fixture()
def model_dir(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real embedding model from ../shared/models, switched on for this test."""
    path = embedding_model()
    monkeypatch.setenv("CLAUDE_MEMORY_MODEL_PATH", str(path))
    return path


@pytest.fixture(scope="session")
def fixtures_home() -> Path:
    """The project's own ~/.claude tree (tests/fixtures/claude_home), written by the real Claude Code CLI.
    Read only: copy it first to change it."""
    return own_fixtures.CLAUDE_HOME


@pytest.fixture(scope="session")
def transcripts() -> Path:
    """The same transcripts by scenario name (tests/fixtures/transcripts)."""
    return own_fixtures.TRANSCRIPTS


def pytest_configure(config: pytest.Config) -> None:
    # Nothing the suite starts reaches for a model hub: the hub's own variable survives the tests that pass on
    # only what does not start with CLAUDE; the tests of downloads lift both for their fake hub.
    os.environ["CLAUDE_MEMORY_OFFLINE"] = os.environ["HF_HUB_OFFLINE"] = "1"
    config.addinivalue_line(
        "markers",
        "covered_by(test): the test on the project's own fixtures that runs the same code path as this test on "
        "third-party data (named when this one skips without ../shared)",
    )


def third_party(request: pytest.FixtureRequest, what: str) -> Path:
    """../shared/fixtures/<what>: third-party Claude Code data (public MIT-licensed transcripts of versions
    1.0.117 to 2.1.39) that this repository does not copy. Without ../shared the test skips, naming the test
    that runs the same code path on the project's own fixtures (its ``covered_by`` marker)."""
    marker = request.node.get_closest_marker("covered_by")
    assert marker is not None, f"{request.node.name} uses third-party data: mark it covered_by(<the own-fixture test>)"
    path = shared_dir() / "fixtures" / what
    if not path.exists():
        pytest.skip(
            f"needs the third-party fixtures in {path} (not part of this repository); "
            f"the same code path runs on the project's own fixtures in {marker.args[0]}"
        )
    return path


@pytest.fixture()
def third_party_transcripts(request: pytest.FixtureRequest) -> Path:
    """../shared/fixtures/transcripts (flat third-party transcripts of older versions, and generated ones)."""
    return third_party(request, "transcripts")


@pytest.fixture()
def third_party_home(request: pytest.FixtureRequest) -> Path:
    """../shared/fixtures/claude_home (the same third-party transcripts as a ~/.claude tree)."""
    return third_party(request, "claude_home")


@pytest.fixture()
def fake_anthropic() -> Iterator[Callable[..., FakeAnthropic]]:
    """Starts the project's fake Anthropic API with the given rules (tests/support/fake_anthropic.py); each
    one started is stopped after the test."""
    started: list[FakeAnthropic] = []

    def start(rules: list[Rule] | tuple[Rule, ...] = (), **options: Any) -> FakeAnthropic:
        api = FakeAnthropic(rules, **options).start()
        started.append(api)
        return api

    yield start
    for api in started:
        api.stop()


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
