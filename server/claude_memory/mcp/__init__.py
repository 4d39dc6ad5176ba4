"""The MCP face: :mod:`claude_memory.mcp.server` (tools over the memory service) and :mod:`claude_memory.mcp.text`
(what each tool answers, as text)."""
