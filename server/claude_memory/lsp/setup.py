"""Building the language server: the server class (:mod:`claude_memory.lsp.server`) plus its features, each
registered here, so that the server module never imports a feature (and no feature imports it at run
time)."""

from __future__ import annotations

from lsprotocol import types

from claude_memory.lsp import commands, hover, lens, provenance
from claude_memory.lsp.server import MemoryLanguageServer, ServerOptions


def build_server(options: ServerOptions) -> MemoryLanguageServer:
    server = MemoryLanguageServer(options)

    @server.feature(types.INITIALIZE)
    def initialize(ls: MemoryLanguageServer, params: types.InitializeParams) -> None:
        ls.apply_initialization(params.initialization_options)
        ls.refresh_folders()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemoryLanguageServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()
        await provenance.watch_workspace(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def changed_files(ls: MemoryLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        provenance.files_changed(ls, [change.uri for change in params.changes])

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def saved(ls: MemoryLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        provenance.files_changed(ls, [params.text_document.uri])

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed_configuration(ls: MemoryLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        workspace = ls.client_capabilities.workspace
        if workspace and workspace.configuration:
            await ls.pull_configuration()
        else:
            ls.apply_configuration(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def changed_folders(ls: MemoryLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.refresh_folders()
        ls.hover_cache.clear()

    server.feature(types.TEXT_DOCUMENT_HOVER)(hover.hover)
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(lens.code_lens)
    commands.register(server)
    return server


def run(options: ServerOptions, *, tcp: tuple[str, int] | None = None) -> None:
    """Serve on stdin/stdout (or on a loopback TCP port, for debugging) until the client exits."""
    server = build_server(options)
    if tcp is not None:
        server.start_tcp(*tcp)
    else:
        server.start_io()
