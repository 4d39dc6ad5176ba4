"""A full disk mid-import: one plain sentence, exit 1, and resuming elsewhere loses and duplicates nothing.

Needs a tiny tmpfs, which needs root (CI and the development machines run as root); elsewhere it skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

Cli = Callable[..., subprocess.CompletedProcess[str]]


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


def run_import(cli: Cli, data: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return cli(data, "import", "--claude-home", str(home), "--settle-seconds", "0")


def event_rows(data: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
    try:
        return con.execute("SELECT id, dedupe_key, text FROM events ORDER BY id").fetchall()
    finally:
        con.close()


def test_full_disk_is_reported_plainly_and_a_resume_elsewhere_completes(
    tiny_disk: Path, tmp_path: Path, corpus_module: ModuleType, cli: Cli
) -> None:
    home = tmp_path / "claude"
    truth = corpus_module.generate(home, 12_000, seed=3)

    full = run_import(cli, tiny_disk / "data", home)
    assert full.returncode == 1
    assert full.stderr.startswith("Error: ") and len(full.stderr.strip().splitlines()) == 1, full.stderr
    assert "space" in full.stderr.lower(), full.stderr
    assert "Traceback" not in full.stderr

    moved = tmp_path / "moved"
    shutil.copytree(tiny_disk / "data", moved)  # the user frees space: here, by moving the store
    resumed = run_import(cli, moved, home)
    assert resumed.returncode == 0, resumed.stderr
    clean = tmp_path / "clean"
    assert run_import(cli, clean, home).returncode == 0
    rows = event_rows(moved)
    assert len(rows) == truth.events()
    assert rows == event_rows(clean)
