"""The embedding model on a fresh install: the real download path (``claude-memory`` → fastembed → huggingface_hub)
against a loopback stand-in for the model hub (tests/support/fake_model_hub.py, serving ../shared's model through
``HF_ENDPOINT``), with no ``CLAUDE_MEMORY_MODEL_PATH`` anywhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from claude_memory.client.connection import ServiceClient
from claude_memory.service.operations import registry
from support import own_fixtures as fx
from support.fake_model_hub import serving
from support.shared_data import embedding_model

MANAGED = "models/models--Qdrant--all-MiniLM-L6-v2-onnx"


def run(data: Path, *args: str, endpoint: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``claude-memory`` in a new process as a new shell would run it: no model variable, online only when an
    ``endpoint`` (the fake hub) is given, and never through a proxy to it."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_MEMORY_MODEL_PATH", "CLAUDE_CONFIG_DIR")}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "COLUMNS": "200", "NO_PROXY": "127.0.0.1,localhost"}
    env |= {"HF_HOME": str(data.parent / "hf-home"), "FASTEMBED_CACHE_PATH": str(data.parent / "fastembed-cache")}
    if endpoint is not None:
        env.pop("CLAUDE_MEMORY_OFFLINE", None)
        env.pop("HF_HUB_OFFLINE", None)
        env["HF_ENDPOINT"] = endpoint
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def nothing_half_done(data: Path) -> None:
    models = data / "models"
    assert not (data / MANAGED).exists(), "a model that failed to download was kept"
    assert not list(models.glob(".download-*")) if models.exists() else True, "a staging folder was left behind"


@pytest.fixture(scope="module")
def model() -> Path:
    return embedding_model()


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_import_on_a_fresh_install_downloads_the_model_and_a_new_shell_searches_in_hybrid_mode(
    model: Path, data: Path, tmp_path: Path, fixtures_home: Path
) -> None:
    home = shutil.copytree(fixtures_home, tmp_path / "claude")
    with serving(model) as (endpoint, hub):
        report = as_json(run(data, "import", "--claude-home", str(home), "--settle-seconds", "0", "--json",
                             endpoint=endpoint))  # fmt: skip
        assert any("resolve" in r and "model.onnx" in r for r in hub.requests)
    assert report["events"]["new"] > 80 and report["events"]["embedded"] == report["events"]["new"]
    assert not [n for n in report["notes"] if "semantic" in n.lower() or "model" in n.lower()], report["notes"]
    folder = data / MANAGED
    assert folder.is_dir() and not list((data / "models").glob(".download-*"))
    # a new shell: no variable, no hub; the store records its model, the managed copy is where it says
    status = as_json(run(data, "model", "status", "--json"))
    assert status["available"] and status["source"] == "managed" and status["managed"]
    assert status["recorded"]["model_id"] == status["model_id"] and status["recorded"]["fingerprint"]
    assert status["int8"] and Path(status["path"]).parent == data / "models" / "int8"  # made from the download
    assert not list((data / "models" / "int8").glob(".download-*"))
    found = as_json(run(data, "search", "output a salutation", "--project", fx.WORK, "--json"))
    assert found["meta"]["mode"] == "hybrid" and "degraded" not in found["meta"]
    assert any("greeting" in r["text"].lower() for r in found["results"])


def test_a_store_embedded_in_float32_keeps_float32_when_int8_is_turned_on(
    model: Path, data: Path, fixtures_home: Path
) -> None:
    data.mkdir(parents=True)
    settings = data / "settings.json"
    settings.write_text(json.dumps({"embedding_int8": False}))
    with serving(model) as (endpoint, _):
        as_json(run(data, "import", "--claude-home", str(fixtures_home), "--settle-seconds", "0", "--json",
                    endpoint=endpoint))  # fmt: skip
    before = as_json(run(data, "model", "status", "--json"))
    assert before["available"] and not before["int8"] and Path(before["path"]).is_relative_to(data / MANAGED)
    settings.unlink()  # int8 is the default again: the store's vectors are float32 ones, so float32 it stays
    after = as_json(run(data, "model", "status", "--json"))
    assert not after["int8"] and after["model_id"] == before["model_id"] == after["recorded"]["model_id"]
    assert as_json(run(data, "search", "greeting", "--json"))["meta"]["mode"] == "hybrid"


def test_a_store_embedded_with_an_explicit_folder_finds_it_again_without_the_variable(
    model: Path, data: Path, tmp_path: Path, fixtures_home: Path
) -> None:
    local = shutil.copytree(model, tmp_path / "my-model")
    env_run = run(data, "import", "--claude-home", str(fixtures_home), "--settle-seconds", "0", "--json")
    assert env_run.returncode == 0  # offline and no model: keyword only for now
    with_model = subprocess.run(
        [sys.executable, "-m", "claude_memory", "model", "status", "--json"],
        env={**os.environ, "CLAUDE_MEMORY_HOME": str(data), "CLAUDE_MEMORY_MODEL_PATH": str(local)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert as_json(with_model)["source"] == "path"
    status = as_json(run(data, "model", "status", "--json"))  # no variable now
    assert status["available"] and status["source"] == "recorded" and status["path"] == str(local)
    assert as_json(run(data, "search", "greeting", "--json"))["meta"]["mode"] == "hybrid"


@pytest.mark.parametrize(
    ("mode", "words"),
    [("cut", "cut off or damaged"), ("corrupt", "does not match its checksum")],
)
def test_a_failed_download_is_one_sentence_and_leaves_no_half_model(
    model: Path, data: Path, mode: str, words: str
) -> None:
    with serving(model, mode) as (endpoint, _):
        done = run(data, "model", "fetch", endpoint=endpoint)
    assert done.returncode == 1
    assert words in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    nothing_half_done(data)
    status = as_json(run(data, "model", "status", "--json"))
    assert not status["available"] and status["managed"] is None


def test_a_transfer_cut_once_is_resumed(model: Path, data: Path) -> None:
    with serving(model, "cut_once") as (endpoint, hub):
        status = as_json(run(data, "model", "fetch", "--json", endpoint=endpoint))
    assert status["available"] and status["source"] == "managed"
    assert hub.model_gets >= 2  # cut, then resumed
    fetch = registry().get("model_fetch")
    assert fetch is not None
    TypeAdapter(fetch.result).validate_python(status)  # what the operation answers is what its model says


def test_no_hub_at_all_fails_in_one_sentence_and_offline_never_tries(model: Path, data: Path) -> None:
    started = time.monotonic()
    done = run(data, "model", "fetch", endpoint="http://127.0.0.1:9")  # nothing listens on the discard port
    assert done.returncode == 1 and "could not be reached" in done.stderr, done.stderr
    assert time.monotonic() - started < 120
    nothing_half_done(data)
    offline = run(data, "model", "fetch")  # the suite runs with CLAUDE_MEMORY_OFFLINE=1
    assert offline.returncode == 1 and "Offline mode is on" in offline.stderr
    assert not (data / "models").exists() or not any((data / "models").iterdir())


def test_a_staging_folder_of_a_killed_download_is_cleared_and_remove_deletes_the_copy(model: Path, data: Path) -> None:
    stale = data / "models" / ".download-999999-deadbeef" / "blobs"
    stale.mkdir(parents=True)
    (stale / "partial.incomplete").write_bytes(b"x" * 1000)
    with serving(model) as (endpoint, _):
        as_json(run(data, "model", "fetch", "--json", endpoint=endpoint))
    assert not stale.parent.exists() and (data / MANAGED).is_dir()
    removed = as_json(run(data, "model", "remove", "--json"))
    assert removed["removed"] and not (data / MANAGED).exists()
    assert not as_json(run(data, "model", "status", "--json"))["available"]


@pytest.fixture()
def service(data: Path, tmp_path: Path, model: Path) -> Iterator[tuple[ServiceClient, Any]]:
    """A memory service started online against the fake hub, with nothing to watch."""
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    with serving(model) as (endpoint, hub):
        lifted = ("CLAUDE_MEMORY_MODEL_PATH", "CLAUDE_MEMORY_OFFLINE", "HF_HUB_OFFLINE")
        env = {k: v for k, v in os.environ.items() if k not in lifted}
        env |= {"CLAUDE_MEMORY_HOME": str(data), "HF_ENDPOINT": endpoint, "NO_PROXY": "127.0.0.1,localhost"}
        env |= {"HF_HOME": str(tmp_path / "hf-home")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "claude_memory", "serve", "--claude-home", str(claude), "--no-watch", "--quiet"],
            env=env,
        )
        client = ServiceClient(data, timeout=60)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.ping(timeout=5)
                    break
                except Exception:
                    assert proc.poll() is None and time.monotonic() < deadline, "the service did not start"
                    time.sleep(0.2)
            yield client, hub
        finally:
            client.call("shutdown")
            proc.wait(timeout=60)


def test_the_service_downloads_a_missing_model_in_the_background_and_status_shows_it(
    service: tuple[ServiceClient, Any], data: Path
) -> None:
    client, hub = service
    deadline = time.monotonic() + 120
    states = set()
    while time.monotonic() < deadline:
        embedding = client.call("status")["embedding"]
        states.add(embedding["download"]["state"])
        if embedding["available"]:
            break
        time.sleep(0.2)
    assert embedding["available"] and embedding["source"] == "managed", embedding
    assert "downloading" in states or "ready" in states
    assert client.call("model_status")["recorded"]["source"] == "managed"
    assert any("model.onnx" in r for r in hub.requests)


def test_model_use_without_a_service_switches_the_store_now(model: Path, data: Path, fixtures_home: Path) -> None:
    with serving(model) as (endpoint, _):
        as_json(run(data, "import", "--claude-home", str(fixtures_home), "--settle-seconds", "0", "--json",
                    endpoint=endpoint))  # fmt: skip
    before = as_json(run(data, "model", "status", "--json"))
    assert before["int8"]
    after = as_json(run(data, "model", "use", "float32", "--json"))  # no service: done now, to the end
    assert not after["int8"] and after["switch"] is None and after["model_id"] != before["model_id"]
    assert after["recorded"]["model_id"] == after["model_id"] and Path(after["path"]).is_relative_to(data / MANAGED)
    later = as_json(run(data, "model", "status", "--json"))  # a new shell finds the float32 model
    assert not later["int8"] and later["model_id"] == after["model_id"]
    found = as_json(run(data, "search", "output a salutation", "--project", fx.WORK, "--json"))
    assert found["meta"]["mode"] == "hybrid" and any("greeting" in r["text"].lower() for r in found["results"])
    bad = run(data, "model", "use", "no-such/model-anywhere")
    assert bad.returncode == 1 and "neither int8, float32" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_model_use_through_the_service_switches_in_the_background_while_search_goes_on(
    service: tuple[ServiceClient, Any], tmp_path: Path, fixtures_home: Path
) -> None:
    client, _ = service
    shutil.copytree(fixtures_home / "projects", tmp_path / "claude" / "projects", dirs_exist_ok=True)
    deadline = time.monotonic() + 120
    while not client.call("model_status")["available"]:
        assert time.monotonic() < deadline, "the model was not downloaded"
        time.sleep(0.2)
    client.call("import", {"settle_seconds": 0}, timeout=300)
    before = client.call("model_status")
    assert before["int8"] and before["switch"] is None
    started = client.call("model_use", {"target": "float32"}, timeout=120)
    assert started["model_id"] == before["model_id"]  # answered at once: the int8 model serves meanwhile
    modes = []
    deadline = time.monotonic() + 240
    while (state := client.call("model_status"))["switch"] is not None:
        assert state["switch"]["error"] is None and time.monotonic() < deadline, state["switch"]
        modes.append(client.call("search", {"query": "output a salutation", "limit": 5})["meta"]["mode"])
        time.sleep(0.05)
    assert set(modes) <= {"hybrid"}
    assert not state["int8"] and state["model_id"] != before["model_id"]
    assert state["recorded"]["model_id"] == state["model_id"]
    found = client.call("search", {"query": "output a salutation", "limit": 5})
    assert found["meta"]["mode"] == "hybrid" and any("greeting" in r["text"].lower() for r in found["results"])


def test_model_use_by_name_downloads_that_model_and_later_processes_find_it_by_its_recorded_name(
    model: Path, data: Path, tmp_path: Path, fixtures_home: Path
) -> None:
    """Another model fastembed knows, by name: BAAI/bge-small-en-v1.5, whose export names its file
    model_optimized.onnx. The stand-in hub serves the MiniLM files under that repo and file name (what is measured
    is the path by name: the download, the switch, the record; not the model's quality)."""
    other = tmp_path / "bge-as-served"
    other.mkdir()
    for item in model.iterdir():
        (other / ("model_optimized.onnx" if item.name == "model.onnx" else item.name)).symlink_to(item)
    with serving(model) as (endpoint, _):
        as_json(run(data, "import", "--claude-home", str(fixtures_home), "--settle-seconds", "0", "--json",
                    endpoint=endpoint))  # fmt: skip
    with serving(other, repo="Qdrant/bge-small-en-v1.5-onnx-Q") as (endpoint, hub):
        switched = as_json(run(data, "model", "use", "BAAI/bge-small-en-v1.5", "--json", endpoint=endpoint))
        assert any("model_optimized.onnx" in r for r in hub.requests)
    assert switched["name"] == "BAAI/bge-small-en-v1.5" and switched["switch"] is None
    assert switched["model_id"].startswith("BAAI/bge-small-en-v1.5@") and not switched["int8"]
    assert switched["recorded"]["name"] == "BAAI/bge-small-en-v1.5"
    later = as_json(run(data, "model", "status", "--json"))  # a new shell, no hub: found under its recorded name
    assert later["available"] and later["model_id"] == switched["model_id"] and later["source"] == "managed"
    assert as_json(run(data, "search", "greeting", "--json"))["meta"]["mode"] == "hybrid"
