"""A full disk mid-import: one plain sentence, exit 1, and resuming elsewhere loses and duplicates nothing.

Needs a tiny tmpfs, which needs root (CI and the development machines run as root); elsewhere it skips.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a 4 MB tmpfs to fill up needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def cli(data: Path, home: Path) -> subprocess.CompletedProcess[str]:
    args = ["--data-dir", str(data), "import", "--claude-home", str(home), "--settle-seconds", "0"]
    return subprocess.run(
        [sys.executable, "-m", "claude_memory", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def event_rows(data: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
    try:
        return con.execute("SELECT id, dedupe_key, text FROM events ORDER BY id").fetchall()
    finally:
        con.close()


def test_full_disk_is_reported_plainly_and_a_resume_elsewhere_completes(tiny_disk: Path, tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_corpus", REPO / "bench" / "corpus.py")
    assert spec and spec.loader
    corpus = importlib.util.module_from_spec(spec)
    sys.modules["bench_corpus"] = corpus
    spec.loader.exec_module(corpus)
    home = tmp_path / "claude"
    truth = corpus.generate(home, 12_000, seed=3)

    full = cli(tiny_disk / "data", home)
    assert full.returncode == 1
    assert full.stderr.startswith("Error: ") and len(full.stderr.strip().splitlines()) == 1, full.stderr
    assert "space" in full.stderr.lower(), full.stderr
    assert "Traceback" not in full.stderr

    moved = tmp_path / "moved"
    shutil.copytree(tiny_disk / "data", moved)  # the user frees space: here, by moving the store
    resumed = cli(moved, home)
    assert resumed.returncode == 0, resumed.stderr
    clean = tmp_path / "clean"
    assert cli(clean, home).returncode == 0
    rows = event_rows(moved)
    assert len(rows) == truth.events()
    assert rows == event_rows(clean)
