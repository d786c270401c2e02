"""A chat reply on the terminal: the model's prose streams as it comes; its tool calls are shown as what they
do (a write as the file and its diff, a command as the command and its output), never as the call markup.
Everything the model, a tool or the repository wrote goes through `plain`: never markup, never control."""

from __future__ import annotations

import difflib
from pathlib import Path

import git
from rich.console import Console
from rich.syntax import Syntax

from agent.core.toolcalls import ParsedCall
from agent.git import repo as gitrepo
from agent.ui.plain import plain, visible
from agent.ui.status_line import StatusLine, reading
from inference.backends.backend import Completion
from tools.base import ToolResult

OUTPUT_LINES = 15  # of a command's output
DIFF_LINES = 60


class ChatDisplay(StatusLine):
    """AgentEvents for a chat. Prose is printed up to the first `<` of a reply (where the call markup begins);
    the calls are rendered when the step ends, before its checkpoint commit (so the diff is the step's own)."""

    def __init__(self, console: Console, workspace: Path):
        self.console, self.workspace = console, workspace
        self.buffer, self.shown, self.in_call, self.line_open = "", 0, False, False
        self.chunks = 0

    def on_prompt(self, tokens: int, cached: int) -> None:
        """The prompt's size, from a backend that knows it before the engine reads it (see ChatBackend)."""
        self.waiting(reading(tokens, cached))

    def on_text(self, text: str) -> None:
        self.buffer += text
        self.chunks += 1
        if self.in_call:
            self.waiting(f"writing the tool call ... {self.chunks} tokens")
            return
        cut = self.buffer.find("<", self.shown)
        end = len(self.buffer) if cut < 0 else cut
        if end > self.shown:
            self.quiet()
            self.console.print(plain(self.buffer[self.shown : end]), end="", highlight=False, soft_wrap=True)
            self.line_open, self.shown = True, end
        self.in_call = cut >= 0

    def on_note(self, text: str) -> None:
        self.quiet()
        self._end_line()
        self.console.print(plain(f"· {text}", "dim"), highlight=False, soft_wrap=True)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        self.quiet()
        if not results and self.in_call:  # a `<` in prose, not a call: show the rest
            self.console.print(plain(self.buffer[self.shown :]), end="", highlight=False, soft_wrap=True)
        self._end_line()
        for call, result in results:
            self.show_call(call, result)
        self.buffer, self.shown, self.in_call, self.chunks = "", 0, False, 0
        if not any(call.name == "finish" and not result.is_error for call, result in results):
            self.waiting("reading the results ...")  # the next model turn reads them first

    def show_call(self, call: ParsedCall, result: ToolResult) -> None:
        args = call.arguments
        if call.name == "finish" and not result.is_error:
            self.console.print(plain(str(args.get("summary", "")).strip(), "bold"), highlight=False, soft_wrap=True)
            return
        if call.name in ("write_file", "edit_file"):
            paths = result.files or [str(args.get("path") or "")]  # an edit_file without a path: each file
            self.console.print(plain(f"✎ {', '.join(paths)}", "bold cyan"), highlight=False)  # one style: one run
            for path in result.files:
                self._diff(path)
        elif call.name == "bash":
            self.console.print(plain(f"$ {args.get('command', '')}", "bold green"), highlight=False)
            if not result.is_error:
                self.console.print(plain(_tail(result.output, OUTPUT_LINES), "dim"), highlight=False, soft_wrap=True)
        else:
            shown = ", ".join(f"{k}={v}" for k, v in args.items())
            self.console.print(plain(f"· {call.name} {shown[:120]}", "dim"), highlight=False, soft_wrap=True)
        if result.is_error:
            self.console.print(plain(f"  ✗ {_tail(result.output, 6)}", "red"), highlight=False, soft_wrap=True)

    def _diff(self, path: str) -> None:
        try:
            repo = gitrepo.open_repo(self.workspace)
            text = gitrepo.diff(repo, "HEAD", "--", path)
            if not text and path not in repo.git.ls_files("--", path).splitlines():  # a new file: all added
                lines = (self.workspace / path).read_text(encoding="utf-8", errors="replace").splitlines()
                text = "\n".join(difflib.unified_diff([], lines, "/dev/null", f"b/{path}", lineterm=""))
        except (OSError, git.GitCommandError, gitrepo.RepoError):
            return
        lines = text.splitlines()
        shown = "\n".join(lines[:DIFF_LINES]) + (
            f"\n... {len(lines) - DIFF_LINES} more lines" if len(lines) > DIFF_LINES else ""
        )
        if shown.strip():
            self.console.print(Syntax(visible(shown), "diff", background_color="default", word_wrap=True))

    def _end_line(self) -> None:
        if self.line_open:
            self.console.print()
            self.line_open = False


def _tail(text: str, lines: int) -> str:
    kept = text.rstrip().splitlines()
    return "\n".join((["..."] if len(kept) > lines else []) + kept[-lines:])
