"""Terminal output: the reply streams live with a tok/s figure; each step ends with a one-line summary.
Everything the model, a tool or the repository wrote is printed through `plain`: never markup, never control."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agent.core.loop import AgentEvents, RunResult
from agent.core.toolcalls import ParsedCall
from agent.git.checkpoints import GitReport
from agent.ui.plain import plain, visible
from agent.ui.status_line import StatusLine, reading
from agent.workflows.runs import WorkflowResult
from inference.backends.backend import Completion
from tools.base import ToolResult

TAIL_LINES = 12


class TerminalEvents(StatusLine):
    """Agent events rendered on stderr (stdout stays free for --json output)."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live: Live | None = None
        self.buffer = ""
        self.chunks = 0
        self.first_at: float | None = None
        self.step = 1

    def on_prompt(self, tokens: int, cached: int) -> None:
        """The prompt's size, from a backend that knows it before the engine reads it (see ChatBackend)."""
        self.waiting(f"step {self.step}: {reading(tokens, cached)}")

    def on_text(self, text: str) -> None:
        if self.first_at is None:
            self.first_at = time.perf_counter()
            self.quiet()  # one live display at a time: the streaming tail takes over
            if self.console.is_terminal:
                self.live = Live(console=self.console, refresh_per_second=8, transient=True)
                self.live.start()
        self.buffer += text
        self.chunks += 1
        if self.live:
            self.live.update(self._frame())

    def _frame(self) -> Group:
        elapsed = time.perf_counter() - (self.first_at or time.perf_counter())
        rate = self.chunks / elapsed if elapsed > 0.2 else 0.0
        tail = "\n".join(self.buffer.splitlines()[-TAIL_LINES:])
        return Group(
            plain(tail, "dim"), Text(f"step {self.step} · {self.chunks} tok · {rate:.1f} tok/s", style="bold cyan")
        )

    def on_note(self, text: str) -> None:
        self._stop_live()
        self.console.print(plain(text, "yellow"), highlight=False)
        self.buffer, self.chunks, self.first_at = "", 0, None

    def _stop_live(self) -> None:
        if self.live:
            self.live.stop()
            self.live = None

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        self._stop_live()
        t = completion.timings
        line = Text.assemble((f"step {step}", "bold"), " ")
        for i, (call, result) in enumerate(results):
            line.append_text(
                Text.assemble(", " if i else "", plain(call.name), (" ✗", "red") if result.is_error else "")
            )
        if not results:
            line.append("no tool call", "yellow")
        cache = f"{t.cached_prompt_tokens}/{t.prompt_tokens}"
        line.append(
            f"  ·  {t.completion_tokens} tok at {t.tokens_per_second:.1f} tok/s  ·  prompt cache {cache}"
            + (f"  ·  drafted {t.draft_n}, accepted {t.draft_accepted}" if t.draft_n else "")
        )
        self.console.print(line, highlight=False)
        for call, result in results:
            if result.is_error:
                first = result.output.strip().splitlines()[0] if result.output.strip() else ""
                self.console.print(plain(f"    {call.name}: {first[:160]}", "red"), highlight=False)
        self.buffer, self.chunks, self.first_at, self.step = "", 0, None, step + 1
        if not any(call.name == "finish" and not result.is_error for call, result in results):
            self.waiting(f"step {step + 1}: the model is reading the results ...")


def print_summary(console: Console, result: WorkflowResult) -> None:
    run: RunResult = result.run
    s = run.stats
    checked = (result.tests is None or result.tests.passed) and not result.missing  # the final check agrees
    _line(console)
    console.print(
        Text.assemble(
            (f"{'✓' if run.status == 'finished' and checked else '!'} {run.status}", "bold"),
            f" in {visible(result.directory)}",
        ),
        highlight=False,
    )
    _line(console, f"  summary:  {run.summary.strip()[:500]}")
    _line(console, f"  files:    {', '.join(result.files) or '(none)'}")
    if result.tests:
        verdict = (
            result.tests.summary or ("passed" if result.tests.passed else "failed"),
            "green" if result.tests.passed else "red",
        )
        console.print(Text.assemble(plain(f"  tests:    {result.tests.command} → "), verdict), highlight=False)
        _line(console, "            " + (result.tests.output_tail.splitlines() or [""])[-1])
    else:
        _line(console, "  tests:    none found")
    if result.missing:
        console.print(Text.assemble(plain("  missing:  "), ("; ".join(result.missing), "red")), highlight=False)
    if result.setup:
        _line(console, f"  set-up:   {result.setup.describe()}")
    if result.diff_stat:
        _line(console, "  diff:     " + result.diff_stat.replace("\n", "\n            "))
    if result.git:
        print_git(console, result.git)
    elif result.commit:
        _line(console, f"  commit:   {result.commit[:12]}")
    _line(
        console,
        f"  steps {s.steps} · tokens {s.prompt_tokens} prompt ({s.cache_reuse:.0%} cached after turn 1) / "
        f"{s.completion_tokens} generated · {s.tokens_per_second:.1f} tok/s · wall {run.wall_seconds:.0f}s",
    )
    _line(console, f"  transcript: {result.transcript}")


def print_git(console: Console, git: GitReport) -> None:
    """Where the run's work is, how many checkpoints, and what happened to the user's own changes."""
    n = len(git.checkpoints)
    kind = "squashed into 1 commit" if git.squashed and n else f"{n} checkpoint{'s' * (n != 1)}"
    where = f"{git.branch} ({kind}, from {git.start_commit[:10]}" + (
        f" on {git.start_branch})" if git.start_branch else ")"
    )
    _line(console, f"  branch:   {where if git.branch else 'none: the changes were not kept'}")
    if git.head:
        undo = "agent undo" if git.checked_out == git.branch else f"agent undo --branch {git.branch}"
        _line(console, f"  commit:   {git.head[:12]}  ·  checked out: {git.checked_out}  ·  undo a step: {undo}")
    for note in git.notes:
        _line(console, f"  git:      {note}")


def _line(console: Console, text: str = "") -> None:
    console.print(plain(text), highlight=False)


class LineEvents:
    """Refactor progress as one line per step, prefixed with the repo (repos may run side by side)."""

    def __init__(self, console: Console):
        self.console, self.lock = console, threading.Lock()

    def on_note(self, text: str) -> None:
        with self.lock:
            self.console.print(plain(text, "yellow"), highlight=False)

    def on_repo_start(self, repo: Path) -> AgentEvents:
        self.on_note(f"{repo.name}: started")
        return _RepoLines(self, repo.name)

    def on_repo_done(self, outcome) -> None:
        colour = {"passed": "green", "failed": "red", "error": "red"}.get(outcome.status, "yellow")
        with self.lock:
            self.console.print(
                Text.assemble(
                    plain(f"{Path(outcome.repo).name}: {outcome.status}", colour),
                    plain(f" · {outcome.reason} · {outcome.steps} steps · {outcome.seconds:.0f}s"),
                ),
                highlight=False,
            )


class _RepoLines:
    def __init__(self, parent: LineEvents, name: str):
        self.parent, self.name = parent, name

    def on_text(self, text: str) -> None:
        pass

    def on_note(self, text: str) -> None:
        with self.parent.lock:
            self.parent.console.print(plain(f"  {self.name}: {text}", "dim"), highlight=False)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        calls = ", ".join(f"{c.name}{' (failed)' if r.is_error else ''}" for c, r in results) or "no tool call"
        t = completion.timings
        with self.parent.lock:
            self.parent.console.print(
                plain(
                    f"  {self.name}: step {step} {calls} · {t.completion_tokens} tok at {t.tokens_per_second:.1f} tok/s"
                ),
                highlight=False,
            )
