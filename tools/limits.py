"""Limits on what one sandboxed command may use: processes (a best-effort chain, probed once: a cgroup v1
`pids` controller we may write to, a delegated cgroup v2 subtree, `systemd-run --user --scope -p TasksMax=N`,
and RLIMIT_NPROC, which the kernel does not enforce for root) and memory for the whole command (a cgroup v1
memory group where one is writable). tools/sandbox.py applies them around every command.

This module imports nothing from the rest of the project."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# --- process limit ------------------------------------------------------------------------------------


@dataclass
class ProcessLimiter:
    """One way to bound a command's process count; `prepare(n)` gives an argv prefix and a cleanup."""

    kind: Literal["cgroup-v1", "cgroup-v2", "systemd-run", "rlimit", "none"]
    description: str
    parent: Path | None = None  # cgroup folder under which each command gets its own group

    def prepare(self, limit: int) -> tuple[list[str], Callable[[], None]]:
        if limit <= 0 or self.kind == "none":
            return [], nothing
        if self.kind in ("cgroup-v1", "cgroup-v2") and self.parent is not None:
            group = self.parent / f"dflash-agent-{os.getpid()}-{next(_group_ids)}"
            try:
                group.mkdir()
                (group / "pids.max").write_text(str(limit))
            except OSError:
                _remove_group(group)
                return [], nothing
            # The wrapper shell joins the group, then becomes the command: everything it starts is counted.
            join = 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"'
            return ["sh", "-c", join, "sh", str(group / "cgroup.procs")], lambda: _remove_group(group)
        if self.kind == "systemd-run":
            return [
                "systemd-run",
                "--user",
                "--scope",
                "--quiet",
                "--collect",
                "-p",
                f"TasksMax={limit}",
                "--",
            ], nothing
        # RLIMIT_NPROC counts every task of the user, so the limit is what runs now plus the allowance.
        ceiling = _user_tasks() + limit
        return ["bash", "-c", 'ulimit -S -u "$1" 2>/dev/null; shift; exec "$@"', "bash", str(ceiling)], nothing


_group_ids = itertools.count()
_limiter: ProcessLimiter | None = None


def nothing() -> None:
    pass


def _remove_group(group: Path) -> None:
    """Kill whatever is still in the group (a process that left our process group), then remove it."""
    deadline = time.monotonic() + 3
    while True:
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


def process_limiter() -> ProcessLimiter:
    """The first process limit that works here (probed once per process)."""
    global _limiter
    if _limiter is None:
        _limiter = (
            _cgroup_v1()
            or _cgroup_v2()
            or _systemd_scope()
            or _rlimit()
            or ProcessLimiter(
                "none",
                "none: running as root (RLIMIT_NPROC is not enforced for uid 0) without a writable pids "
                "cgroup or systemd user scope; a fork bomb is bounded only by the timeout",
            )
        )
    return _limiter


def _own_cgroup(controller: str) -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            wanted = controller in controllers.split(",") if controller else controllers == ""  # "": cgroup v2
            if wanted:
                return path
    except (OSError, ValueError):
        pass
    return None


def _try_group_in(parent: Path, limit_file: str = "pids.max") -> bool:
    for stale in parent.glob("dflash-agent-*"):  # left by an agent process that died mid-command
        pid = stale.name.split("-")[-2] if stale.name.count("-") >= 3 else ""
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove_group(stale)
    probe = parent / f"dflash-agent-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        (probe / limit_file).write_text(str(16 << 20) if limit_file.startswith("memory") else "16")
        return True
    except OSError:
        return False
    finally:
        _remove_group(probe)


def _cgroup_v1() -> ProcessLimiter | None:
    root = Path("/sys/fs/cgroup/pids")
    own = _own_cgroup("pids")
    if own is None or not (root / "cgroup.procs").exists():
        return None
    parent = root / own.lstrip("/")
    if os.access(parent, os.W_OK) and _try_group_in(parent):
        return ProcessLimiter("cgroup-v1", f"cgroup v1 pids controller (pids.max per command under {parent})", parent)
    return None


def _cgroup_v2() -> ProcessLimiter | None:
    root = Path("/sys/fs/cgroup")
    own = _own_cgroup("")
    if own is None or not (root / "cgroup.controllers").exists():
        return None
    parent = root / own.lstrip("/")
    try:
        if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
            return None  # not delegated to us with pids enabled (enabling it here would move our own process)
    except OSError:
        return None
    if os.access(parent, os.W_OK) and _try_group_in(parent):
        return ProcessLimiter("cgroup-v2", f"cgroup v2 pids controller (delegated subtree {parent})", parent)
    return None


def _systemd_scope() -> ProcessLimiter | None:
    if not shutil.which("systemd-run"):
        return None
    try:
        done = subprocess.run(
            ["systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "TasksMax=16", "--", "true"],
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return ProcessLimiter("systemd-run", "systemd user scope (systemd-run --user --scope -p TasksMax=N)")


def _rlimit() -> ProcessLimiter | None:
    if os.geteuid() == 0 or not shutil.which("bash"):
        return None
    return ProcessLimiter("rlimit", "RLIMIT_NPROC (ulimit -u: tasks of this user now + the allowance)")


def _user_tasks() -> int:
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += sum(1 for _ in (entry / "task").iterdir())
            except OSError:
                pass
    return count


# --- memory limit for the whole command ------------------------------------------------------------


@dataclass
class MemoryGroup:
    """A cgroup v1 memory controller we may write to: each command gets a group capped at the policy's
    memory, so the command as a whole (every process it starts) cannot take more; the kernel kills a
    process in it when the cap is reached. Where there is none, RLIMIT_DATA per process is the only cap."""

    parent: Path | None

    def prepare(self, limit_mb: int) -> tuple[list[str], Callable[[], None], Callable[[], bool]]:
        """argv prefix that joins a fresh group, its cleanup, and a check whether the cap was hit."""
        if self.parent is None or limit_mb <= 0:
            return [], nothing, lambda: False
        group = self.parent / f"dflash-agent-{os.getpid()}-{next(_group_ids)}"
        try:
            group.mkdir()
            (group / "memory.limit_in_bytes").write_text(str(limit_mb << 20))
            with contextlib.suppress(OSError):  # no swap accounting: the cap on memory alone
                (group / "memory.memsw.limit_in_bytes").write_text(str(limit_mb << 20))
        except OSError:
            _remove_group(group)
            return [], nothing, lambda: False
        join = 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"'
        return (
            ["sh", "-c", join, "sh", str(group / "cgroup.procs")],
            lambda: _remove_group(group),
            lambda: _oom_kills(group) > 0,
        )


def _oom_kills(group: Path) -> int:
    """Processes the kernel killed in the group for its cap (`oom_kill` in memory.oom_control, Linux 4.13+)."""
    try:
        for line in (group / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


_memory_group: MemoryGroup | None = None


def memory_group() -> MemoryGroup:
    """The writable cgroup v1 memory controller here, if any (probed once per process)."""
    global _memory_group
    if _memory_group is None:
        root, own = Path("/sys/fs/cgroup/memory"), _own_cgroup("memory")
        parent = root / own.lstrip("/") if own is not None else None
        usable = (
            parent is not None
            and (root / "cgroup.procs").exists()
            and os.access(parent, os.W_OK)
            and _try_group_in(parent, "memory.limit_in_bytes")
        )
        _memory_group = MemoryGroup(parent if usable else None)
    return _memory_group
