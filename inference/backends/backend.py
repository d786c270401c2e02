"""The one interface the agent uses to make tokens: `ChatBackend.complete`.

Everything an engine reports is normalised here, so the agent never needs to know which engine ran:
usage, prompt-cache reuse and speculative-decoding statistics all land in `Timings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from inference.errors import DflashError

Role = Literal["system", "user", "assistant", "tool"]


class ToolCallRequest(BaseModel):
    """A tool call as the engine returned it natively (OpenAI `tool_calls`)."""

    id: str
    name: str
    arguments: str  # raw JSON text: parsing (and its errors) belong to the agent


class Message(BaseModel):
    role: Role
    content: str = ""
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


class Sampling(BaseModel):
    temperature: float = 0.2
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    max_tokens: int = 2048
    seed: int | None = 42
    stop: list[str] = Field(default_factory=list)


class Timings(BaseModel):
    """What the engine measured for one completion.

    `cached_prompt_tokens` are prompt tokens served from the KV cache (not recomputed);
    `draft_n`/`draft_accepted` are None (not 0) when the engine drafted nothing.
    """

    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0
    draft_n: int | None = None
    draft_accepted: int | None = None

    @property
    def processed_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.cached_prompt_tokens

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / (self.predicted_ms / 1000) if self.predicted_ms > 0 else 0.0


class Completion(BaseModel):
    text: str
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    finish_reason: str | None = None
    timings: Timings = Field(default_factory=Timings)

    def as_message(self) -> Message:
        return Message(role="assistant", content=self.text, tool_calls=self.tool_calls)


OnText = Callable[[str], "bool | None"]  # returns True to cut the reply here (e.g. it degenerated into a loop)
CUT = "cut"  # the finish_reason of a reply that `on_text` cut
# (prompt tokens, of them already in the KV cache): told before the prompt is processed, by a backend that knows
OnPrompt = Callable[[int, int], None]


class BackendError(DflashError, RuntimeError):
    """An engine failed in a way the user must fix (dead server, missing model, bad request)."""


class ContextOverflow(BackendError):
    """The conversation no longer fits the engine's context window."""


class ChatBackend(Protocol):
    """Makes one assistant turn from a conversation.

    `tools` are OpenAI function schemas, sent only by the native tool-call protocol.
    `on_text` receives text deltas as they stream; when it returns True the reply ends there (finish_reason `CUT`).
    `on_prompt` is told the prompt's size before the engine reads it, by a backend that knows it then (one that
    tokenizes the prompt itself); others never call it.
    `on_call_text` receives the native tool calls' argument deltas as they stream (a runaway `write_file` content
    is cut there like runaway text); True ends the reply the same way.
    """

    name: str

    def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling | None = None,
        on_text: OnText | None = None,
        on_prompt: OnPrompt | None = None,
        on_call_text: OnText | None = None,
    ) -> Completion: ...
