"""Git operations the workflows need (the model's own git use goes through bash)."""

from __future__ import annotations

from pathlib import Path

import git

DEFAULT_GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.benchmarks/\n.venv/\n"
FALLBACK_ACTOR = git.Actor("dflash-agent", "dflash-agent@localhost")


def init_repo(directory: Path) -> git.Repo:
    repo = git.Repo.init(directory)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(DEFAULT_GITIGNORE)
    return repo


def open_repo(directory: Path) -> git.Repo:
    try:
        return git.Repo(directory, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ValueError(f"{directory} is not a git repository; run `git init` there first") from exc


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


def changed_files(repo: git.Repo) -> list[str]:
    """Paths that differ from HEAD, untracked ones included (what a run changed, if it started clean)."""
    lines = repo.git.status("--porcelain", "--untracked-files=all").splitlines()
    return sorted(line[3:].strip('"') for line in lines if line.strip())


def diff_stat(repo: git.Repo) -> str:
    """`git diff --stat` against HEAD for tracked files (new files are listed by `changed_files`)."""
    return repo.git.diff("HEAD", "--stat") if repo.head.is_valid() else ""
