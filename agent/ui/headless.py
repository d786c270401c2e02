"""Output for programs (`agent run --output-format json|stream-json`): JSON on stdout, one event per line.

stream-json events, in order: `start`, then per model turn `text` chunks as they stream, a `tool_call` and a
`tool_result` per call, a `step` with the engine's timings, `note`s; last either `end` (the whole result) or
`error` (what failed and how to resume). Every line is one complete JSON object, flushed as it is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from agent.core.toolcalls import ParsedCall
from inference.backends.backend import Completion
from tools.base import ToolResult


def emit(stream: IO[str], kind: str, **data: Any) -> None:
    stream.write(json.dumps({"type": kind, **data}, default=str) + "\n")
    stream.flush()


def session_of(transcript: str | Path) -> str:
    """A session's id: its transcript's file name (see agent/core/session.py)."""
    return Path(transcript).stem


class StreamEvents:
    """AgentEvents written as JSON lines."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def on_text(self, text: str) -> None:
        emit(self.stream, "text", text=text)

    def on_note(self, text: str) -> None:
        emit(self.stream, "note", text=text)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        for call, result in results:
            emit(self.stream, "tool_call", step=step, name=call.name, arguments=call.arguments)
            emit(self.stream, "tool_result", step=step, name=call.name, is_error=result.is_error, output=result.output)
        emit(self.stream, "step", step=step, timings=completion.timings.model_dump())
