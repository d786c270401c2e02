"""What a person is shown before approving: the exact command or the diff, with nothing hidden.

A command must not be able to hide itself from the person approving it: escape sequences (which a terminal
would interpret), other control characters, bidi overrides (which reorder what is shown) and zero-width or
unusual space characters are shown as visible escapes (`\\x1b`, `\\u202e`), never passed through.
"""

from __future__ import annotations

import difflib
import json
import unicodedata
from pathlib import Path
from typing import Any

MAX_PREVIEW_LINES = 200
# Cc controls, Cf format (bidi, zero-width, soft hyphen), Zl/Zp separators, Co private use, Cs surrogates,
# Cn unassigned; Zs spaces other than the plain one
HIDDEN_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn", "Zs"}
SHOWN_AS_IS = {"\n", "\t", " "}


def is_hidden(char: str) -> bool:
    return char not in SHOWN_AS_IS and (unicodedata.category(char) in HIDDEN_CATEGORIES or char == "\x7f")


def escape_char(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible_parts(text: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, escaped) parts: escaped parts are the visible form of hidden characters."""
    parts: list[tuple[str, bool]] = []
    plain: list[str] = []
    for char in text:
        if is_hidden(char):
            if plain:
                parts.append(("".join(plain), False))
                plain = []
            parts.append((escape_char(char), True))
        else:
            plain.append(char)
    if plain:
        parts.append(("".join(plain), False))
    return parts


def visible(text: str) -> str:
    """`text` with every hidden character written as a visible escape."""
    return "".join(piece for piece, _ in visible_parts(text))


def preview(tool: str, arguments: dict[str, Any], workspace: Path) -> str:
    """The exact command, or the diff a write or edit would make (as is: the prompt makes it visible)."""
    if tool == "bash" and isinstance(arguments.get("command"), str):
        return arguments["command"]
    path = arguments.get("path")
    if tool in ("write_file", "edit_file") and isinstance(path, str):
        current = _current_text(workspace, path)
        if tool == "write_file":
            content = arguments.get("content")
            new = content if isinstance(content, str) else ""
        else:
            old, replacement = arguments.get("old"), arguments.get("new")
            if not (isinstance(old, str) and isinstance(replacement, str)) or current is None or current.count(old) != 1:
                return f"edit {path}: replace\n{old}\nwith\n{replacement}"
            new = current.replace(old, replacement, 1)
        diff = difflib.unified_diff((current or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                    fromfile=f"a/{path}" if current is not None else "/dev/null", tofile=f"b/{path}")
        lines = [line if line.endswith("\n") else line + "\n" for line in diff]
        if len(lines) > MAX_PREVIEW_LINES:
            lines = lines[:MAX_PREVIEW_LINES] + [f"[... {len(lines) - MAX_PREVIEW_LINES} more diff lines]\n"]
        return "".join(lines).rstrip("\n") or f"(no change to {path})"
    try:
        return f"{tool} {json.dumps(arguments, ensure_ascii=False, default=str)[:4000]}"
    except (TypeError, ValueError):
        return f"{tool} {arguments!r}"[:4000]


def _current_text(workspace: Path, path: str) -> str | None:
    from tools.base import ToolError
    from tools.files import read_text
    from tools.workspace import resolve_inside

    try:
        resolved = resolve_inside(workspace, path)
        return read_text(resolved, path) if resolved.is_file() else None
    except (ToolError, OSError, ValueError):
        return None
