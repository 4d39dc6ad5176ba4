"""The editor face: a language server (pygls) over the memory service. See docs/lsp.md.

:mod:`claude_memory.lsp.protocol` (command names and argument models) imports no pygls, so other tools
(the VS Code extension's tests) can read the command list cheaply."""
