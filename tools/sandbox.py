"""Where project or model code may reach: bubblewrap around it on Linux, and limits on processes, memory
and file size. Everything that runs such code (the bash tool, the project's tests, project MCP servers) goes
through `wrap_command` (or `tools.shell.run_command`, built on it): the one boundary.

`wrap_command(argv, workspace, policy)` turns a command into the argv that runs it under the policy, plus a
`cleanup` to call once it has ended. Under bubblewrap (`bwrap`, Debian package `bubblewrap`) the whole
filesystem is read-only, `/tmp` is a private tmpfs of bounded size, `/run` and the user's other socket
places are empty, the workspace is writable (`workspace-write`) or not (`read-only`) while every `.git` in it
stays read-only, the usual secret locations in `$HOME` are hidden, there is no network unless the policy
allows it, the command gets its own PID namespace (everything in it dies when the command ends) and no
capabilities (root included). `full-access` runs the command as it is, limits still applied.

Limits: processes and memory per command (tools/limits.py), RLIMIT_DATA per process, RLIMIT_FSIZE for file
size. `sandbox_status()` says what is in force (`agent doctor`).

It imports only tools/hidden.py and tools/limits.py (tools.base imports it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from tools.hidden import agent_folders, hidden_paths, home_sockets, socket_places, under
from tools.limits import memory_group, nothing, process_limiter

SandboxMode = Literal["read-only", "workspace-write", "full-access"]

BWRAP = "bwrap"  # looked up on PATH; tests point it at a missing binary to take the no-sandbox path

INSTALL_HINT = (
    "install bubblewrap: `sudo apt-get install bubblewrap` (Debian/Ubuntu) or `sudo dnf install bubblewrap` "
    "(Fedora/RHEL). macOS has no bubblewrap: there commands always run unsandboxed (own process group, "
    "timeout, allow-listed environment, but full access to your files and the network). "
    'Set sandbox = "full-access" in the config to run unsandboxed on purpose and silence this warning'
)


class SandboxPolicy(BaseModel):
    """What a command may touch. Part of `ToolPolicy` (tools.base)."""

    mode: SandboxMode = "workspace-write"
    network: bool = False
    max_processes: int = Field(default=256, ge=0, description="processes+threads per command; 0: no limit")
    extra_writable: list[str] = []  # more folders writable in workspace-write mode
    allow_env: list[str] = []  # environment names (or NAME_* patterns) commands may see (config `tool_env`)
    env: dict[str, str] = {}  # set for commands on top of the allow-list (the project's .venv first on PATH)
    max_memory_mb: int = Field(
        default=8192,
        ge=0,
        description="memory per process (RLIMIT_DATA) and per command (cgroup, where writable); 0: no limit",
    )
    max_file_mb: int = Field(default=2048, ge=0, description="largest file a command may write (RLIMIT_FSIZE); 0: none")
    tmp_size_mb: int = Field(default=1024, ge=0, description="size of the private /tmp (bwrap --size); 0: no cap")


# --- bubblewrap ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BwrapProbe:
    path: str | None
    version: str | None = None
    problem: str | None = None  # why it cannot be used
    sized_tmp: bool = False  # supports `--size` for the private /tmp (older releases do not)

    @property
    def ok(self) -> bool:
        return self.problem is None


_bwrap_probes: dict[str, BwrapProbe] = {}


def probe_bwrap(name: str | None = None) -> BwrapProbe:
    """Find bwrap and run one tiny sandbox with every flag we use; cached per binary name."""
    name = name or BWRAP
    if name in _bwrap_probes:
        return _bwrap_probes[name]
    if not sys.platform.startswith("linux"):
        probe = BwrapProbe(None, problem=f"bubblewrap is Linux-only (this is {sys.platform})")
    elif (path := shutil.which(name)) is None:
        probe = BwrapProbe(None, problem=f"bubblewrap ({name}) is not installed")
    else:
        probe = _self_test(path)
    _bwrap_probes[name] = probe
    return probe


def _self_test(path: str) -> BwrapProbe:
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        test = subprocess.run(
            [*_bwrap_base(path), "--unshare-net", "--", "true"],
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return BwrapProbe(path, problem=f"{path} could not run: {exc}")
    if test.returncode != 0:
        why = (test.stderr.strip().splitlines() or [f"exit code {test.returncode}"])[-1]
        return BwrapProbe(
            path,
            version or None,
            problem=f"{path} fails its self-test ({why}); user namespaces "
            "may be disabled (sysctl kernel.unprivileged_userns_clone / apparmor) or this is a container",
        )
    try:
        sized = (
            subprocess.run(
                [*_bwrap_base(path, 1 << 20), "--unshare-net", "--", "true"],
                capture_output=True,
                timeout=20,
                stdin=subprocess.DEVNULL,
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        sized = False
    return BwrapProbe(path, version or "bubblewrap", sized_tmp=sized)


def _bwrap_base(path: str, tmp_bytes: int = 0) -> list[str]:
    """The part of every sandbox that does not depend on the workspace: read-only root, fresh /dev and
    /proc, a private /tmp (`tmp_bytes` > 0: that size at most), and /run (/var/run) replaced by an empty
    tmpfs, so the host's unix sockets there (systemd user bus, docker.sock, dbus) are out of reach: a
    read-only bind does not stop connect() on a socket."""
    args = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for covered in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
        args += ["--ro-bind-try", covered, covered]  # kernel tunables stay read-only, even for uid 0
    args += ["--size", str(tmp_bytes)] if tmp_bytes > 0 else []
    args += ["--tmpfs", "/tmp"]
    for run in RUN_DIRS:
        if os.path.isdir(run) and not os.path.islink(run):
            args += ["--tmpfs", run]
    return args + ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


RUN_DIRS = ("/run", "/var/run")  # runtime state and sockets of the host's services
RESOLV_CONF = Path("/etc/resolv.conf")


def _kept_under_tmp(home: Path) -> list[Path]:
    """Host folders below /tmp that commands need to see (read-only): $HOME, this Python's installation
    (a virtual environment in a checkout under /tmp, as in CI) and the folders on PATH."""
    candidates = [home, Path(sys.prefix), Path(sys.base_prefix)]
    candidates += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    kept: list[Path] = []
    for path in candidates:
        path = path.resolve()
        if under(path, Path("/tmp")) and path != Path("/tmp") and path.is_dir() and path not in kept:
            kept.append(path)
    return kept


def bwrap_argv(
    bwrap: str,
    argv: list[str],
    workspace: Path,
    policy: SandboxPolicy,
    home: Path | None = None,
    *,
    sized_tmp: bool = False,
) -> list[str]:
    """`argv` inside bubblewrap for `workspace` under `policy` (mode read-only or workspace-write).
    `sized_tmp`: this bwrap supports `--size`, so the private /tmp gets `policy.tmp_size_mb`."""
    workspace = Path(workspace).resolve()
    home = Path(home or Path.home())
    args = _bwrap_base(bwrap, policy.tmp_size_mb << 20 if sized_tmp else 0)
    if policy.network:  # DNS: /etc/resolv.conf often points into the hidden /run (systemd-resolved)
        resolv = Path(RESOLV_CONF).resolve()
        if resolv.is_file() and any(under(resolv, Path(run)) for run in RUN_DIRS):
            args += ["--ro-bind", str(resolv), str(resolv)]
    for shown in _kept_under_tmp(home):  # the private /tmp must not hide $HOME, Python or PATH tools
        args += ["--ro-bind", str(shown), str(shown)]
    writable = policy.mode == "workspace-write"
    args += ["--bind" if writable else "--ro-bind", str(workspace), str(workspace)]
    if writable:
        for extra in policy.extra_writable:
            path = Path(extra).expanduser().resolve()
            if path.exists():
                args += ["--bind", str(path), str(path)]
        for protected in git_folders(workspace):  # after the writable binds: nothing re-opens them
            # -try: a dangling `.git` link (or one removed since the walk) must not make every command fail
            args += ["--ro-bind-try", str(protected.resolve()), str(protected)]
    for place in socket_places(home):  # after the workspace: a socket inside it is covered too
        if not under(workspace, place):
            args += ["--tmpfs", str(place)] if place.is_dir() else ["--ro-bind", "/dev/null", str(place)]
    hidden = hidden_paths(home)
    for secret in hidden:
        if workspace == secret or secret in workspace.parents:
            continue  # never hide the workspace itself
        args += (
            ["--tmpfs", str(secret), "--remount-ro", str(secret)]
            if secret.is_dir()
            else ["--ro-bind", "/dev/null", str(secret)]
        )
    for socket in home_sockets(home, [workspace, *hidden]):
        args += ["--ro-bind", "/dev/null", str(socket)]
    if writable:  # a workspace holding the agent's caches ($HOME) must not make them writable
        for cache in agent_folders()[1]:
            real = cache.resolve()
            if real.is_dir() and under(real, workspace) and real != workspace:
                args += ["--ro-bind", str(real), str(real)]
    if not policy.network:
        args.append("--unshare-net")
    return args + ["--chdir", str(workspace), "--", *argv]


GIT_WALK_BUDGET = 100_000  # entries looked at per command (about half a second); past it, fail closed


def git_folders(workspace: Path, budget: int | None = None) -> list[Path]:
    """What must stay read-only in a writable workspace: every `.git` (folder, gitfile or link) at any
    depth, and the git directory a gitfile inside the workspace points to. The walk is breadth first, does
    not follow links and does not enter `.git` folders; dependency folders (node_modules, .venv, target) are
    walked like the rest, since a repository in them is as dangerous. Past `budget` entries (default
    GIT_WALK_BUDGET) the folders it has not finished are returned too, so they are read-only for that
    command: a huge tree loses write access in its far corners rather than a nested repository going
    unprotected."""
    budget = GIT_WALK_BUDGET if budget is None else budget
    protected: list[Path] = []
    queue, seen = deque([str(workspace)]), 0
    while queue:
        folder = queue.popleft()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > budget:
                        return protected + _fewer([Path(folder), *map(Path, queue)], workspace)
                    if entry.name == ".git":
                        protected.append(Path(entry.path))
                        protected += _gitfile_target(Path(entry.path), workspace)
                    elif entry.is_dir(follow_symlinks=False):
                        queue.append(entry.path)
        except OSError:
            continue
    return protected


MAX_UNWALKED_BINDS = 1000  # keeps bwrap's argv far below the kernel's limit


def _fewer(folders: list[Path], workspace: Path) -> list[Path]:
    """At most MAX_UNWALKED_BINDS folders covering `folders`: while there are more, each is replaced by its
    parent (never above the workspace), which covers more than needed, never less."""
    while len(folders) > MAX_UNWALKED_BINDS:
        if workspace in folders or all(f.parent == workspace for f in folders):
            return [workspace]  # the whole workspace read-only for this command
        parents = {f if f.parent == workspace else f.parent for f in folders}
        folders = [p for p in parents if not any(q in p.parents for q in parents)]
    return folders


def _gitfile_target(git: Path, workspace: Path) -> list[Path]:
    """The folder a `.git` file (`gitdir: PATH`) names, when it is inside the workspace and not a `.git`."""
    try:
        if not git.is_file() or git.is_symlink():
            return []
        with git.open("rb") as handle:
            first = handle.read(4096).decode(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return []
    if not first.startswith("gitdir:"):
        return []
    target = (git.parent / first[len("gitdir:") :].strip()).resolve()
    inside = target != workspace and under(target, workspace) and ".git" not in target.relative_to(workspace).parts
    return [target] if inside and target.is_dir() else []


# --- putting it together ------------------------------------------------------------------------------


@dataclass
class WrappedCommand:
    argv: list[str]
    sandboxed: bool  # runs under bubblewrap
    cleanup: Callable[[], None] = nothing  # call once the command has ended (and its group is killed)
    out_of_memory: Callable[[], bool] = lambda: False  # before cleanup: the command's memory cgroup hit its cap
    env: dict[str, str] = field(default_factory=dict)  # environment overrides for inside the sandbox
    warning: str | None = None  # set the first time a command runs unsandboxed against the policy


_warned = False


def wrap_command(
    argv: list[str], workspace: Path, policy: SandboxPolicy | None, *, home: Path | None = None
) -> WrappedCommand:
    """`argv` as it runs under `policy` (None: as it is). Without a usable bwrap the command still runs,
    unsandboxed, and a warning is printed once per process.

    The API for anything that runs project code and lives on (a project MCP server): start `.argv` with the
    environment `tools.shell.command_environment(policy.allow_env, extra=.env)` in its own session, and call
    `.cleanup()` once it has ended (it removes the command's cgroups, killing what is left in them)."""
    if policy is None:
        return WrappedCommand(list(argv), sandboxed=False)
    processes, end_processes = process_limiter().prepare(policy.max_processes)
    memory, end_memory, out_of_memory = memory_group().prepare(policy.max_memory_mb)
    limits = [*processes, *memory, *resource_limits(policy)]

    def cleanup() -> None:
        end_processes()
        end_memory()

    if policy.mode == "full-access":
        return WrappedCommand([*limits, *argv], sandboxed=False, cleanup=cleanup, out_of_memory=out_of_memory)
    probe = probe_bwrap()
    if not probe.ok or probe.path is None:
        return WrappedCommand(
            [*limits, *argv], sandboxed=False, warning=_warn_once(probe), cleanup=cleanup, out_of_memory=out_of_memory
        )
    inner = bwrap_argv(probe.path, list(argv), workspace, policy, home, sized_tmp=probe.sized_tmp)
    return WrappedCommand(
        [*limits, *inner], sandboxed=True, env={"TMPDIR": "/tmp"}, cleanup=cleanup, out_of_memory=out_of_memory
    )


def commands_sandboxed(policy: SandboxPolicy) -> bool:
    """Whether commands under `policy` run inside bubblewrap here (not full-access, and bwrap works)."""
    return policy.mode != "full-access" and probe_bwrap().ok


def resource_limits(policy: SandboxPolicy) -> list[str]:
    """An argv prefix that sets the memory and file size limits (hard, so the command cannot raise them)
    and then becomes the command. Memory is RLIMIT_DATA, not RLIMIT_AS: it counts what a process writes to
    (heap, anonymous mappings), not the address space that node, java or go reserve up front, so those
    runtimes start as usual; a process past it gets allocation failures (MemoryError, ENOMEM)."""
    if not (policy.max_memory_mb or policy.max_file_mb):
        return []
    data = str(policy.max_memory_mb * 1024) if policy.max_memory_mb else "unlimited"  # KiB
    size = str(policy.max_file_mb * 1024) if policy.max_file_mb else "unlimited"  # bash counts 1024-byte blocks
    return ["bash", "-c", 'ulimit -d "$1" -f "$2" || exit 126; shift 2; exec "$@"', "sandbox-limits", data, size]


def limit_notice(policy: SandboxPolicy, exit_code: int | None, output: str, out_of_memory: bool = False) -> str | None:
    """Name the sandbox limit a failed command most likely ran into, with the setting that raises it.
    `out_of_memory`: the command's memory cgroup hit its cap (a process in it was killed)."""
    if exit_code in (None, 0):
        return None
    if out_of_memory:
        return (
            f"the command was stopped at the sandbox's memory limit ({policy.max_memory_mb} MiB, "
            "max_memory_mb); use less memory or raise the limit"
        )
    if policy.max_file_mb and (
        exit_code in (128 + signal.SIGXFSZ, -signal.SIGXFSZ)
        or "File too large" in output
        or "File size limit exceeded" in output
    ):
        return (
            f"the command hit the sandbox's file size limit ({policy.max_file_mb} MiB per file, "
            "max_file_mb); write smaller files or raise the limit"
        )
    if policy.max_memory_mb and any(sign in output for sign in MEMORY_SIGNS):
        return (
            f"the command ran out of memory under the sandbox's limit ({policy.max_memory_mb} MiB, "
            "max_memory_mb); use less memory or raise the limit"
        )
    return None


def _mib(n: int) -> str:
    return f"{n} MiB" if n else "none"


MEMORY_SIGNS = (
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
    "bad_alloc",
    "memory allocation of",
    "OutOfMemoryError",
    "heap out of memory",
)


def _warn_once(probe: BwrapProbe) -> str | None:
    global _warned
    if _warned:
        return None
    _warned = True
    message = f"warning: commands run WITHOUT a sandbox: {probe.problem}; {INSTALL_HINT}."
    print(message, file=sys.stderr, flush=True)
    return message


@dataclass(frozen=True)
class SandboxStatus:
    available: bool
    bwrap: str | None
    version: str | None
    problem: str | None
    process_limit: str
    limits: str = ""  # memory, file size and /tmp size in force

    def summary(self) -> str:
        where = (
            f"{self.version} ({self.bwrap}): commands run sandboxed (default workspace-write, no network, "
            "host sockets hidden)"
            if self.available
            else f"NONE: {self.problem}; {INSTALL_HINT}"
        )
        return f"{where}; process limit: {self.process_limit}; {self.limits}"


def sandbox_status(policy: SandboxPolicy | None = None) -> SandboxStatus:
    """What is in force on this machine for `policy` (default: the default policy): bubblewrap (path,
    version) or why not, the process limit, and the memory, file size and /tmp limits."""
    policy = policy or SandboxPolicy()
    probe = probe_bwrap()
    tmp = (_mib(policy.tmp_size_mb) if probe.sized_tmp else "no cap (this bwrap has no --size)") if probe.ok else "n/a"
    whole = " and per command (cgroup v1 memory controller)" if memory_group().parent else ""
    limits = (
        f"memory: {_mib(policy.max_memory_mb)} per process (RLIMIT_DATA){whole}; file size (RLIMIT_FSIZE): "
        f"{_mib(policy.max_file_mb)}; private /tmp: {tmp}"
    )
    return SandboxStatus(probe.ok, probe.path, probe.version, probe.problem, process_limiter().description, limits)
