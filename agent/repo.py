"""Git operations the workflows need (the model's own git use goes through bash).

Paths go to git as `:(literal)` pathspecs from explicit lists, so a file name is never read as a glob and
build junk (`__pycache__`, virtualenvs, ...) is never committed or stashed, even in a repo without a
`.gitignore`."""

from __future__ import annotations

import os
from pathlib import Path

import git

DEFAULT_GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.benchmarks/\n.venv/\nnode_modules/\ntarget/\n"
FALLBACK_ACTOR = git.Actor("dflash-agent", "dflash-agent@localhost")
JUNK_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv", "venv", "node_modules"}
JUNK_SUFFIXES = (".pyc", ".pyo")


def init_repo(directory: Path) -> git.Repo:
    repo = git.Repo.init(directory)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(DEFAULT_GITIGNORE)
    return repo


def open_repo(directory: Path) -> git.Repo:
    try:
        repo = git.Repo(directory, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ValueError(f"{directory} is not a git repository; run `git init` there first") from exc
    repo.git.update_environment(**identity_environment(repo))
    return repo


def identity_environment(repo: git.Repo) -> dict[str, str]:
    """Author/committer for git commands we run (commit, stash), so they work where no identity is set."""
    actor = _actor(repo)
    return {"GIT_AUTHOR_NAME": actor.name, "GIT_AUTHOR_EMAIL": actor.email,
            "GIT_COMMITTER_NAME": actor.name, "GIT_COMMITTER_EMAIL": actor.email}


def commit_all(repo: git.Repo, message: str) -> str | None:
    """Stage everything git does not ignore and commit; None when there is nothing to commit."""
    repo.git.add(A=True)
    if repo.head.is_valid() and not repo.index.diff("HEAD"):
        return None
    actor = _actor(repo)
    return repo.index.commit(message, author=actor, committer=actor).hexsha


def _actor(repo: git.Repo) -> git.Actor:
    reader = repo.config_reader()
    name = reader.get_value("user", "name", default="")
    email = reader.get_value("user", "email", default="")
    return git.Actor(name, email) if name and email else FALLBACK_ACTOR


def is_junk(path: str) -> bool:
    parts = path.split("/")
    return any(p in JUNK_DIRS or p.endswith(".egg-info") for p in parts[:-1]) or parts[-1].endswith(JUNK_SUFFIXES)


def dirty_paths(repo: git.Repo) -> list[str]:
    """Every path with uncommitted work: tracked changes (staged or not) and untracked files, minus junk."""
    entries = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all").split("\0")
    paths: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            if not is_junk(path):
                paths.append(path)
            continue
        paths.append(path)
        if "R" in code or "C" in code:  # a rename's source follows as its own entry
            paths.append(entries[i])
            i += 1
    return sorted(set(paths))


def literal(paths: list[str]) -> list[str]:
    return [f":(literal){p}" for p in paths]


def commit_paths(repo: git.Repo, paths: list[str], message: str) -> str | None:
    """Stage exactly `paths` (additions, changes and deletions) and commit; None when nothing is staged."""
    if not paths:
        return None
    repo.git.add("-A", "--", *literal(paths))
    if not repo.git.diff("--cached", "--name-only"):
        return None
    repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "-m", message)  # checkpoints never wait on hooks or keys
    return repo.head.commit.hexsha


def changed_since(repo: git.Repo, base: str, tip: str = "HEAD") -> list[str]:
    """Paths that differ between two commits."""
    return sorted(p for p in repo.git.diff("--no-renames", "--name-only", base, tip).splitlines() if p)


def diff_stat_since(repo: git.Repo, base: str, tip: str = "HEAD") -> str:
    return repo.git.diff("--stat", base, tip)


def changed_files(repo: git.Repo) -> list[str]:
    """Paths that differ from HEAD, untracked ones included (what a run changed, if it started clean)."""
    lines = repo.git.status("--porcelain", "--untracked-files=all").splitlines()
    return sorted(line[3:].strip('"') for line in lines if line.strip())


def diff_stat(repo: git.Repo) -> str:
    """`git diff --stat` against HEAD for tracked files (new files are listed by `changed_files`)."""
    return repo.git.diff("HEAD", "--stat") if repo.head.is_valid() else ""


def stash_paths(repo: git.Repo, paths: list[str], message: str) -> str:
    """Stash the work in `paths` (untracked files included); returns the stash commit's sha."""
    repo.git.stash("push", "--include-untracked", "-m", message, "--", *literal(paths))
    return repo.git.rev_parse("stash@{0}")


def _stash_untracked(repo: git.Repo, sha: str) -> list[str]:
    """A stash made with untracked files keeps them in a third parent commit."""
    if len(repo.commit(sha).parents) < 3:
        return []
    return repo.git.ls_tree("-r", "--name-only", f"{sha}^3").splitlines()


def restore_stash(repo: git.Repo, sha: str) -> list[str]:
    """Apply a stash on the checked-out commit and drop it, unless that could clash with what is there now.
    Returns the clashing paths (empty when restored); on a clash the stash is kept untouched."""
    root = Path(repo.working_tree_dir or ".")
    busy = set(changed_since(repo, f"{sha}^1", "HEAD")) | set(dirty_paths(repo))
    tracked = repo.git.diff("--no-renames", "--name-only", f"{sha}^1", sha).splitlines()
    untracked = _stash_untracked(repo, sha)
    clashes = [p for p in tracked if p in busy] + [p for p in untracked if p in busy or os.path.lexists(root / p)]
    if clashes:
        return sorted(set(clashes))
    try:
        repo.git.stash("apply", "--index", sha)
    except git.GitCommandError:
        repo.git.stash("apply", sha)  # the index could not be rebuilt: the contents still come back, unstaged
    entries = repo.git.stash("list", "--format=%H").splitlines()
    if sha in entries:
        repo.git.stash("drop", f"stash@{{{entries.index(sha)}}}")
    return []
