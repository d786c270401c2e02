"""The agent loop: complete, parse tool calls, run tools, observe, until `finish` or the step limit."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from agent.core.context import trim_observations
from agent.core.prompt import system_prompt, task_message
from agent.core.session import Transcript
from agent.core.texts import NO_CALL_NUDGE, REPEAT_HELP
from agent.core.toolcalls import ParsedCall, TextProtocol
from inference.backends.backend import (
    CUT,
    BackendError,
    ChatBackend,
    Completion,
    ContextOverflow,
    Message,
    Sampling,
    Timings,
)
from tools.base import Tool, Toolbox, ToolContext, ToolResult
from tools.workspace import iter_files, relative


class FinishParams(BaseModel):
    summary: str = Field(description="What was done and how it was verified.")


class FinishTool(Tool):
    name = "finish"
    description = "Call when the task is complete and verified. Ends the run."
    Params = FinishParams
    read_only = True

    def run(self, params: FinishParams, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=params.summary)


class RunStats(BaseModel):
    steps: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    later_prompt_tokens: int = 0  # prompt tokens on turns after the first ...
    later_cached_tokens: int = 0  # ... and how many of those came from the KV cache
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    prompt_seconds: float = 0.0
    draft_n: int = 0  # tokens the engine drafted (speculative decoding) ...
    draft_accepted: int = 0  # ... and how many of them the model accepted
    one_shots: int = 0  # whole-file replies asked before the loop (agent/strategies/one_shot.py)

    def add(self, t: Timings, step: bool = True) -> None:
        """Count one completion; `step=False`: a request that is not a step of the loop (a strategy's own)."""
        if self.steps > 0:
            self.later_prompt_tokens += t.prompt_tokens
            self.later_cached_tokens += t.cached_prompt_tokens
        self.steps += step
        self.prompt_tokens += t.prompt_tokens
        self.cached_prompt_tokens += t.cached_prompt_tokens
        self.completion_tokens += t.completion_tokens
        self.generation_seconds += t.predicted_ms / 1000
        self.prompt_seconds += t.prompt_ms / 1000
        self.draft_n += t.draft_n or 0
        self.draft_accepted += t.draft_accepted or 0

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.generation_seconds if self.generation_seconds else 0.0

    @property
    def cache_reuse(self) -> float:
        """Fraction of prompt tokens served from cache on turns after the first."""
        return self.later_cached_tokens / self.later_prompt_tokens if self.later_prompt_tokens else 0.0


class RunResult(BaseModel):
    status: Literal["finished", "step_limit", "stuck", "error", "interrupted"]
    summary: str
    stats: RunStats
    wall_seconds: float


class AgentEvents(Protocol):
    def on_text(self, text: str) -> None: ...
    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None: ...
    def on_note(self, text: str) -> None: ...

    # optional: `on_prompt(tokens, cached)`, the prompt's size before the engine reads it (see ChatBackend);
    # `before_calls(step, calls)`, before a step's tool calls run (the checkpoints keep the working tree there)


class Agent:
    def __init__(
        self,
        backend: ChatBackend,
        tools: list[Tool],
        ctx: ToolContext,
        *,
        protocol: TextProtocol | None = None,
        sampling: Sampling | None = None,
        max_steps: int = 30,
        transcript: Transcript | None = None,
        events: AgentEvents | None = None,
        prompt_sections: list[str] | None = None,
        verify: Callable[[], str | None] | None = None,
        max_repeats: int = 3,
        first_look: Callable[[Path, list[str], str], dict[str, str]] | None = None,
        watch: Callable[[], Callable[[str], bool]] | None = None,
    ):
        """`first_look(workspace, files, task)`: the files whose contents the first message shows; `watch()`: a
        fresh watcher per reply, fed what streams, that cuts the reply when it returns True."""
        self.backend, self.ctx, self.max_steps, self.verify = backend, ctx, max_steps, verify
        self.max_repeats, self.first_look, self.watch = max_repeats, first_look, watch
        self.toolbox = Toolbox([*tools, FinishTool()])
        self.protocol = protocol or TextProtocol()
        self.sampling = (sampling or Sampling()).model_copy(update={"stop": self.protocol.stop_sequences(self.toolbox)})
        self.transcript, self.events = transcript, events
        self.system = system_prompt(self.protocol, self.toolbox, prompt_sections)
        self.messages: list[Message] = []  # the conversation; `continue_with` adds to it
        self.plain_task = Message(role="user")  # the first message without file contents (set by `run`)

    def run(self, task: str, history: list[Message] | None = None) -> RunResult:
        """Run `task`; pass `history` (from a transcript) to resume a conversation instead."""
        started, stats = time.monotonic(), RunStats()
        messages = self.messages = []
        first = self._first_messages(task)
        if history:  # a resumed conversation keeps its own first message
            self.plain_task = Message(role="user")
        for message in history or first:
            self._append(messages, message)
        return self._turn(stats, started)

    def _first_messages(self, task: str) -> list[Message]:
        """The system prompt and the task with the files it is about; `plain_task` keeps the task message
        without file contents, for when they do not fit."""
        files = [relative(self.ctx.workspace, p) for p in iter_files(self.ctx.workspace, self.ctx.workspace)]
        self.plain_task = Message(role="user", content=task_message(task, files))
        shown = self.first_look(self.ctx.workspace, files, task) if self.first_look else {}
        return [
            Message(role="system", content=self.system),
            Message(role="user", content=task_message(task, files, shown)),
        ]

    def continue_with(self, message: str) -> RunResult:
        """One more user turn in the same conversation (a chat): the messages so far stay as they are, so the
        engine reuses its KV cache for all of them. The first turn starts the conversation as `run` does."""
        if not self.messages:
            return self.run(message)
        started, stats = time.monotonic(), RunStats()
        self._append(self.messages, Message(role="user", content=message))
        return self._turn(stats, started)

    def _turn(self, stats: RunStats, started: float) -> RunResult:
        try:
            return self._steps(self.messages, stats, started)
        except KeyboardInterrupt:  # recorded, then passed on: the caller decides what Ctrl-C means
            self._end("interrupted", "interrupted by the user (Ctrl-C)", stats, started)
            raise

    def _steps(self, messages: list[Message], stats: RunStats, started: float) -> RunResult:
        sampling, stuck = self.sampling, 0
        for step in range(1, self.max_steps + 1):
            try:
                completion = self._complete(messages, sampling)
            except BackendError as exc:
                return self._end("error", f"{type(exc).__name__}: {exc}", stats, started)
            completion = self.protocol.close_stopped_call(completion, self.toolbox)
            stats.add(completion.timings)
            problem = _degenerate(messages, completion)
            if problem:  # drop it: repeats only reinforce a loop
                stuck += 1
                self._note(f"step {step}: the reply {problem}; discarded, sampling again hotter")
                if stuck > self.max_repeats:
                    return self._end(
                        "stuck", f"the model repeated itself {stuck} times; rephrase the task", stats, started
                    )
                sampling = sampling.model_copy(
                    update={"temperature": min(sampling.temperature + 0.3, 1.0), "seed": step}
                )
                if stuck == 2:  # resampling alone did not help: change the context
                    self._append(messages, Message(role="user", content=REPEAT_HELP))
                continue
            stuck, sampling = 0, self.sampling
            self._append(messages, completion.as_message())
            parsed = self.protocol.parse(completion, self.toolbox)
            if parsed.calls and (before := getattr(self.events, "before_calls", None)):
                before(step, parsed.calls)
            results = self._run_calls(parsed.calls)
            if self.events:
                self.events.on_step(step, completion, results)
            if self.transcript:
                self.transcript.write(
                    "step",
                    step=step,
                    timings=completion.timings.model_dump(),
                    calls=[c.model_dump() for c, _ in results],
                    errors=parsed.errors,
                )
            finish = next((r for c, r in results if c.name == "finish" and not r.is_error), None)
            if finish:
                return self._end("finished", finish.output, stats, started)
            observations = self.protocol.observations(results, parsed.errors) or [
                Message(role="user", content=NO_CALL_NUDGE)
            ]
            for message in observations:
                self._append(messages, message)
        return self._end("step_limit", f"stopped after {self.max_steps} steps without finish", stats, started)

    def _complete(self, messages: list[Message], sampling: Sampling) -> Completion:
        """Ask the model, cutting a reply its watcher stops as it streams; when the conversation outgrows the
        context, trim old observations and ask again."""
        while True:
            watch = self.watch() if self.watch else None

            def on_text(delta: str, watch: Callable[[str], bool] | None = watch) -> bool:
                if self.events:
                    self.events.on_text(delta)
                return watch(delta) if watch else False

            tools, on_prompt = self.protocol.api_tools(self.toolbox), getattr(self.events, "on_prompt", None)
            watch_calls = {"on_call_text": watch} if tools and watch else {}  # native calls' arguments, watched too
            try:
                return self.backend.complete(messages, tools, sampling, on_text, on_prompt, **watch_calls)
            except ContextOverflow as exc:
                trimmed = trim_observations(messages)
                plain = self.plain_task.content
                if trimmed is None and plain and len(messages) > 1 and messages[1].content != plain:
                    messages[1], trimmed = self.plain_task, "left the files' contents out of the task message"
                if trimmed is None:
                    raise
                self._note(f"the conversation outgrew the context ({exc}); {trimmed}")

    def _run_calls(self, calls: list[ParsedCall]) -> list[tuple[ParsedCall, ToolResult]]:
        """Run calls in order; `finish` is refused when an earlier call in the same reply failed, or when
        the `verify` check (e.g. the project's tests) reports a problem."""
        results: list[tuple[ParsedCall, ToolResult]] = []
        for call in calls:
            failed = [c.name for c, r in results if r.is_error]
            problem = None
            if call.name == "finish":
                problem = (
                    f"{', '.join(failed)} failed in this reply" if failed else (self.verify() if self.verify else None)
                )
            if problem:
                result = ToolResult.error(f"finish refused: {problem}\nFix this, then call finish again.")
            else:
                result = self.toolbox.run(call.name, call.arguments, self.ctx)
            results.append((call, result))
        return results

    def _note(self, text: str) -> None:
        if self.events:
            self.events.on_note(text)
        if self.transcript:
            self.transcript.write("note", text=text)

    def _append(self, messages: list[Message], message: Message) -> None:
        messages.append(message)
        if self.transcript:
            self.transcript.message(message)

    def _end(self, status: str, summary: str, stats: RunStats, started: float) -> RunResult:
        result = RunResult(status=status, summary=summary, stats=stats, wall_seconds=time.monotonic() - started)
        if self.transcript:
            self.transcript.write("end", result=result.model_dump())
        return result


def _degenerate(messages: list[Message], completion: Completion, window: int = 8) -> str | None:
    """What makes a reply worthless, or None: it was cut for looping while it streamed, or it is a reply the
    model already gave to the very same observation (a loop across turns)."""
    if completion.finish_reason == CUT:
        return f"fell into repeating itself and was cut after {completion.timings.completion_tokens} tokens"
    pairs = [(a.content, b.content.strip()) for a, b in zip(messages, messages[1:]) if b.role == "assistant"]
    if (messages[-1].content, completion.text.strip()) in pairs[-window:]:
        return "repeats an earlier one"
    return None
