"""What a tool is, what it gets, and what it gives back.

A tool never raises into the agent loop for the model's mistakes: bad arguments, missing files and failed
commands all come back as an error `ToolResult` that tells the model what to fix.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ValidationError

from inference.errors import DflashError
from tools.sandbox import SandboxPolicy, commands_sandboxed
from tools.secrets import redact_secrets


class ToolResult(BaseModel):
    output: str
    is_error: bool = False
    files: list[str] = []  # the workspace files the call wrote (what a display shows the diff of)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(output=message, is_error=True)


class ToolError(DflashError):
    """Raised inside a tool for a mistake the model can fix; becomes an error result."""


class ToolPolicy(BaseModel):
    """Limits every tool call obeys."""

    command_timeout: float = 120.0
    max_output_chars: int = 12_000
    max_read_lines: int = 400
    sandbox: SandboxPolicy = SandboxPolicy()  # where commands may reach (tools/sandbox.py)


class Verdict(Protocol):
    allowed: bool
    reason: str


class Reviewer(Protocol):
    """What a call's approval needs (tools/approval/ `Approver` is the one in use): named here, so that this
    module does not import the package that imports it."""

    def review(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        workspace: Path,
        *,
        sandboxed: bool = True,
        search_path: str | None = None,
    ) -> Verdict: ...


@dataclass
class ToolContext:
    workspace: Path
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    approver: Reviewer | None = None  # the approval policy every call passes (tools/approval/); None: no checks

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()


class Tool(ABC):
    """Everything the rest of the program needs to know about a tool is declared here, by the tool: the
    approval policy, the text protocol and the terminal prompt ask the tool, never a list of names."""

    name: str  # class attributes, which a tool made at run time (MCP, skills) sets on the instance
    description: str
    Params: type[BaseModel]
    batchable: ClassVar[bool] = False  # True: the caller needs no result before its next call (file writes)
    # Changes nothing (paths confined to the workspace): never asked about, allowed in approval mode never-ask.
    read_only: ClassVar[bool] = False
    # Parameters whose values are multi-line text (file contents): the text protocol shows them on lines of their own.
    multiline_params: ClassVar[frozenset[str]] = frozenset()
    preview_syntax: ClassVar[str] = "json"  # how the terminal highlights `preview`: a Pygments lexer name
    server: str | None = None  # the MCP server a tool comes from (approval rules `mcp:SERVER`); None: built in

    @abstractmethod
    def run(self, params: Any, ctx: ToolContext) -> ToolResult: ...

    def command(self, arguments: dict[str, Any]) -> str | None:
        """The shell command this call would run, for the approval policy to analyse; None: it runs none."""
        return None

    def subject(self, arguments: dict[str, Any]) -> str:
        """What the call is, in one line for messages: the tool and the path it works on."""
        path = arguments.get("path")
        return f"{self.name} {path}" if isinstance(path, str) else self.name

    def preview(self, arguments: dict[str, Any], workspace: Path) -> str:
        """What a person approving the call is shown (as is: the prompt makes hidden characters visible)."""
        try:
            return f"{self.name} {json.dumps(arguments, ensure_ascii=False, default=str)[:4000]}"
        except (TypeError, ValueError):
            return f"{self.name} {arguments!r}"[:4000]

    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema the model sees."""
        parameters = self.Params.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }

    def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate the model's arguments, run, turn every expected failure into an error result, and take
        the environment's secret values out of whatever comes back (every tool, MCP tools included)."""
        result = self._invoke(arguments, ctx)
        return result.model_copy(update={"output": redact_secrets(result.output)})

    def _invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = self.Params.model_validate(arguments)
        except ValidationError as exc:
            return ToolResult.error(f"invalid arguments for {self.name}: {_explain(exc)}. Expected: {self.signature()}")
        try:
            return self.run(params, ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except (OSError, UnicodeError, ValueError) as exc:
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        except RecursionError:  # a path or argument nested past what Python's recursion handles
            return ToolResult.error(f"{self.name} failed: the argument is nested too deeply; use a shorter path")

    def signature(self) -> str:
        fields = self.Params.model_fields
        args = ", ".join(f"{name}{'' if f.is_required() else '?'}" for name, f in fields.items())
        return f"{self.name}({args})"


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


class Toolbox:
    """The tools one agent may use, by name."""

    def __init__(self, tools: list[Tool]):
        self._tools = {t.name: t for t in tools}

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    def run(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.error(f"unknown tool {name!r}; available tools: {', '.join(self._tools)}")
        if ctx.approver is not None:  # the one gate every call passes: approval policy before anything runs
            try:
                checked = tool.Params.model_validate(arguments).model_dump()
            except ValidationError:
                return tool.invoke(arguments, ctx)  # reports the bad arguments; nothing runs
            sandbox = ctx.policy.sandbox
            decision = ctx.approver.review(
                tool,
                checked,
                ctx.workspace,
                sandboxed=commands_sandboxed(sandbox),
                search_path=sandbox.env.get("PATH") or os.environ.get("PATH"),
            )
            if not decision.allowed:
                return ToolResult.error(decision.reason)
        return tool.invoke(arguments, ctx)
