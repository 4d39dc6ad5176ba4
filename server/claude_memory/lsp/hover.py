"""``textDocument/hover``: (a) on a ``mem:XXXXXX`` citation in any document, the memory it names with its
source; (b) on code, on a line Claude wrote, which conversation wrote it and why (:mod:`claude_memory.lsp.provenance`),
then what past sessions read, edited or said about this file and the symbol under the cursor, newest first, with
citations; nothing (null) when there is nothing to say.

Code hovers are cached per (file, symbol, project) with the store generation they were computed at: each
hover asks the service's ``file_history`` with that generation, and the service answers ``unchanged``
(about 1 ms) until the store changes, so a repeated hover costs one small round trip."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from claude_memory.lsp import markdown, provenance
from claude_memory.lsp.hover_cache import CachedHover
from claude_memory.lsp.projects import uri_to_path
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.lsp.server import MemoryLanguageServer

log = logging.getLogger("claude_memory.lsp")


def _range(line_no: int, line: str, start: int, end: int, units: Any) -> types.Range:
    """A range on one line from code-point columns to the client's units (UTF-16 by default)."""
    return types.Range(
        start=types.Position(line=line_no, character=units(line[:start])),
        end=types.Position(line=line_no, character=units(line[:end])),
    )


def _hover(value: str, rng: types.Range | None) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value), range=rng)


async def hover(ls: MemoryLanguageServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    lines = document.lines
    line_no = params.position.line
    if line_no >= len(lines):
        return None
    line = lines[line_no].rstrip("\r\n")
    codec = document.position_codec
    where = codec.position_from_client_units(lines, types.Position(line=line_no, character=params.position.character))
    column = where.character
    settings = ls.settings
    if settings.hover_citations and (found := markdown.citation_at(line, column)) is not None:
        citation, start, end = found
        text = await citation_markdown(ls, citation)
        return _hover(text, _range(line_no, line, start, end, codec.client_num_units)) if text else None
    if not settings.hover_code:
        return None
    path = uri_to_path(uri)
    if path is None:
        return None
    written = await provenance.line_markdown(ls, uri, document, line_no) if settings.hover_provenance else None
    word = markdown.word_at(line, column)
    if word is None:
        return _hover(written, None) if written else None
    name, start, end = word
    text = await code_markdown(ls, path, markdown.symbol_of(name))
    text = "\n\n---\n\n".join(t for t in (written, text) if t)
    return _hover(text, _range(line_no, line, start, end, codec.client_num_units)) if text else None


async def citation_markdown(ls: MemoryLanguageServer, citation: str) -> str | None:
    try:
        found = await ls.call("details", {"refs": [citation], "context": 0, "via": "lsp"})
    except OpError as exc:
        ls.service_problem(exc)
        return None
    ls.service_ok()
    details = found.get("details") or []
    if not details:
        return markdown.missing_citation(citation)
    return markdown.citation_hover(details[0], ls.settings.hover_max_chars)


async def code_markdown(ls: MemoryLanguageServer, path: str, symbol: str | None) -> str | None:
    project = ls.workspace_projects.project_of(path)
    key = (path, symbol, project)
    cached = ls.hover_cache.get(key)
    params: dict[str, Any] = {"path": path, "symbol": symbol, "project": project, "limit": ls.settings.hover_limit}
    if cached is not None:
        params["known_generation"] = cached.generation
    try:
        history = await ls.call("file_history", params)
    except OpError as exc:
        ls.service_problem(exc)
        return None
    ls.service_ok()
    if history.get("unchanged") and cached is not None:
        ls.hover_cache.hits += 1
        return cached.markdown
    ls.hover_cache.misses += 1
    text = markdown.code_hover(path, symbol, history, ls.settings.hover_limit)
    ls.hover_cache.put(key, CachedHover(str(history.get("generation")), text))
    return text
