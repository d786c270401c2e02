"""The `ask` approval mode's question on the terminal: the exact command or the diff, on stderr, answered y/N.

Injected into the tools layer as `Approver.ask` (see tools/approval/). When stdin is not a terminal
(a pipe, CI, `agent mcp serve` on stdio) nobody can answer, so it returns None and the call is refused
with a message saying to use `--approval auto` or an allow rule.

What is shown is what would run: hidden characters (escape sequences, other controls, bidi overrides,
zero-width characters) are printed as visible escapes in reverse video, never sent to the terminal, and
model text is never read as Rich markup.
"""

from __future__ import annotations

import sys
from typing import IO

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from tools.approval import ApprovalRequest
from tools.preview import visible, visible_parts

ESCAPED_STYLE = "reverse bold red"


class TerminalApproval:
    """`ask(request) -> True (yes) | False (no) | None (no terminal to ask on)`."""

    def __init__(
        self, console: Console | None = None, stdin: IO[str] | None = None, events=None, session_always: bool = False
    ):
        self.console = console or Console(stderr=True)
        self.stdin = stdin
        self.events = events  # AgentEvents: on_note stops the live reply display before the question
        # `agent chat`: a third answer, "always", allows the same again for the rest of the session (the exact
        # command for a tool that runs one, the tool for any other)
        self.always: set[tuple[str, str]] | None = set() if session_always else None

    def __call__(self, request: ApprovalRequest) -> bool | None:
        stdin = self.stdin if self.stdin is not None else sys.stdin
        try:
            interactive = stdin is not None and stdin.isatty()
        except (ValueError, OSError):  # closed stream
            interactive = False
        if not interactive:
            return None
        key = (request.tool, request.command or "")
        if self.always is not None and key in self.always:
            return True
        if self.events is not None:
            self.events.on_note(f"approval needed for {visible(request.tool)}")
        self.console.print(
            Panel(shown(request), title=_title(request), subtitle=Text(visible(request.reason)), title_align="left")
        )
        question = "Allow it? [y/N/a: always, this session] " if self.always is not None else "Allow it? [y/N] "
        self.console.print(question, end="", markup=False, highlight=False)
        try:
            answer = stdin.readline()
        except (OSError, ValueError):
            return None
        if not answer:  # end of input
            self.console.print()
            return False
        reply = answer.strip().lower()
        if self.always is not None and reply in ("a", "always"):
            self.always.add(key)
            return True
        return reply in ("y", "yes")


def shown(request: ApprovalRequest) -> Syntax | Text:
    """The preview, highlighted when it is plain text; with hidden characters, their escapes stand out instead."""
    parts = visible_parts(request.preview)
    if not any(escaped for _, escaped in parts):
        return Syntax(request.preview, request.preview_syntax, word_wrap=True, background_color="default")
    hidden = sum(1 for _, escaped in parts if escaped)
    text = Text()
    text.append(f"[{hidden} hidden character(s) shown escaped]\n", style="bold red")
    for piece, escaped in parts:
        text.append(piece, style=ESCAPED_STYLE if escaped else None)
    return text


def _title(request: ApprovalRequest) -> Text:
    title = Text()
    if request.destructive:
        title.append("destructive ", style="bold red")
    elif request.unchecked:
        title.append("cannot be checked ", style="bold yellow")
    title.append(visible(request.tool), style="bold")
    return title
