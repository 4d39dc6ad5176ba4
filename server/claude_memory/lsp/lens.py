"""``textDocument/codeLens``: at the top of a file that past sessions touched, "N memories · last touched
<date>", whose command (``claudeMemory.fileHistory``) opens the file's timeline; and above each function or class
Claude wrote lines of, "Claude: N edits in M sessions · last <date>" (:mod:`claude_memory.lsp.provenance`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from claude_memory.lsp import markdown, provenance
from claude_memory.lsp.projects import uri_to_path
from claude_memory.lsp.protocol import FILE_HISTORY
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.lsp.server import MemoryLanguageServer

TOP = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


async def code_lens(ls: MemoryLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    path = uri_to_path(uri)
    if not ls.settings.code_lens or path is None:
        return []
    try:
        summary = await ls.call("file_summary", {"paths": [path]})
    except OpError as exc:
        ls.service_problem(exc)
        return []
    ls.service_ok()
    item = summary.get(path) or {}
    count = int(item.get("count") or 0)
    if count == 0:
        return []
    command = types.Command(
        title=markdown.lens_title(count, item.get("last_ts")),
        command=FILE_HISTORY,
        arguments=[{"uri": uri}],
    )
    found = [types.CodeLens(range=TOP, command=command)]
    return found + (await provenance.lenses(ls, uri) if ls.settings.code_lens_provenance else [])
