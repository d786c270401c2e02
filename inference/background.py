"""The server `agent serve --background` leaves running: its state file (PIDs with their start times), whether
the recorded process is still that process, and stopping it and its workers, never a PID reused since."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel

from inference.paths import state_dir


class ServerState(BaseModel):
    """What `agent serve --status/--stop` need to find a background server again."""

    pid: int
    url: str
    profile: str
    log: str
    workers: list[int] = []  # local RPC workers' process ids, stopped with the server
    # each process's start time (psutil), so a PID the system has since given to another process is never killed
    started: dict[int, float] = {}


def state_file() -> Path:
    return state_dir() / "server.json"


def stop_process_group(pid: int, grace: float = 10.0, child: subprocess.Popen | None = None) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds. With `child` (the group's leader, our own child process), its
    exit ends the wait (an exited child stays in the group as a zombie until it is reaped) and what is left of
    the group is killed."""
    try:
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if child is not None and child.poll() is not None:
                break
            os.killpg(pid, 0)
            time.sleep(0.2)
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def read_state() -> ServerState | None:
    try:
        return ServerState.model_validate_json(state_file().read_text())
    except (OSError, ValueError):
        return None


def started_at(pid: int) -> float | None:
    """When process `pid` started (None: no such process, or not ours to see)."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.Error, ValueError, OverflowError):
        return None


def is_recorded_process(state: ServerState, pid: int) -> bool:
    """Whether `pid` is still the process the state file recorded: alive, started when it was recorded, and
    leading its own process group (ours are started so, and the group is what is stopped). A state file from
    before start times were recorded, a reused PID or a hand-edited file (`pid: 1`) name no process of ours."""
    recorded, now = state.started.get(pid), started_at(pid) if pid > 1 else None
    if recorded is None or now is None or abs(now - recorded) > 0.5:
        return False
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def background_status() -> tuple[ServerState | None, bool]:
    """The recorded background server and whether its process is still alive (and still that process)."""
    state = read_state()
    if state is None:
        return None, False
    return state, is_recorded_process(state, state.pid)


def stop_background() -> ServerState | None:
    """Stop the recorded server and its workers, each only if it is still the process recorded; the state
    file is removed. Returns the state when the server was stopped, None when there was none to stop."""
    state, alive = background_status()
    if state and alive:
        stop_process_group(state.pid)
    for worker in state.workers if state else []:
        if is_recorded_process(state, worker):  # type: ignore[arg-type]  # state is set when there are workers
            stop_process_group(worker, grace=5.0)
    state_file().unlink(missing_ok=True)
    return state if alive else None


def dump_state(state: ServerState) -> str:
    return json.dumps(state.model_dump(), indent=2)
