"""What a person is shown before approving (each tool's `preview`: the exact command, or the diff), with nothing hidden.

A command must not be able to hide itself from the person approving it: escape sequences (which a terminal
would interpret), other control characters, bidi overrides (which reorder what is shown) and zero-width or
unusual space characters are shown as visible escapes (`\\x1b`, `\\u202e`), never passed through.
"""

from __future__ import annotations

import unicodedata

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
