"""Where things live, and the user's settings (parsed once at the boundary)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from claude_memory.core import paths
from claude_memory.core.privacy import PrivacySettings

APP_NAME = "claude-memory"
SETTINGS_FILE = "settings.json"
OFFLINE_ENV = "CLAUDE_MEMORY_OFFLINE"


def default_data_dir() -> Path:
    """``$CLAUDE_MEMORY_HOME``, else the platform's user data directory. The rule lives in core.paths
    (standard library only, for the hook client); a test checks it against platformdirs."""
    return paths.default_data_dir()


def claude_home(explicit: Path | None = None) -> Path:
    """Claude Code's configuration directory: --claude-home, else $CLAUDE_CONFIG_DIR, else ~/.claude."""
    if explicit is not None:
        return explicit.expanduser()
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        # Claude Code treats it as one directory; tools like ccusage also accept a comma-separated list.
        return Path(env.split(",")[0]).expanduser()
    return Path.home() / ".claude"


class PrivacyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    private_formats: list[str] = Field(default_factory=lambda: ["xml"])
    marker: str = "[PRIVATE]"
    secret_marker: str = "[REDACTED]"
    custom_patterns: list[str] = Field(default_factory=list)

    def settings(self) -> PrivacySettings:
        formats = tuple(f for f in self.private_formats if f in ("xml", "bracket", "comment")) or ("xml",)
        return PrivacySettings(
            private_formats=formats,
            marker=self.marker,
            secret_marker=self.secret_marker,
            custom_patterns=tuple(self.custom_patterns),
        )


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)
    max_tool_output_chars: int = Field(default=20_000, ge=1_000, le=1_000_000)
    max_line_mb: int = Field(default=16, ge=1, le=1024)
    embedding_model_path: Path | None = None  # a local ONNX model folder; else $CLAUDE_MEMORY_MODEL_PATH
    # Embed with an int8 copy of the downloaded model (made locally): ~2x faster, recall within 0.5 point
    # (docs/architecture.md). A store keeps the precision its vectors were made with.
    embedding_int8: bool = True
    # Never use the network (the embedding model is not downloaded); $CLAUDE_MEMORY_OFFLINE=1 or $HF_HUB_OFFLINE=1 too.
    offline: bool = False

    @property
    def is_offline(self) -> bool:
        """The setting, or $CLAUDE_MEMORY_OFFLINE, or the model hub's own $HF_HUB_OFFLINE."""
        return self.offline or any(
            os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
            for name in (OFFLINE_ENV, "HF_HUB_OFFLINE")
        )


def load_settings(data_dir: Path) -> tuple[Settings, str | None]:
    """Settings from ``<data_dir>/settings.json``. A bad file falls back to the defaults, and the
    second value says why in one sentence (the caller shows it)."""
    path = data_dir / SETTINGS_FILE
    if not path.exists():
        return Settings(), None
    try:
        return Settings.model_validate(json.loads(path.read_text(encoding="utf-8"))), None
    except (OSError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Settings(), f"Ignoring {path} and using default settings: {first}"
