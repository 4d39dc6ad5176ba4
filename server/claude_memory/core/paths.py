"""Where a data directory keeps the memory service's runtime files. Standard library only, for the
clients (the hook client itself uses the string rules of :mod:`claude_memory.core.locations`).

Everything lives inside the data directory (user-only permissions), except the socket when the data
directory's path is too long for a Unix socket address (about 107 bytes): then it goes to a per-user
directory under the system's temporary directory, named after a hash of the data directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_memory.core import locations


def default_data_dir() -> Path:
    """``$CLAUDE_MEMORY_HOME``, else the platform's per-user data directory (the rule is
    :func:`claude_memory.core.locations.default_data_dir`)."""
    return Path(locations.default_data_dir())


def lock_held(path: Path) -> bool:
    """True while some process holds the ``flock`` on ``path`` (the service's owner lock)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (mode 0700) if needed, and refuse one that another user owns or others can write:
    whoever controls the socket's directory could put their own socket in our place."""
    import stat

    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise PermissionError(f"{path} is not a private directory of this user, so no socket is used there.")


class RuntimePaths:
    """The runtime files of one data directory. (A plain class: dataclasses costs the hook client a few
    milliseconds of imports.)"""

    __slots__ = ("data_dir",)

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def __repr__(self) -> str:
        return f"RuntimePaths({self.data_dir!r})"

    @property
    def socket(self) -> Path:
        direct = locations.direct_socket(str(self.data_dir))
        if direct is not None:
            return Path(direct)
        import hashlib
        import tempfile

        digest = hashlib.sha256(os.fsencode(str(self.data_dir.resolve()))).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"claude-memory-{os.getuid()}" / f"{digest}.sock"

    @property
    def lock(self) -> Path:
        """Held (flock) by the running memory service (a CLI run without a service opens the store
        directly and does not take it; DuckDB's own lock then keeps a starting service waiting)."""
        return self.data_dir / "service.lock"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / locations.LOG_DIR

    @property
    def spool_dir(self) -> Path:
        """Hook captures waiting for the service: ``hooks.jsonl`` plus batches being drained."""
        return self.data_dir / "spool"

    @property
    def spool(self) -> Path:
        return self.spool_dir / "hooks.jsonl"

    @property
    def spool_lock(self) -> Path:
        return self.spool_dir / "hooks.lock"
