"""Entry point of the plugin's hooks (run by hooks/claude-memory-hook with ``python -S``): the hook
client from this checkout's ``server/`` directory. Standard library only; always exits 0."""

import os
import sys

try:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "server"))
    from claude_memory.hooks.client import main
except Exception:  # a broken install must not break Claude Code
    sys.exit(0)
sys.exit(main())
