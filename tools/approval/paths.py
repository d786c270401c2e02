"""Where a path argument points, and why deleting or writing it needs a person."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

MAX_PATH_CHARS = 4096  # longer than PATH_MAX: not a path the OS takes; and keeps resolving linear
SAFE_DEVICES = {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom"}
GLOB = re.compile(r"[*?\[]")


def normal(raw: str, cwd: Path | None) -> Path | None:
    """Where a path argument points (symlinks followed), or None when it cannot be known here."""
    if not raw or "\x00" in raw or len(raw) > MAX_PATH_CHARS:
        return None
    try:
        expanded = os.path.expanduser(raw)
        if expanded.startswith("~"):
            return None
        if os.path.isabs(expanded):
            return Path(os.path.realpath(expanded))
        if cwd is None or len(str(cwd)) + len(expanded) > MAX_PATH_CHARS:
            return None
        return _below(str(cwd), expanded)
    except (UnicodeError, ValueError, OSError):  # lone surrogates and the like: not a path the OS could use
        return None


def _below(resolved: str, relative: str) -> Path:
    """realpath(resolved/relative) for an already resolved folder: only the new parts are looked at, so a
    chain of `cd`s costs linear time, not the square of its length."""
    current = resolved
    for part in relative.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        current = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
    return Path(current)


def delete_target_problem(
    raw: str, cwd: Path | None, workspace: Path, *, allow_root: bool = False, allow_git: bool = False
) -> str | None:
    """Why deleting `raw` recursively needs a person, or None for a path strictly inside the workspace
    (`allow_root`: the workspace itself is fine too, for `find . -name x -delete`)."""
    if not raw or raw == "{}":
        return None
    parts = raw.split("/")
    globbed = next((i for i, p in enumerate(parts) if GLOB.search(p)), None)
    base_raw = raw if globbed is None else "/".join(parts[:globbed]) or ("/" if raw.startswith("/") else ".")
    base = normal(base_raw, cwd)
    if base is None:
        return f"`{raw}` cannot be resolved here (an unknown user, or a folder after a cd that may fail or is unknown)"
    home = Path(os.path.realpath(Path.home()))
    if base == Path("/"):
        what = "the root of the filesystem"
    elif base == home:
        what = "your home folder"
    elif base != workspace and base in workspace.parents:
        what = f"a folder that contains the workspace ({base})"
    elif base != workspace and workspace not in base.parents:
        what = f"outside the workspace ({base})"
    elif base == workspace and not allow_root and (globbed is None or _broad(parts[globbed])):
        what = "the whole workspace"
    else:
        what = None
    if what:
        return f"`{raw}` is {what}"
    if not allow_git:
        later = parts[globbed:] if globbed is not None else []
        matches_git = any(p == ".git" or (p.startswith(".") and fnmatch.fnmatchcase(".git", p)) for p in later)
        if ".git" in base.relative_to(workspace).parts or matches_git:  # (`*` skips dot files in bash)
            return f"`{raw}` is (or holds) a repository's .git internals"
    return None


def _broad(part: str) -> bool:
    return part.strip("*?") == "" or part in (".*", "*.*", ".[!.]*", "..?*")


def git_internal(raw: str, cwd: Path | None, workspace: Path) -> str | None:
    """Why writing `raw` changes a repository's internals (any `.git` folder, nested ones too), or None."""
    if not raw or "\x00" in raw:
        return None
    if ".git" not in raw.split("/"):
        resolved = normal(raw, cwd)  # a symlink may still lead into .git
        if resolved is None or ".git" not in resolved.parts:
            return None
    return f"writes into .git internals (`{raw}`); use git commands to change the repository"


def write_target_problem(raw: str, cwd: Path | None, workspace: Path) -> str | None:
    if raw.startswith("/dev/"):
        if raw in SAFE_DEVICES or raw.startswith(("/dev/fd/", "/dev/pts/")):
            return None
        return f"writes raw data to the device {raw}"
    return git_internal(raw, cwd, workspace)
