"""Model and tool text on the terminal: shown as the characters it is, never as markup or terminal control.

Rich reads `[...]` as markup (a `[/a-z]+(` regex in a reply ended a run with MarkupError) and passes escape
sequences through to the terminal (a command could hide or rewrite what is shown). `plain` builds a Text that
is neither: control characters become visible `\\x1b`-style escapes."""

from __future__ import annotations

import re

from rich.text import Text

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides that reorder a line.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every control character written out as an escape (`\\x1b`, `\\u202e`)."""
    return CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def plain(text: str, style: str = "") -> Text:
    """A Text that prints `text` as it is (no markup), in `style`."""
    return Text(visible(text), style=style)
