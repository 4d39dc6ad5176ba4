"""The Claude Code hook face: :mod:`claude_memory.hooks.client`, run for every hook (standard library only)."""
