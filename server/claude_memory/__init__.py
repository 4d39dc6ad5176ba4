"""claude-memory-layer: long-term memory for Claude Code."""


def __getattr__(name: str) -> str:
    # Lazy, so that the hook client (which imports this package for every prompt) does not pay for
    # importlib.metadata.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("claude-memory-layer")
        except PackageNotFoundError:  # running from a source tree without installing
            return "0.0.0+source"
    raise AttributeError(name)
