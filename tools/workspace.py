"""Confine paths to the workspace, and walk it the way git sees it (.gitignore respected)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pathspec

from tools.base import ToolError
from tools.hidden import agent_folders, hidden_paths

ALWAYS_SKIPPED = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", ".venv"}


def resolve_inside(workspace: Path, path: str, *, for_write: bool = False) -> Path:
    """Resolve `path` (relative to the workspace, or absolute) following symlinks; refuse anything outside."""
    if not path or "\x00" in path:
        raise ToolError("path is empty or contains a NUL byte")
    try:
        candidate = Path(path).expanduser()
    except RuntimeError:  # `~name` where no user is called name (found by tests/tools/test_fuzz_tools.py)
        raise ToolError(
            f"path {path!r} starts with the home of no user here; use a path inside the workspace"
        ) from None
    try:
        resolved = (candidate if candidate.is_absolute() else workspace / candidate).resolve()
    except RuntimeError:  # Python 3.11 reports a symlink loop this way
        raise ToolError(f"path {path!r} goes through a symlink loop; use a path without it") from None
    if resolved != workspace and workspace not in resolved.parents:
        raise ToolError(f"path {path!r} is outside the workspace ({workspace}); use a path inside it")
    if covered := _hidden_cover(workspace, resolved, existing=not for_write):
        raise ToolError(
            f"path {path!r} is hidden from the agent's tools ({covered}: secrets or the agent's own settings, "
            "hidden from commands too); leave it alone"
        )
    if for_write and (own := _agent_folder(resolved)):
        raise ToolError(f"refusing to write into the agent's own folder {own} ({path!r}); no tool writes there")
    if for_write and (".git" in resolved.relative_to(workspace).parts or _in_git_dir(workspace, resolved)):
        raise ToolError(
            f"refusing to write inside .git or another git directory ({path!r}); use git commands "
            "to change the repository"
        )
    return resolved


def _hidden_cover(workspace: Path, path: Path, *, existing: bool = True) -> Path | None:
    """The hidden location (tools/sandbox.py: secrets in $HOME, the agent's config, data and state) that
    holds `path`, unless it also holds the whole workspace (the sandbox never hides the workspace either).
    `existing=False`: also locations not there yet, so a write cannot create one."""
    for hidden in hidden_paths(Path.home(), existing=existing):
        if (path == hidden or hidden in path.parents) and not (workspace == hidden or hidden in workspace.parents):
            return hidden
    return None


def _agent_folder(path: Path) -> Path | None:
    """The agent's own folder (config, data, state, caches) that holds `path`: never written by a tool."""
    hidden, caches = agent_folders()
    for folder in [*hidden, *caches]:
        real = folder.resolve()
        if path == real or real in path.parents:
            return real
    return None


def hidden_in(workspace: Path) -> set[Path]:
    """The hidden locations inside `workspace` (when it is $HOME or above), for walks to skip."""
    return {
        h
        for h in hidden_paths(Path.home())
        if workspace in h.parents and not (workspace == h or h in workspace.parents)
    }


def _link_stays_visible(workspace: Path, target: Path, hidden: set[Path]) -> bool:
    """A link's target is inside the workspace and not in a hidden location."""
    return workspace in target.parents and not any(target == h or h in target.parents for h in hidden)


def _in_git_dir(workspace: Path, path: Path) -> bool:
    """Whether a folder between the workspace and `path` is a git directory not named .git (a bare repo, or
    the one a `.git` file points to): what git itself checks, HEAD with objects/ and refs/ beside it."""
    for folder in path.parents:
        if folder == workspace or workspace not in folder.parents:
            return False
        if (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir():
            return True
    return False


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_folder(workspace: Path, folder: Path, *, create: bool = False) -> int:
    """A directory fd for `folder` (inside `workspace`), reached one component at a time from the workspace
    with O_NOFOLLOW: a symlink or a `.git` anywhere on the way is refused, even one planted after the path
    was resolved. `create`: make missing folders. The caller closes the fd."""
    parts = folder.relative_to(workspace).parts
    if ".git" in parts:
        raise ToolError(f"refusing to write inside .git ({relative(workspace, folder)}); use git commands")
    fd = os.open(workspace, DIR_FLAGS)
    try:
        for part in parts:
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise ToolError(
                    f"{relative(workspace, folder)}: {part!r} is a symlink or not a folder; "
                    "files are written only through real folders inside the workspace"
                ) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def relative(workspace: Path, path: Path) -> str:
    return path.relative_to(workspace).as_posix() or "."


def iter_files(workspace: Path, start: Path) -> Iterator[Path]:
    """Files under `start`, sorted, skipping what .gitignore files (at any level) and ALWAYS_SKIPPED exclude."""
    specs: list[tuple[Path, pathspec.PathSpec[Any]]] = []
    for ancestor in reversed([start, *start.parents]):
        if ancestor == workspace or workspace in ancestor.parents:
            _load_gitignore(ancestor, specs)
    yield from _walk(workspace, start, specs, hidden_in(workspace))


def _load_gitignore(folder: Path, specs: list[tuple[Path, pathspec.PathSpec[Any]]]) -> None:
    ignore_file = folder / ".gitignore"
    if ignore_file.is_file():
        lines = ignore_file.read_text(errors="replace").splitlines()
        specs.append((folder, pathspec.GitIgnoreSpec.from_lines(lines)))


def _ignored(path: Path, is_dir: bool, specs: list[tuple[Path, pathspec.PathSpec[Any]]]) -> bool:
    for base, spec in specs:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False


def _walk(
    workspace: Path, start: Path, specs: list[tuple[Path, pathspec.PathSpec[Any]]], hidden: set[Path]
) -> Iterator[Path]:
    """Depth first in name order, with an explicit stack: a folder nested thousands deep is no RecursionError."""
    stack = [_open_level(start, specs)]
    while stack:
        entries, local = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name in ALWAYS_SKIPPED or _ignored(path, is_dir, local) or (hidden and path in hidden):
            continue
        if is_dir:
            stack.append(_open_level(path, local))
        elif entry.is_file() and (not entry.is_symlink() or _link_stays_visible(workspace, path.resolve(), hidden)):
            yield path


def _open_level(
    folder: Path, inherited: list[tuple[Path, pathspec.PathSpec[Any]]]
) -> tuple[Iterator[os.DirEntry[str]], list[tuple[Path, pathspec.PathSpec[Any]]]]:
    """One folder's entries (sorted) and the .gitignore rules in force in it."""
    local = list(inherited)
    if folder not in [base for base, _ in inherited]:
        _load_gitignore(folder, local)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        entries = []
    return iter(entries), local
