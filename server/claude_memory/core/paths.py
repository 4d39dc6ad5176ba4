"""Where a data directory keeps the memory service's runtime files. Standard library only, for the
clients (the hook client itself uses the string rules of :mod:`claude_memory.core.locations`).

Everything lives inside the data directory, user-only by construction (:func:`secure_data_dir`, and the
0077 umask every process that writes there sets: :func:`private_umask`), except the socket when the data
directory's path is too long for a Unix socket address (about 107 bytes): then it goes to a per-user
directory under the system's temporary directory, named after a hash of the data directory. A temporary
directory of that name that is not this user's own, or that others may enter, is never used (anyone who
controls it could put their own socket in our place): the next candidate is used (:func:`socket_dirs`).
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


def private_umask() -> None:
    """Make every file this process creates user-only (0600 files, 0700 directories): the store's WAL, the
    logs, the spool, the vectors. Called first by every entry point that writes to a data directory."""
    os.umask(0o077)


def secure_data_dir(data_dir: Path) -> None:
    """Create ``data_dir`` user-only, or tighten it and everything in it to 0700 (directories) and 0600
    (files), whatever their modes were before; PermissionError (one sentence) when another user owns it."""
    import stat

    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = data_dir.stat()
    if st.st_uid != os.getuid():
        raise PermissionError(f"{data_dir} belongs to another user; choose a data directory of your own.")
    if stat.S_IMODE(st.st_mode) != 0o700:
        data_dir.chmod(0o700)
    for root, dirs, files in os.walk(data_dir):
        for name, wanted in [*((d, 0o700) for d in dirs), *((f, 0o600) for f in files)]:
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
                if not stat.S_ISLNK(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != wanted:
                    os.chmod(path, wanted)
            except FileNotFoundError:
                continue  # removed meanwhile (a spool batch, a rotated log)


def _is_private_dir(path: str) -> bool:
    """True if ``path`` is a real directory of this user that no one else may enter."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def socket_dirs() -> list[str]:
    """Where a socket may go when the data directory's path is too long, in order: the per-user temp
    directory ``claude-memory-<uid>``, then ``claude-memory-<uid>-1`` ... ``-8`` for when another user (or a
    careless umask) took the name first."""
    import tempfile

    base = os.path.join(tempfile.gettempdir(), f"claude-memory-{os.getuid()}")
    return [base, *(f"{base}-{n}" for n in range(1, 9))]


def socket_dir() -> tuple[Path, list[str]]:
    """The first usable socket directory (private and ours, or not there yet), and the ones refused."""
    refused: list[str] = []
    for candidate in socket_dirs():
        if not os.path.lexists(candidate) or _is_private_dir(candidate):
            return Path(candidate), refused
        refused.append(candidate)
    raise PermissionError(
        f"Every temporary socket directory ({refused[0]}-*) belongs to another user or is not private."
    )


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

        digest = hashlib.sha256(os.fsencode(str(self.data_dir.resolve()))).hexdigest()[:16]
        return socket_dir()[0] / f"{digest}.sock"

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
