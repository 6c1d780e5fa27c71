"""Griffe extension: show docstring examples (`>>>` lines) as Python console code.

The package's docstrings carry doctests that pytest runs. Where an example sits at
the same indentation as the prose around it, Markdown would read it as a
paragraph; this wraps each such block in a ```pycon fence. Examples indented
under their prose are already Markdown code blocks and are left as they are. An
example written at the item level of a Google section ("Raises:") would be read as
an item; it is moved out to the section's own level, after it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_PROMPT = ">>>"
_SECTION = re.compile(
    r"^( *)(Args|Arguments|Parameters|Returns|Yields|Raises|Attributes|Warns):\s*$"
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def fence_doctests(text: str) -> str:
    """Wrap every prose-level block of `>>>` lines (until a blank line) in a fence."""
    lines = text.splitlines()
    out: list[str] = []
    prose = 0  # indentation of the last non-blank line outside an example
    section: int | None = None  # indentation of the enclosing section's title
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(_PROMPT) and _indent(line) <= prose:
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            block = lines[i:end]
            if section is not None and _indent(line) == section + 4:
                block = [b[4:] for b in block]  # out of the section, after it
            pad = " " * _indent(block[0])
            if out and out[-1].strip():
                out.append("")
            out.append(f"{pad}```pycon")
            out.extend(block)
            out.append(f"{pad}```")
            i = end
            continue
        if line.strip() and not line.lstrip().startswith(_PROMPT):
            prose = _indent(line)
            title = _SECTION.match(line)
            if title:
                section = len(title[1])
            elif section is not None and prose <= section:
                section = None
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence prose-level doctest blocks in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and _PROMPT in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
