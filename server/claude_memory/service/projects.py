"""Project identity: a session's cwd, normalised to its git root when that path exists here."""

from __future__ import annotations

import os


def git_root_or_self(cwd: str) -> str:
    """The nearest directory at or above ``cwd`` holding ``.git`` (a repo or a worktree), if ``cwd``
    exists on this machine; otherwise ``cwd`` itself, normalised."""
    path = os.path.normpath(cwd)
    if not os.path.isdir(path):
        return path
    probe = path
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return path
        probe = parent


def normalise_project_arg(path: str) -> str:
    """What a user passes as --project, resolved like a cwd (relative paths against the current dir)."""
    return git_root_or_self(os.path.abspath(os.path.expanduser(path)))


class ProjectResolver:
    """Caches cwd -> project for one import run (a run sees thousands of lines with the same cwd)."""

    def __init__(self) -> None:
        self._cache: dict[str, str] = {}

    def __call__(self, cwd: str) -> str:
        project = self._cache.get(cwd)
        if project is None:
            project = self._cache[cwd] = git_root_or_self(cwd)
        return project
