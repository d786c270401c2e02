"""Fixtures for the agent's own git: a repository armed with every way it can make git run a command."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

HOOKS = [
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "post-rewrite",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
]


class Traps:
    """Planted commands that each leave a marker file (outside the repository) when they run."""

    def __init__(self, markers: Path):
        self.markers = markers

    def cmd(self, name: str) -> str:
        return f"touch {self.markers}/{name}"

    def plant(self, path: Path) -> None:
        """Hooks, fsmonitor, filter/diff/merge drivers named by .gitattributes, an external diff."""
        hooks = path / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        for name in HOOKS:
            (hooks / name).write_text(f"#!/bin/sh\n{self.cmd('hook-' + name)}\n")
            (hooks / name).chmod(0o755)
        (path / ".gitattributes").write_text("* filter=Evil diff=evil merge=evil\n")  # driver names keep their case
        with git.Repo(path).config_writer() as config:
            config.set_value("core", "fsmonitor", f"{self.cmd('fsmonitor')}; false")
            config.set_value('filter "Evil"', "clean", f"{self.cmd('clean')}; cat")
            config.set_value('filter "Evil"', "smudge", f"{self.cmd('smudge')}; cat")
            config.set_value('diff "evil"', "textconv", f"{self.cmd('textconv')}; cat")
            config.set_value('merge "evil"', "driver", f"{self.cmd('merge')}; false")
            config.set_value("diff", "external", f"{self.cmd('external-diff')}; false")

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


@pytest.fixture
def traps(tmp_path_factory) -> Traps:
    return Traps(tmp_path_factory.mktemp("ran"))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with one commit (a.py), and sessions kept under tmp_path (XDG_STATE_HOME)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = tmp_path / "r"
    r = git.Repo.init(path, initial_branch="main")
    (path / "a.py").write_text("x = 1\n")
    r.git.add("a.py")
    r.index.commit("initial", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return path
