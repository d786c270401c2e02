"""Nothing lost, whatever the command: each destructive command an adversary found the approval check letting
through runs for real, under the default sandbox (real bubblewrap, real git), in a chat whose user left
modified and never-committed files between messages; `/undo` brings back every file byte for byte."""

from __future__ import annotations

import io
import os
from pathlib import Path

import git
import pytest
from rich.console import Console

from agent.settings.config import Config
from agent.ui.chat import open_chat
from agent.ui.chat_display import ChatDisplay
from tools.sandbox import probe_bwrap

BWRAP = probe_bwrap()
needs_bwrap = pytest.mark.skipif(not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem}")

DESTRUCTIVE = [
    "rm -rf [a-z]*",
    "ln -s ~ h && rm -rf h/",
    "git checkout-index -f -a",
    "git read-tree --reset -u HEAD",
    "git update-ref -d HEAD",
    "find . -type f -exec cp /dev/null {} \\;",
]
WRITE_NEW = "I will add new.txt.\n<write_file>\n<path>new.txt</path>\n<content>\nnew\n</content>\n</write_file>"
FINISH = "<finish><summary>done</summary></finish>"


def contents(root: Path) -> dict[str, bytes | str]:
    """Every file and link below `root` (not .git), links as their target: what must come back."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d))]
        for name in files + [d for d in os.listdir(folder) if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            found[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else path.read_bytes()
    return found


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A repository below $HOME (so `~` reaches it from inside the sandbox) with tracked files."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = tmp_path / "r"
    (path / "src").mkdir(parents=True)
    (path / "a.py").write_text("x = 1\n")
    (path / "keep.txt").write_text("unchanged\n")
    (path / "src" / "m.py").write_text("def f():\n    return 1\n")
    (path / "data.bin").write_bytes(bytes(range(256)))
    repo = git.Repo.init(path, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return path


@needs_bwrap
@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_undo_brings_back_every_file_after_a_destructive_command(workspace, scripted, command):
    backend = scripted(
        [WRITE_NEW, FINISH, f"Cleaning up.\n<bash>\n<command>{command}</command>\n</bash>", FINISH, FINISH, FINISH]
    )
    display = ChatDisplay(Console(file=io.StringIO()), workspace)
    with open_chat(workspace, Config(), display, backend=backend) as session:
        session.send("add new.txt")
        # the user's own work between two messages: a tracked file modified, another deleted, a new one
        (workspace / "a.py").write_text("x = 2  # mine, never committed\n")
        (workspace / "keep.txt").unlink()
        (workspace / "src" / "notes.txt").write_bytes(b"\x00\x01 never committed\n")
        before = contents(workspace)
        session.send("clean up")
        session.undo()
        assert contents(workspace) == before, command
