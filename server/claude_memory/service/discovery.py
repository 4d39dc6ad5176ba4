"""Find Claude Code transcripts under a Claude home directory."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_ENCODE = re.compile(r"[^A-Za-z0-9]")
_MAX_ENCODED = 200


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    path: Path
    session_id: str  # from the file name; lines carry their own sessionId too
    agent_id: str | None = None  # set for subagent transcripts
    agent_type: str | None = None
    description: str | None = None


@dataclass
class Discovery:
    files: list[TranscriptFile]
    skipped: dict[str, int]  # reason -> count of files not read


def encode_project_dir(path: str) -> str:
    """Claude Code's folder name for a cwd: every character outside [A-Za-z0-9] becomes '-'."""
    return _ENCODE.sub("-", path)


def _folder_matches(folder: str, project: str) -> bool:
    encoded = encode_project_dir(project)
    if len(encoded) > _MAX_ENCODED:
        # Claude Code truncates long names and appends a hash that differs between its builds.
        return folder.startswith(encoded[:_MAX_ENCODED])
    return folder == encoded or folder.startswith(encoded + "-")


def _read_meta(meta_path: Path) -> tuple[str | None, str | None]:
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(meta, dict):
        return None, None
    agent_type = meta.get("agentType")
    description = meta.get("description")
    return (
        agent_type if isinstance(agent_type, str) else None,
        description if isinstance(description, str) else None,
    )


def discover(home: Path, project: str | None = None) -> Discovery:
    """Every main and subagent transcript under ``home/projects`` (or ``home`` itself if it is a
    projects folder), sorted by path so runs are deterministic. ``project`` keeps only the folders of
    that project and its subdirectories."""
    root = home / "projects" if (home / "projects").is_dir() else home
    files: list[TranscriptFile] = []
    skipped: dict[str, int] = {}
    if not root.is_dir():
        return Discovery(files, skipped)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name == "memory" or (project is not None and not _folder_matches(folder.name, project)):
            continue
        for path in sorted(folder.rglob("*.jsonl")):
            if not path.is_file():
                skipped["not a regular file"] = skipped.get("not a regular file", 0) + 1
                continue
            rel = path.relative_to(folder).parts
            if len(rel) == 1:
                files.append(TranscriptFile(path, path.stem))
            elif len(rel) == 3 and rel[1] == "subagents" and path.stem.startswith("agent-"):
                agent_id = path.stem.removeprefix("agent-")
                if agent_id.startswith("acompact-"):
                    # The compaction summariser re-reads the conversation; its summary is already
                    # recorded in the main transcript as a compact_summary event.
                    skipped["compaction summariser transcript"] = skipped.get("compaction summariser transcript", 0) + 1
                    continue
                agent_type, description = _read_meta(path.with_suffix(".meta.json"))
                files.append(TranscriptFile(path, rel[0], agent_id, agent_type, description))
            else:
                skipped["not a session transcript"] = skipped.get("not a session transcript", 0) + 1
    return Discovery(files, skipped)


def transcript_file(path: Path) -> TranscriptFile | None:
    """The transcript at ``path`` as discovery would list it (main or subagent), or None if it is not one
    (not a .jsonl file, or the compaction summariser's copy)."""
    if path.suffix != ".jsonl":
        return None
    if path.parent.name == "subagents" and path.stem.startswith("agent-"):
        agent_id = path.stem.removeprefix("agent-")
        if agent_id.startswith("acompact-"):
            return None
        agent_type, description = _read_meta(path.with_suffix(".meta.json"))
        return TranscriptFile(path, path.parent.parent.name, agent_id, agent_type, description)
    return TranscriptFile(path, path.stem)
