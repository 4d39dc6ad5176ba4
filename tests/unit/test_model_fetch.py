"""The model fetcher's state machine (the download itself is stood in for here; tests/e2e/test_model_download.py
runs the real one against a stand-in hub): failures back off and double, a removal holds automatic fetches."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from claude_memory.service import model_fetch
from claude_memory.service.contract import NoProgress
from claude_memory.service.model_fetch import ModelFetcher
from claude_memory.store.model_files import ModelFetchError


def _finished(fetcher: ModelFetcher) -> None:
    thread = fetcher._thread
    assert thread is not None
    thread.join(10)


def test_failures_back_off_doubling_and_a_fetch_asked_for_runs_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def failing(data_dir: Path, name: str) -> Path:
        calls.append(data_dir)
        raise ModelFetchError("The embedding model m could not be downloaded (the model hub could not be reached).")

    monkeypatch.setattr(model_fetch.model_files, "fetch", failing)
    monkeypatch.setattr(model_fetch, "_expected", lambda name: 1000)
    ready = threading.Event()
    fetcher = ModelFetcher(tmp_path, "m", ready.set)
    assert fetcher.start()
    _finished(fetcher)
    first = fetcher.status()
    assert first["state"] == "failed" and first["attempts"] == 1 and 25 <= first["retry_in"] <= 30
    assert "could not be reached" in first["error"]
    assert not fetcher.start()  # backing off: not started again on its own
    assert not fetcher.ensure(True, NoProgress())
    with pytest.raises(ModelFetchError):
        fetcher.fetch(NoProgress())  # asked for: runs now, and says why it failed
    assert fetcher.status()["attempts"] == 2 and 55 <= fetcher.status()["retry_in"] <= 60
    assert len(calls) == 2 and not ready.is_set()


def test_a_success_tells_the_host_and_a_removal_holds_automatic_fetches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_fetch.model_files, "fetch", lambda data_dir, name: data_dir)
    monkeypatch.setattr(model_fetch, "_expected", lambda name: 1000)
    ready = threading.Event()
    fetcher = ModelFetcher(tmp_path, "m", ready.set)
    assert fetcher.ensure(True, NoProgress()) and ready.is_set()
    assert fetcher.status() == {"state": "ready", "bytes": None, "total": None, "error": None, "attempts": 0,
                                "retry_in": None}  # fmt: skip
    assert not fetcher.start()  # fetched once: a model that then failed to load is not fetched over and over
    fetcher.hold()
    assert not fetcher.start() and fetcher.status()["state"] == "removed"
    assert not fetcher.ensure(False, NoProgress())  # not allowed (offline): nothing starts
    assert fetcher.start(now=True)
    _finished(fetcher)
    assert fetcher.status()["state"] == "ready"
