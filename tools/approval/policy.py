"""The approval policy: what the rules and the command analysis say about one call, and asking a person.

The modes and rules are described in tools/approval/__init__.py; this module applies them.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from tools.approval.analysis import analyse_command
from tools.approval.calls import Danger
from tools.approval.known_safe import unknown_part
from tools.approval.rules import command_rule_matches, tool_rule_matches
from tools.preview import visible

if TYPE_CHECKING:
    from tools.base import Tool

Mode = Literal["auto", "ask", "never-ask"]


class Verdict(BaseModel):
    """What the policy says before anyone is asked."""

    action: Literal["allow", "ask", "refuse"]
    why: Literal[
        "deny-rule",
        "destructive",
        "unchecked",
        "allow-rule",
        "read-only",
        "auto",
        "known-safe",
        "unlisted",
        "unsandboxed",
    ]
    reason: str
    subject: str  # what the call is, for messages: the command, or the tool and its path


class ApprovalRequest(BaseModel):
    """What a person is shown in `ask` mode."""

    tool: str
    subject: str
    reason: str  # why a question is needed
    preview: str  # the exact command, or the diff a write/edit would make
    preview_syntax: str = "json"  # how to highlight it (the tool's `preview_syntax`)
    command: str | None = None  # the shell command the call runs (the tool's `command`); None: it runs none
    destructive: bool = False
    unchecked: bool = False  # the analysis could not tell what the command does (expansions, generated code...)


class Decision(BaseModel):
    allowed: bool
    reason: str


# The injected question: True = yes, False = no, None = nobody could be asked (no terminal).
Ask = Callable[[ApprovalRequest], "bool | None"]


class ApprovalPolicy(BaseModel):
    mode: Mode = "auto"
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    def evaluate(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        workspace: Path,
        *,
        sandboxed: bool = True,
        search_path: str | None = None,
    ) -> Verdict:
        """What the rules and the analysis of the call's command say; the tool tells what it is (its command,
        whether it is read-only, its MCP server). `sandboxed`: commands run inside the sandbox; when they do
        not, `auto` lets through unasked only commands on the known read-only list (known_safe.py), looked
        up on `search_path` (the PATH commands get; None: this process's)."""
        command, subject, server = tool.command(arguments), tool.subject(arguments), tool.server
        commands: list[list[str]] = []
        dangers: list[Danger] = []
        writes: list[str] = []
        if isinstance(command, str):
            analysis = analyse_command(command, workspace)
            commands, dangers, writes = analysis.commands, analysis.dangers, analysis.writes
        for rule in self.deny:
            if tool_rule_matches(rule, tool.name, server) or any(
                command_rule_matches(rule, w, deny=True) for w in commands
            ):
                return Verdict(
                    action="refuse", why="deny-rule", subject=subject, reason=f"matches the deny rule `{rule}`"
                )
        if dangers:  # destructive ones first: they say the most
            danger = min(dangers, key=lambda d: d.kind != "destructive")
            return Verdict(
                action="ask" if self.mode == "ask" else "refuse",
                why=danger.kind,
                subject=danger.command,
                reason=danger.reason,
            )
        if any(tool_rule_matches(rule, tool.name, server) for rule in self.allow) or (
            commands and all(any(command_rule_matches(rule, w) for rule in self.allow) for w in commands)
        ):
            return Verdict(action="allow", why="allow-rule", subject=subject, reason="allowed by a rule")
        if tool.read_only and server is None:
            return Verdict(action="allow", why="read-only", subject=subject, reason="read-only tool")
        if self.mode == "auto" and not sandboxed and isinstance(command, str):
            unknown = _outside_known(commands, writes, workspace, search_path)
            if unknown:
                return Verdict(
                    action="ask",
                    why="unsandboxed",
                    subject=subject,
                    reason=f"runs without a sandbox, and {unknown}",
                )
            return Verdict(action="allow", why="known-safe", subject=subject, reason="a known read-only command")
        if self.mode == "auto":
            return Verdict(action="allow", why="auto", subject=subject, reason="auto mode")
        if self.mode == "ask":
            return Verdict(action="ask", why="unlisted", subject=subject, reason="no allow rule covers it")
        uncovered = next((w for w in commands if not any(command_rule_matches(r, w) for r in self.allow)), None)
        part = f" (no rule covers `{_clip(shlex.join(uncovered), 80)}`)" if uncovered and len(commands) > 1 else ""
        return Verdict(
            action="refuse",
            why="unlisted",
            subject=subject,
            reason=f"is not allowed by any allow rule{part} (approval mode never-ask)",
        )


def _outside_known(commands: list[list[str]], writes: list[str], workspace: Path, search_path: str | None) -> str:
    """What in a command is not on the known read-only list ("" when all of it is)."""
    written = next((w for w in writes if w not in QUIET_TARGETS), None)
    if written is not None:
        return f"it writes to `{_clip(written, 80)}`"
    moved = False
    for words in commands:
        if words and words[0] == "git" and moved:  # the repository checked is the workspace's, not the one cd reached
            return "it runs git after `cd`"
        moved = moved or (bool(words) and words[0] == "cd")
        problem = unknown_part(words, workspace, search_path)
        if problem:
            return problem
    return "" if commands else "it runs no command this check can name"


QUIET_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}

ADVICE = {
    "deny-rule": "Do the task another way, or ask the user to do this.",
    "destructive": "Commands like this never run without a person's approval: ask the user to do it, or do the task another way.",
    "unchecked": "Write the command out literally (no variables, substitutions or generated code in the program name, its "
    "options or its targets), or ask the user to run it.",
    "unlisted": "Do the task another way, or ask the user to add an allow rule for it (`allow` in .agent/config.toml).",
    "unsandboxed": "Without a sandbox only known read-only commands run unasked: use the file tools to write, or ask "
    "the user to run it, to add an allow rule for it, or to install bubblewrap.",
}


@dataclass
class Approver:
    """The policy plus the way to ask a person; `Toolbox.run` consults it before every call."""

    policy: ApprovalPolicy
    ask: Ask | None = None

    def review(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        workspace: Path,
        *,
        sandboxed: bool = True,
        search_path: str | None = None,
    ) -> Decision:
        """Never raises (but lets Ctrl-C at the prompt through): a check that fails refuses. `sandboxed` and
        `search_path`: see ApprovalPolicy.evaluate."""
        try:
            return self._review(tool, arguments, Path(workspace).resolve(), sandboxed, search_path)
        except Exception as exc:  # noqa: BLE001 - fail closed, and tell the model why
            return Decision(
                allowed=False, reason=f"refused by the approval policy: the check failed ({type(exc).__name__}: {exc})"
            )

    def _review(
        self, tool: Tool, arguments: dict[str, Any], workspace: Path, sandboxed: bool, search_path: str | None
    ) -> Decision:
        verdict = self.policy.evaluate(tool, arguments, workspace, sandboxed=sandboxed, search_path=search_path)
        if verdict.action == "allow":
            return Decision(allowed=True, reason=verdict.reason)
        subject = _clip(verdict.subject)
        if verdict.action == "refuse":
            return Decision(
                allowed=False,
                reason=f"refused by the approval policy: `{subject}` {verdict.reason}. {ADVICE[verdict.why]}",
            )
        request = ApprovalRequest(
            tool=tool.name,
            subject=verdict.subject,
            reason=verdict.reason,
            preview=tool.preview(arguments, workspace),
            preview_syntax=tool.preview_syntax,
            command=tool.command(arguments),
            destructive=verdict.why == "destructive",
            unchecked=verdict.why == "unchecked",
        )
        answer = self.ask(request) if self.ask else None
        if answer is None and verdict.why == "unsandboxed":
            return Decision(
                allowed=False,
                reason=f"refused by the approval policy: `{subject}` {verdict.reason}, and there is no terminal to "
                f"ask on. {ADVICE['unsandboxed']}",
            )
        if answer is None:
            return Decision(
                allowed=False,
                reason=(
                    f"refused by the approval policy: `{subject}` needs a person's approval ({verdict.reason}), but there is "
                    "no terminal to ask on (the user can run with --approval auto or add an allow rule). Do the task another way."
                ),
            )
        if answer:
            return Decision(allowed=True, reason="approved by the user")
        return Decision(
            allowed=False,
            reason=f"refused: the user declined `{subject}`. Do not retry it; do the task another way or ask the user.",
        )


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(visible(text).replace("`", "'").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
