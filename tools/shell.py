"""Run a shell command in the workspace: own process group, hard timeout, bounded output, no secrets."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult

SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL)", re.I)


def scrubbed_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without anything that looks like a secret (tokens, API keys, passwords)."""
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env.update(extra or {})
    return env


class CappedOutput:
    """Keeps the first and last `limit/2` bytes of a stream of any size, and counts what it dropped."""

    def __init__(self, limit: int):
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= self.half:
                self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half :] if self.tail else b""
        cut = self.total - len(self.head) - len(tail)
        head_text = self.head.decode("utf-8", errors="replace")
        if cut <= 0:
            return head_text + tail.decode("utf-8", errors="replace")
        return (
            f"{head_text}\n[... {cut} bytes of output cut: showing the first and last {self.half} bytes; "
            f"narrow the command (grep, head, tail) to see the middle ...]\n{tail.decode('utf-8', errors='replace')}"
        )


class CommandOutcome(BaseModel):
    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float


def run_command(command: str, cwd: Path, timeout: float, max_output: int) -> CommandOutcome:
    """Run `command` with bash in its own process group; the whole group dies at timeout or when it ends."""
    started = time.monotonic()
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=scrubbed_environment(),
    )
    captured = CappedOutput(max_output)
    reader = threading.Thread(target=_pump, args=(proc, captured), daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(proc.pid)  # also reaps background children left behind by the command
        proc.wait()
    reader.join(timeout=2)
    if reader.is_alive():  # something escaped the group and holds the pipe open
        proc.stdout.close()
    return CommandOutcome(
        exit_code=None if timed_out else proc.returncode,
        output=captured.text(),
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def _pump(proc: subprocess.Popen, captured: CappedOutput) -> None:
    try:
        while chunk := proc.stdout.read1(65536):
            captured.add(chunk)
    except (OSError, ValueError):
        pass


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class BashParams(BaseModel):
    command: str = Field(description="A bash command, run in the workspace root.")
    timeout: float | None = Field(default=None, description="Seconds before the command is killed (optional).")


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a bash command in the project directory and return its exit code and output. "
        "Use it to run tests and programs, install nothing globally. Background processes are stopped when "
        "the command ends."
    )
    Params = BashParams

    def run(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        limit = ctx.policy.command_timeout
        timeout = min(params.timeout, limit) if params.timeout and params.timeout > 0 else limit
        outcome = run_command(params.command, ctx.workspace, timeout, ctx.policy.max_output_chars)
        if outcome.timed_out:
            return ToolResult.error(
                f"command timed out after {timeout:.0f}s and was killed (with its child processes).\n"
                f"output so far:\n{outcome.output}"
            )
        body = outcome.output if outcome.output.strip() else "(no output)"
        hint = _hint(outcome)
        return ToolResult(output=f"exit code {outcome.exit_code}\n{body}{hint}", is_error=outcome.exit_code != 0)


def _hint(outcome: CommandOutcome) -> str:
    """Name the usual cause of failures small models misread."""
    if outcome.exit_code == 5 and "no tests ran" in outcome.output:
        return "\nhint: pytest found no tests. Write test files named test_*.py with functions named test_*."
    if outcome.exit_code == 127:
        return "\nhint: command not found; check its name, or use python -m <module>."
    return ""
