"""Workspace folders → memory projects. A folder's project is its path normalised the way the importer
normalises a session's cwd (the nearest directory holding ``.git``, else the path itself), so a folder
opened inside a repository maps to the repository's sessions."""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import unquote, urlparse

from claude_memory.service.projects import ProjectResolver


def uri_to_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI (None for other schemes: untitled buffers, git views...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if parsed.netloc and parsed.netloc != "localhost":
        path = f"//{parsed.netloc}{path}"
    return os.path.normpath(path) if path else None


class WorkspaceProjects:
    """The workspace's folders (in the order the editor gave them) and their projects."""

    def __init__(self) -> None:
        self._resolve = ProjectResolver()
        self.folders: tuple[str, ...] = ()

    def set_folders(self, uris: Iterable[str]) -> None:
        paths = (uri_to_path(u) for u in uris)
        self.folders = tuple(dict.fromkeys(p for p in paths if p))

    def project_of_folder(self, folder: str) -> str:
        return self._resolve(folder)

    def projects(self) -> list[dict[str, str]]:
        return [{"folder": f, "project": self.project_of_folder(f)} for f in self.folders]

    def default(self) -> str | None:
        """The project of the first workspace folder (None without folders: no scope)."""
        return self.project_of_folder(self.folders[0]) if self.folders else None

    def folder_of(self, path: str) -> str | None:
        """The innermost workspace folder holding ``path``."""
        best: str | None = None
        for folder in self.folders:
            inside = path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
            if inside and (best is None or len(folder) > len(best)):
                best = folder
        return best

    def project_of(self, path: str) -> str | None:
        """The project a file belongs to: its workspace folder's, else the repository holding it (when it
        exists on this machine), else the first folder's."""
        folder = self.folder_of(path)
        if folder is not None:
            return self.project_of_folder(folder)
        parent = os.path.dirname(path)
        if os.path.isdir(parent):
            return self.project_of_folder(parent)
        return self.default()
