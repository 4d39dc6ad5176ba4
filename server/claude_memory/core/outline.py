"""A simple outline of source code: where functions, methods and classes start and end, by their definition lines
and indentation, for languages whose definitions start a line (Python, JavaScript/TypeScript, Go, Rust, Java,
Kotlin, C#, Ruby, Elixir, PHP, Swift...). Not a parser: the code lenses need only a line range per definition.
Pure: no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_DEFINITION: Final = re.compile(
    r"""^(?P<indent>[ \t]*)
    (?:(?:export|default|public|private|protected|internal|static|async|final|abstract|override|open|pub(?:\([^)]*\))?|
          unsafe|inline|suspend|sealed|data|partial|virtual)\s+)*
    (?:
      (?:def|defp|defmodule|class|interface|trait|struct|enum|impl|module|fn|func|function\*?|fun|object|record)\s+
      (?P<name>[A-Za-z_$][\w$.]*(?:::[\w$]+)*)
    | (?:const|let|var)\s+(?P<arrow>[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?
      (?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=>
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    start: int  # 1-based first line (the definition line)
    end: int  # 1-based last line of its body (before the next definition at its level or outside it)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def definitions(lines: list[str]) -> list[Definition]:
    """The definitions in ``lines``, in order; a definition ends where a later non-blank line is indented no more
    than it (the next definition, a closing brace, or the end of the file)."""
    found: list[tuple[int, int, str]] = []  # (index, indent, name)
    for i, line in enumerate(lines):
        match = _DEFINITION.match(line)
        if match:
            found.append((i, _indent(line), match.group("name") or match.group("arrow") or "?"))
    out = []
    for i, indent, name in found:
        end = len(lines) - 1
        for j in range(i + 1, len(lines)):
            text = lines[j]
            if text.strip() and _indent(text) <= indent:
                # a closing brace or "end" at the definition's own level belongs to it
                closes = _indent(text) == indent and text.strip() in ("}", "};", "end", "})", "});")
                end = j if closes else j - 1
                break
        while end > i and not lines[end].strip():
            end -= 1
        out.append(Definition(name, i + 1, end + 1))
    return out
