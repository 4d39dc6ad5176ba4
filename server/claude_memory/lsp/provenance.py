"""Line provenance in the editor: which conversation wrote a line (hover), how much of each function Claude wrote
(code lenses), and the commands ``claudeMemory.blame`` / ``claudeMemory.why`` (the VS Code extension's line
annotation and its "Why is this code like this?" document).

The file is always blamed as the editor holds it: the open document's text (pygls follows didOpen / didChange /
didClose), else the file on disk. A blame is kept per document version for a few seconds, so hovers and lenses on
an unchanged buffer cost nothing; the service keeps its own per content hash and per state of the file's edit
records, so a new edit by Claude shows at the next look. File changes the client reports
(``workspace/didChangeWatchedFiles``, registered when the client can) and saves drop the kept blame and ask the
client to refresh its lenses.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from claude_memory import wire
from claude_memory.core import why
from claude_memory.core.outline import definitions
from claude_memory.lsp.projects import uri_to_path
from claude_memory.lsp.protocol import TIMELINE
from claude_memory.wire import OpError

log = logging.getLogger("claude_memory.lsp")
WATCH_ID = "claude-memory-watch-files"

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from claude_memory.lsp.server import MemoryLanguageServer


async def blame_of(ls: MemoryLanguageServer, uri: str, document: TextDocument | None = None) -> dict[str, Any] | None:
    """The blame of the document as the editor holds it; None for a non-file URI or when the service fails."""
    path = uri_to_path(uri)
    if path is None:
        return None
    document = document or ls.workspace.get_text_document(uri)
    try:
        source = document.source
    except OSError:
        return None  # not open, and not readable on disk
    found = ls.blame_cache.get(uri, document.version, source)
    if found is not None:
        return found
    try:
        answer: dict[str, Any] = await ls.call("blame", {"path": path, "text": source})
    except OpError as exc:
        ls.service_problem(exc)
        return None
    ls.service_ok()
    ls.blame_cache.put(uri, document.version, source, answer)
    return answer


async def watch_workspace(ls: MemoryLanguageServer) -> None:
    """Ask the client to report file changes in the workspace (``workspace/didChangeWatchedFiles``), when it can
    register that dynamically: a file Claude or a person changes on disk is blamed afresh."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern="**/*")])
    registration = types.Registration(
        id=WATCH_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # the client refused: hovers still read the disk when the document is not open
        log.info("The client did not register file watching (%s).", exc)


def files_changed(ls: MemoryLanguageServer, uris: list[str]) -> None:
    """Files changed on disk or were saved: their blames are made again, and the client asked to refresh its code
    lenses (the new text, or new edit records, may move them)."""
    for uri in uris:
        ls.blame_cache.drop(uri)
    workspace = ls.client_capabilities.workspace
    lens = workspace.code_lens if workspace else None
    if uris and lens and lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


async def line_markdown(ls: MemoryLanguageServer, uri: str, document: TextDocument, line_no: int) -> str | None:
    """The hover for a line Claude wrote (0-based ``line_no``), or None."""
    blame = await blame_of(ls, uri, document)
    return why.line_hover(blame, line_no + 1) if blame else None


async def lenses(ls: MemoryLanguageServer, uri: str) -> list[types.CodeLens]:
    """Per function or class Claude wrote lines of: "Claude: N edits in M sessions · last <date>", opening the
    timeline of those edits."""
    document = ls.workspace.get_text_document(uri)
    blame = await blame_of(ls, uri, document)
    if not blame or not blame["claude_lines"]:
        return []
    edits = why.edits_by_id(blame)
    out = []
    for d in definitions([line.rstrip("\r\n") for line in document.lines]):
        mine = {r["edit"] for r in why.overlapping(blame, d.start, d.end) if r["edit"] is not None}
        if not mine:
            continue
        found = [edits[i] for i in mine]
        sessions = len({e["session_id"] for e in found})
        last = max((e["timestamp"] or "" for e in found), default="")[:10]
        title = f"Claude: {len(found)} edit{'s' if len(found) != 1 else ''} in {sessions} session"
        title += f"{'s' if sessions != 1 else ''}" + (f" · last {last}" if last else "")
        refs = [e["citation"] for e in sorted(found, key=lambda e: e["timestamp"] or "") if e["citation"]]
        command = types.Command(
            title=title, command=TIMELINE, arguments=[{"refs": refs[-20:], "before": 1, "after": 1}]
        )
        at = types.Position(line=d.start - 1, character=0)
        out.append(types.CodeLens(range=types.Range(start=at, end=at), command=command))
    return out


async def why_document(ls: MemoryLanguageServer, uri: str, start: int, end: int | None) -> dict[str, Any]:
    """``claudeMemory.why``: the Markdown story of lines ``start``..``end`` (1-based), with the blame behind it."""
    blame = await blame_of(ls, uri)
    if blame is None:
        raise OpError(wire.UNAVAILABLE, "The file could not be blamed (not a file, or the memory service failed).")
    end = end or start
    return {
        "markdown": why.why_markdown(blame, start, end),
        "path": blame["path"],
        "ranges": why.overlapping(blame, start, end),
        "edits": blame["edits"],
    }
