"""Run a shell command in the workspace: sandboxed, own process group, hard timeout, bounded output, no secrets."""

from __future__ import annotations

import fnmatch
import io
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.sandbox import SandboxPolicy, limit_notice, wrap_command
from tools.secrets import SECRET_NAME, redact_secrets

# What a command sees of the agent's environment: an allow-list. Locale, terminal, who and where, the active
# virtual environment and where toolchains live (rustup, cargo, java); nothing else (no PYTHONPATH: the agent's
# own import path must not leak into a project's tests; no proxies: their URLs often carry a password).
# `tool_env` in the config adds names.
ENV_ALLOWED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "VIRTUAL_ENV",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "JAVA_HOME",
)


def command_environment(allow: Iterable[str] = (), extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets: the allow-listed names (ENV_ALLOWED plus `allow`; `NAME_*` patterns
    work) that are set here. A name that looks like a secret (TOKEN, KEY, SECRET, PASSWORD, ...) passes only
    when `allow` names it exactly, never through a pattern."""
    allow = list(allow)
    exact = {name for name in allow if not _is_pattern(name)}
    patterns = [*ENV_ALLOWED, *(name for name in allow if _is_pattern(name))]
    env = {}
    for name, value in os.environ.items():
        if name in exact or (not SECRET_NAME.search(name) and any(fnmatch.fnmatchcase(name, p) for p in patterns)):
            env[name] = value
    env.update(extra or {})
    return env


def _is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


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
    sandboxed: bool = False  # ran under bubblewrap
    warning: str | None = None  # the once-per-process "no sandbox" warning, when this run produced it


def run_command(command: str, cwd: Path, timeout: float, max_output: int, sandbox: SandboxPolicy) -> CommandOutcome:
    """Run `command` with bash in its own process group; the whole group dies at timeout or when it ends.
    The one way project or model code runs (bash tool, the project's tests): always under a `sandbox`
    policy, which has no default on purpose; bubblewrap (tools/sandbox.py) with the process, memory and file
    size limits; it sees the environment names the policy allows besides the default allow-list."""
    started = time.monotonic()
    wrapped = wrap_command(["bash", "-c", command], Path(cwd), sandbox)
    env = command_environment(sandbox.allow_env, extra={**sandbox.env, **wrapped.env})
    try:
        proc = subprocess.Popen(
            wrapped.argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except BaseException:
        wrapped.cleanup()
        raise
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
        out_of_memory = wrapped.out_of_memory()
        wrapped.cleanup()  # kills what is left in the command's process cgroup, if it has one
    reader.join(timeout=2)
    if reader.is_alive() and proc.stdout is not None:  # something escaped the group and holds the pipe open
        proc.stdout.close()
    exit_code = None if timed_out else proc.returncode
    output = captured.text()
    if notice := limit_notice(sandbox, exit_code, output, out_of_memory):
        output += f"\n[sandbox: {notice}]"
    return CommandOutcome(
        exit_code=exit_code,
        output=redact_secrets(output),
        timed_out=timed_out,
        seconds=time.monotonic() - started,
        sandboxed=wrapped.sandboxed,
        warning=wrapped.warning,
    )


def _pump(proc: subprocess.Popen[bytes], captured: CappedOutput) -> None:
    assert isinstance(proc.stdout, io.BufferedReader)  # stdout=PIPE, binary
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
    preview_syntax = "bash"

    def command(self, arguments: dict[str, Any]) -> str | None:
        command = arguments.get("command")
        return command if isinstance(command, str) else None

    def subject(self, arguments: dict[str, Any]) -> str:
        return self.command(arguments) or self.name

    def preview(self, arguments: dict[str, Any], workspace: Path) -> str:
        return self.command(arguments) or super().preview(arguments, workspace)

    def run(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        limit = ctx.policy.command_timeout
        timeout = min(params.timeout, limit) if params.timeout and params.timeout > 0 else limit
        outcome = run_command(params.command, ctx.workspace, timeout, ctx.policy.max_output_chars, ctx.policy.sandbox)
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
