"""The language server's settings, section ``claudeMemory``: from ``initializationOptions`` (either
``{"claudeMemory": {...}}`` or the object itself), then ``workspace/configuration``. Parsed once per change
at the boundary; a setting that is not valid is reported in one sentence and falls back to its default
while the valid ones apply. Unknown keys are ignored (an editor sends its own settings in the section)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

SECTION: Final = "claudeMemory"


class LspSettings(BaseModel):
    model_config = ConfigDict(extra="ignore", alias_generator=to_camel, populate_by_name=True, frozen=True)

    hover_citations: bool = True  # hover on mem:XXXXXX citations in any document
    hover_code: bool = True  # hover on code: the file's and the symbol's history
    hover_limit: int = Field(default=5, ge=1, le=50)  # memories listed in a code hover
    hover_max_chars: int = Field(default=600, ge=80, le=20_000)  # memory text shown in a citation hover
    code_lens: bool = True  # "N memories · last touched <date>" at the top of files with history
    hover_provenance: bool = True  # hover on a line Claude wrote: the conversation that wrote it, and why
    code_lens_provenance: bool = True  # "Claude: N edits in M sessions" above functions Claude wrote lines of
    search_limit: int = Field(default=10, ge=1, le=100)
    search_mode: Literal["hybrid", "keyword", "semantic"] = "hybrid"
    all_projects: bool = False  # commands search every project unless told otherwise
    start_service: bool = True  # start the memory service when none answers
    start_timeout: float = Field(default=30.0, gt=0, le=600)  # seconds for a started service to answer
    request_timeout: float = Field(default=120.0, gt=0, le=3_600)  # one service request (import: longer)


def section_of(options: Any) -> dict[str, Any]:
    """The ``claudeMemory`` object inside initialization options or a configuration answer."""
    if not isinstance(options, dict):
        return {}
    inner = options.get(SECTION)
    if isinstance(inner, dict):
        return inner
    return options


def parse_settings(raw: dict[str, Any], base: LspSettings | None = None) -> tuple[LspSettings, list[str]]:
    """``raw`` applied over ``base`` (default: the defaults). Returns the settings and one sentence per
    setting that was not valid and fell back to its default."""
    start = (base or LspSettings()).model_dump(by_alias=True)
    values = {**start, **{_alias(k): v for k, v in raw.items()}}
    problems: list[str] = []
    for _ in range(len(values) + 1):
        try:
            return LspSettings.model_validate(values), problems
        except ValidationError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0]) if err.get("loc") else ""
            if key not in values:  # cannot happen with per-field errors; stay safe
                return LspSettings(), [*problems, "Ignoring the claudeMemory settings: they are not valid."]
            default = LspSettings.model_fields[_field_name(key)].default
            message = str(err.get("msg", "not valid")).rstrip(".")
            problems.append(f"Ignoring the setting {SECTION}.{key} ({message}); using the default {_show(default)}.")
            values[key] = default
    return LspSettings(), problems


def _alias(key: str) -> str:
    field = LspSettings.model_fields.get(key)
    return field.alias if field is not None and field.alias else key


def _field_name(key: str) -> str:
    for name, field in LspSettings.model_fields.items():
        if key in (name, field.alias):
            return name
    return key


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)
