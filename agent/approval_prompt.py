"""The `ask` approval mode's question on the terminal: the exact command or the diff, on stderr, answered y/N.

Injected into the tools layer as `Approver.ask` (see tools/approval.py). When stdin is not a terminal
(a pipe, CI, `agent mcp serve` on stdio) nobody can answer, so it returns None and the call is refused
with a message saying to use `--approval auto` or an allow rule.
"""

from __future__ import annotations

import sys
from typing import IO

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from tools.approval import ApprovalRequest


class TerminalApproval:
    """`ask(request) -> True (yes) | False (no) | None (no terminal to ask on)`."""

    def __init__(self, console: Console | None = None, stdin: IO[str] | None = None, events=None):
        self.console = console or Console(stderr=True)
        self.stdin = stdin
        self.events = events  # AgentEvents: on_note stops the live reply display before the question

    def __call__(self, request: ApprovalRequest) -> bool | None:
        stdin = self.stdin if self.stdin is not None else sys.stdin
        try:
            interactive = stdin is not None and stdin.isatty()
        except (ValueError, OSError):  # closed stream
            interactive = False
        if not interactive:
            return None
        if self.events is not None:
            self.events.on_note(f"approval needed for {request.tool}")
        lexer = "bash" if request.tool == "bash" else "diff" if request.tool in ("write_file", "edit_file") else "json"
        title = ("[bold red]destructive[/bold red] " if request.destructive else "") + f"[bold]{request.tool}[/bold]"
        self.console.print(Panel(Syntax(request.preview, lexer, word_wrap=True, background_color="default"),
                                 title=title, subtitle=Text(request.reason), title_align="left"))
        self.console.print("Allow it? [y/N] ", end="", markup=False, highlight=False)
        try:
            answer = stdin.readline()
        except (OSError, ValueError):
            return None
        if not answer:  # end of input
            self.console.print()
            return False
        return answer.strip().lower() in ("y", "yes")
