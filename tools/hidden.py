"""What a sandboxed command must not see in the user's home: credentials and what commonly holds them, the
agent's own folders, and the user's service sockets. tools/sandbox.py covers them in every command; the file
tools refuse the same paths (tools/workspace.py).

It imports only inference/paths.py, where the agent's folders are computed."""

from __future__ import annotations

import os
import stat
from collections import deque
from pathlib import Path

# Relative to $HOME: credentials and what commonly holds them (shell start-up files export tokens, histories
# hold pasted ones, other agents keep their keys and transcripts). Directories are covered by an empty read-only
# tmpfs, files by /dev/null; only those that exist. The file tools refuse the same paths (tools/workspace.py).
HIDDEN_IN_HOME = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".config/rclone",
    ".local/share/keyrings",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".bash_history",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zsh_history",
    ".histfile",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".viminfo",
    ".claude",
    ".claude.json",
    ".codex",
    ".config/dflash-agent",
    ".local/share/dflash-agent",
    ".local/state/dflash-agent",
)


def agent_folders() -> tuple[list[Path], list[Path]]:
    """The agent's own folders, as inference/paths.py computes them (hidden: config, data and state, which hold
    settings, approvals and transcripts; read-only: the caches, which hold models, engines and the offline
    wheelhouse that sandboxed installs read). No tool writes into any of them, whatever the workspace."""
    from inference.paths import cache_dir, config_dir, data_dir, platform_cache_dir, state_dir

    caches = list(dict.fromkeys([platform_cache_dir(), cache_dir()]))
    return [config_dir(), data_dir(), state_dir()], caches


def socket_places(home: Path) -> list[Path]:
    """Where this user's service sockets live besides /run: the $XDG_RUNTIME_DIR folder and the ssh-agent
    socket ($SSH_AUTH_SOCK). Abstract sockets are reachable only with `network` on
    (they belong to the network namespace)."""
    places: list[Path] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        places.append(Path(runtime).resolve())
    agent = os.environ.get("SSH_AUTH_SOCK")
    if agent and Path(agent).exists():
        places.append(Path(agent).resolve())
    # Covered even under /tmp or /run: the workspace, $HOME or a tool folder may be bound back from there.
    return [p for p in places if p != Path("/") and p != home]


def hidden_paths(home: Path, *, existing: bool = True) -> list[Path]:
    """The secret locations under `home` and the agent's own config, data and state folders, symlinks
    resolved. `existing=False`: also those not there yet (what a file tool must not create)."""
    candidates = [home / rel for rel in HIDDEN_IN_HOME] + agent_folders()[0]
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        candidates += [Path(xdg) / "gh"]
    seen: list[Path] = []
    for path in candidates:
        if not existing or path.exists():
            real = path.resolve()
            if real not in seen and real != Path("/"):
                seen.append(real)
    return seen


SOCKET_SCAN_DEPTH = 4  # folders below $HOME looked into for unix sockets
SOCKET_SCAN_BUDGET = 5_000  # entries looked at, so a large home costs milliseconds, not seconds


def home_sockets(home: Path, skip: list[Path]) -> list[Path]:
    """Unix sockets in $HOME (an editor's or agent's control socket, a gpg or ssh agent): a read-only mount
    does not stop connect(), so each is covered. Breadth first, links not followed, `skip` (the workspace,
    hidden folders) not entered, bounded by SOCKET_SCAN_DEPTH and SOCKET_SCAN_BUDGET."""
    found: list[Path] = []
    queue: deque[tuple[str, int]] = deque([(str(home), 0)])
    seen = 0
    skipped = {str(p) for p in skip}
    while queue and seen < SOCKET_SCAN_BUDGET:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if entry.path in skipped:
                        continue
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    if stat.S_ISSOCK(mode):
                        found.append(Path(entry.path))
                    elif stat.S_ISDIR(mode) and depth < SOCKET_SCAN_DEPTH:
                        queue.append((entry.path, depth + 1))
        except OSError:
            continue
    return found


def under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder)
        return True
    except ValueError:
        return False
