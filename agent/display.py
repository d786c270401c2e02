"""Terminal output: the reply streams live with a tok/s figure; each step ends with a one-line summary."""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agent.checkpoints import GitReport
from agent.loop import RunResult
from agent.toolcalls import ParsedCall
from agent.workflows import WorkflowResult
from inference.backend import Completion
from tools.base import ToolResult

TAIL_LINES = 12


class TerminalEvents:
    """Agent events rendered on stderr (stdout stays free for --json output)."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live: Live | None = None
        self.buffer = ""
        self.chunks = 0
        self.first_at: float | None = None
        self.step = 1

    def on_text(self, text: str) -> None:
        if self.first_at is None:
            self.first_at = time.perf_counter()
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
        return Group(Text(tail, style="dim"), Text(f"step {self.step} · {self.chunks} tok · {rate:.1f} tok/s", style="bold cyan"))

    def on_note(self, text: str) -> None:
        self._stop_live()
        self.console.print(f"[yellow]{text}[/yellow]", highlight=False)
        self.buffer, self.chunks, self.first_at = "", 0, None

    def _stop_live(self) -> None:
        if self.live:
            self.live.stop()
            self.live = None

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        self._stop_live()
        t = completion.timings
        calls = ", ".join(f"{c.name}{'' if not r.is_error else ' [red]✗[/red]'}" for c, r in results) or "[yellow]no tool call[/yellow]"
        cache = f"{t.cached_prompt_tokens}/{t.prompt_tokens}"
        self.console.print(
            f"[bold]step {step}[/bold] {calls}  ·  {t.completion_tokens} tok at {t.tokens_per_second:.1f} tok/s"
            f"  ·  prompt cache {cache}" + (f"  ·  drafted {t.draft_n}, accepted {t.draft_accepted}" if t.draft_n else "")
        )
        for call, result in results:
            if result.is_error:
                first = result.output.strip().splitlines()[0] if result.output.strip() else ""
                self.console.print(f"    [red]{call.name}: {first[:160]}[/red]", markup=True, highlight=False)
        self.buffer, self.chunks, self.first_at, self.step = "", 0, None, step + 1


def print_summary(console: Console, result: WorkflowResult) -> None:
    run: RunResult = result.run
    s = run.stats
    console.print()
    console.print(f"[bold]{'✓' if run.status == 'finished' else '!'} {run.status}[/bold] in {result.directory}")
    console.print(f"  summary:  {run.summary.strip()[:500]}")
    console.print(f"  files:    {', '.join(result.files) or '(none)'}")
    if result.tests:
        verdict = "[green]pass[/green]" if result.tests.passed else "[red]FAIL[/red]"
        console.print(f"  tests:    {result.tests.command} → {verdict}")
        console.print("            " + (result.tests.output_tail.splitlines() or [""])[-1])
    else:
        console.print("  tests:    none found")
    if result.setup:
        console.print(f"  set-up:   {result.setup.describe()}", highlight=False)
    if result.diff_stat:
        console.print("  diff:     " + result.diff_stat.replace("\n", "\n            "))
    if result.git:
        print_git(console, result.git)
    elif result.commit:
        console.print(f"  commit:   {result.commit[:12]}")
    console.print(
        f"  steps {s.steps} · tokens {s.prompt_tokens} prompt ({s.cache_reuse:.0%} cached after turn 1) / "
        f"{s.completion_tokens} generated · {s.tokens_per_second:.1f} tok/s · wall {run.wall_seconds:.0f}s"
    )
    console.print(f"  transcript: {result.transcript}")


def print_git(console: Console, git: GitReport) -> None:
    """Where the run's work is, how many checkpoints, and what happened to the user's own changes."""
    n = len(git.checkpoints)
    kind = "squashed into 1 commit" if git.squashed and n else f"{n} checkpoint{'s' * (n != 1)}"
    where = f"{git.branch} ({kind}, from {git.start_commit[:10]}" + (f" on {git.start_branch})" if git.start_branch else ")")
    console.print(f"  branch:   {where if git.branch else 'none: the changes were not kept'}", highlight=False)
    if git.head:
        undo = "agent undo" if git.checked_out == git.branch else f"agent undo --branch {git.branch}"
        console.print(f"  commit:   {git.head[:12]}  ·  checked out: {git.checked_out}  ·  undo a step: {undo}", highlight=False)
    for note in git.notes:
        console.print(f"  git:      {note}", highlight=False)
