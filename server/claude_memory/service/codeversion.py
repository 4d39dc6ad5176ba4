"""Whether the service's own code changed on disk since it started (a ``git pull``, a ``pip install -U``).

A service started before an upgrade keeps answering with the old code: it may lack a method the new
clients call (the hook client's ``hook`` was one). So the service notes a fingerprint of its package's
Python files when it starts and, while it is quiet, stops once that fingerprint changes; the next hook or
face starts the new version on demand, as after any stop.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import claude_memory


def package_root() -> Path:
    return Path(claude_memory.__file__).resolve().parent


def fingerprint(root: Path) -> str:
    """A digest of the path, size and modification time of every ``*.py`` file under ``root`` (about 0.5 ms
    for this package's ~80 files); an unreadable tree gives the digest of what could be read."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class CodeVersion:
    """The fingerprint of ``root`` (default: this package) taken now, compared on :meth:`changed`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or package_root()
        self._started = fingerprint(self.root)

    def changed(self) -> bool:
        return fingerprint(self.root) != self._started
