"""Where a data directory and its service socket are, as plain strings (``os.path`` only).

The hook client imports this for every hook Claude Code runs, and must start in a few milliseconds:
pathlib alone would cost it about 5 ms. Everything else uses :mod:`claude_memory.core.paths`, which wraps
these rules in ``Path`` objects.
"""

import os
import sys

APP_NAME = "claude-memory"
SOCKET_NAME = "service.sock"
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS; keep a margin
LOG_DIR = "logs"
HOOK_LOG = "hooks.log"  # in LOG_DIR
DB_FILE = "memory.duckdb"
DAMAGED_RECORD = "store-damaged"  # written by a service that found the store damaged


def store_damaged(data_dir: str) -> "str | None":
    """The sentence a memory service recorded when it found the store damaged, as long as the store file is
    still the one it found so (same size and modification time); else None. Clients then start no service
    (it would only fail again: every hook would wait for it) until ``claude-memory repair`` replaces it."""
    try:
        with open(os.path.join(data_dir, DAMAGED_RECORD), encoding="utf-8") as fh:
            stamp, sentence = fh.readline().strip(), fh.readline().strip()
        st = os.stat(os.path.join(data_dir, DB_FILE))
    except (OSError, ValueError):
        return None
    return sentence if stamp == f"{st.st_size} {st.st_mtime_ns}" else None


def record_damaged(data_dir: str, sentence: str) -> None:
    """Remember that the store file, as it is now, cannot be read (see :func:`store_damaged`)."""
    try:
        st = os.stat(os.path.join(data_dir, DB_FILE))
        fd = os.open(os.path.join(data_dir, DAMAGED_RECORD), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{st.st_size} {st.st_mtime_ns}\n{' '.join(sentence.split())}\n")
    except OSError:
        pass  # the service fails anyway, and says why in its log


def clear_damaged(data_dir: str) -> None:
    try:  # noqa: SIM105 - contextlib costs the hook client an import
        os.unlink(os.path.join(data_dir, DAMAGED_RECORD))
    except OSError:
        pass


def default_data_dir() -> str:
    """``$CLAUDE_MEMORY_HOME``, else the platform's per-user data directory (as platformdirs computes it:
    ``$XDG_DATA_HOME/claude-memory`` or ``~/.local/share/claude-memory`` on Linux,
    ``~/Library/Application Support/claude-memory`` on macOS)."""
    env = os.environ.get("CLAUDE_MEMORY_HOME")
    if env:
        return os.path.expanduser(env)
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP_NAME)
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(home, ".local", "share")
    return os.path.join(base, APP_NAME)


def direct_socket(data_dir: str) -> str | None:
    """The service socket inside ``data_dir``, or None when that path is too long for a Unix socket
    address (then :attr:`claude_memory.core.paths.RuntimePaths.socket` puts it in a temp directory)."""
    path = os.path.join(data_dir, SOCKET_NAME)
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None
