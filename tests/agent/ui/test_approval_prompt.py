"""The chat's third answer to an approval question: "always", for the rest of the session."""

from __future__ import annotations

import io

from rich.console import Console

from agent.ui.approval_prompt import TerminalApproval
from tools.approval import ApprovalRequest


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def request(tool: str, preview: str) -> ApprovalRequest:
    command = preview if tool == "bash" else None  # what BashTool.command answers
    return ApprovalRequest(tool=tool, subject=preview, reason="asked", preview=preview, command=command)


def test_always_allows_the_same_command_again_without_asking_and_nothing_else():
    out = io.StringIO()
    stdin = Terminal("a\nn\n")
    ask = TerminalApproval(Console(file=out, width=100), stdin=stdin, session_always=True)
    assert ask(request("bash", "make test")) is True and "a: always" in out.getvalue()
    assert ask(request("bash", "make test")) is True and stdin.read() == "n\n", "not asked again"
    stdin.seek(2)
    assert ask(request("bash", "make clean")) is False, "another command is asked"


def test_always_for_a_write_covers_every_write_of_the_session():
    stdin = Terminal("always\n")
    ask = TerminalApproval(Console(file=io.StringIO()), stdin=stdin, session_always=True)
    assert ask(request("write_file", "--- a\n+++ b\n+1")) is True
    assert ask(request("write_file", "--- a\n+++ b\n+2")) is True


def test_without_a_session_always_is_no():
    ask = TerminalApproval(Console(file=io.StringIO()), stdin=Terminal("a\n"))
    assert ask(request("bash", "make test")) is False
