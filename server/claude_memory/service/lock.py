"""The data directory's owner lock: one memory service per data directory.

An advisory ``flock`` on ``service.lock`` (released by the kernel when the process dies, so a crash never
leaves a stale lock), with the holder's pid written into the file for messages and ``claude-memory stop``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from claude_memory.core.paths import lock_held


class LockHeld(Exception):
    def __init__(self, path: Path, pid: int | None) -> None:
        holder = f" (pid {pid})" if pid else ""
        super().__init__(f"A memory service is already running for {path.parent}{holder}.")
        self.pid = pid


def holder_pid(path: Path) -> int | None:
    """The pid written in the lock file, if it names a live process that still holds the lock."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.isdigit() or not lock_held(path):
        return None
    return int(text)


class OwnerLock:
    """Held for the life of the service process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise LockHeld(self.path, holder_pid(self.path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None
