"""claude-memory-layer: long-term memory for Claude Code."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("claude-memory-layer")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
