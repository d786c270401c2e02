"""Git operations the workflows need (the model's own git use goes through bash).

Paths go to git as `:(literal)` pathspecs from explicit lists, so a file name is never read as a glob and
build junk (`__pycache__`, virtualenvs, ...) is never committed or stashed, even in a repo without a
`.gitignore`.

The agent's git runs outside the sandbox, so nothing a repository configures may make it execute code: every
Repo comes from `open_repo`/`init_repo`, whose environment (`locked_environment`) turns off hooks, fsmonitor,
pagers, editors, credential helpers, and the filter/diff/merge drivers the repository's own config defines.
The overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, which git passes on to the git processes it starts itself
(in submodules too). System and global config stay in force: they are the user's, not the repository's.
Nested repositories are never entered (submodules ignored) and never recorded (see `dirty_paths`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import git

from agent.core.errors import UserError

DEFAULT_GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.benchmarks/\n.venv/\nnode_modules/\ntarget/\n"
FALLBACK_ACTOR = git.Actor("dflash-agent", "dflash-agent@localhost")
JUNK_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv", "venv", "node_modules"}
JUNK_SUFFIXES = (".pyc", ".pyo")


FAIL = "exit 1"  # a shell builtin: a command git may not run fails without running anything found on PATH
# What the agent's git must never run, whoever configured it; values that switch each thing off.
LOCKED_CONFIG = {
    "core.hooksPath": os.devnull,  # no hook runs (post-commit, post-checkout, reference-transaction ...)
    "core.fsmonitor": "false",
    "core.pager": "cat",  # git's own spelling of "no pager"
    "core.editor": FAIL,
    "sequence.editor": FAIL,
    "core.sshCommand": FAIL,  # the agent's git never talks to a remote
    "diff.external": FAIL,  # no config value switches it off: `diff` passes --no-ext-diff, others fail
    "credential.helper": "",  # an empty value clears the list of helpers
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "fetch.recurseSubmodules": "false",
}
# Driver commands a repository can name from .gitattributes; an empty command is never run. (A driver marked
# `required` then makes git fail instead of running it: fail closed.)
DRIVER_KEYS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command"), "merge": ("driver",)}
REPO_SCOPES = {"local", "worktree"}  # config the repository controls (system and global are the user's)
DIFF_FLAGS = ("--no-ext-diff", "--no-textconv")  # diff.external cannot be switched off by a config value


class RepoError(UserError, ValueError):
    """The repository cannot be used as it is (missing, not a repository, mid-merge ...)."""


def init_repo(directory: Path) -> git.Repo:
    git.Repo.init(directory)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(DEFAULT_GITIGNORE)
    return open_repo(directory)


def open_repo(directory: Path) -> git.Repo:
    """The repository at exactly `directory`, with every git command it runs locked down (see the module doc)."""
    if not directory.exists():
        raise RepoError(f"{directory} does not exist, so it is not a git repository; check the path")
    try:
        repo = git.Repo(directory, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise RepoError(f"{directory} is not a git repository; run `git init` there first") from exc
    repo.git.update_environment(
        **locked_environment(Path(repo.working_tree_dir or directory)), **identity_environment(repo)
    )
    return repo


# Operations a repository can be in the middle of: (what the git dir holds, the operation, how to end it).
UNFINISHED = [
    ("rebase-merge", "a rebase", "`git rebase --continue` or `git rebase --abort`"),
    ("rebase-apply/applying", "`git am`", "`git am --continue` or `git am --abort`"),
    ("rebase-apply", "a rebase", "`git rebase --continue` or `git rebase --abort`"),
    ("MERGE_HEAD", "a merge", "finish it with `git commit` or undo it with `git merge --abort`"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "`git cherry-pick --continue` or `git cherry-pick --abort`"),
    ("REVERT_HEAD", "a revert", "`git revert --continue` or `git revert --abort`"),
    ("BISECT_LOG", "a bisect", "end it with `git bisect reset`"),
]


def git_said(exc: git.GitCommandError) -> str:
    """The first line git wrote to stderr, for an error message."""
    said = str(exc.stderr or "").strip().removeprefix("stderr:").strip(" '\n").splitlines()
    return said[0] if said else f"git {exc.command[1] if len(exc.command) > 1 else ''} failed"


def check_ready(repo: git.Repo) -> None:
    """Refuse a repository in the middle of a merge, rebase, cherry-pick, revert, am or bisect, or with
    unresolved conflicts: stashing, branching or resetting there would lose that state."""
    where = repo.working_tree_dir
    for name, operation, fix in UNFINISHED:
        if os.path.lexists(Path(repo.git_dir) / name):
            raise RepoError(f"{where} is in the middle of {operation}; {fix}, then run the agent again")
    conflicts = sorted({line.split("\t", 1)[1] for line in repo.git.ls_files("-u", "-z").split("\0") if "\t" in line})
    if conflicts:
        raise RepoError(
            f"{where} has unresolved conflicts in {', '.join(conflicts[:5])}"
            f"{' ...' if len(conflicts) > 5 else ''}; resolve them and `git add` the files, then run the "
            "agent again"
        )


def locked_environment(root: Path) -> dict[str, str]:
    """Environment for git commands in `root` that makes git run nothing the repository configured: for
    GitPython (`repo.git.update_environment`) and for plain subprocesses alike."""
    overrides = dict(LOCKED_CONFIG)
    for key in _repository_driver_keys(root):
        overrides[key] = ""
    start = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)  # keep overrides the user's environment has
    env = {"GIT_CONFIG_COUNT": str(start + len(overrides))}
    for i, (key, value) in enumerate(overrides.items(), start):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def _repository_driver_keys(root: Path) -> list[str]:
    """The filter/diff/merge driver commands set in the repository's own config (includes followed). Fails
    closed: a config git cannot list is an error, not an empty list."""
    run = subprocess.run(
        ["git", "config", "--null", "--list", "--show-scope"],
        cwd=root,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_COUNT": "0"},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if run.returncode != 0:
        said = run.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RepoError(
            f"cannot read the git config of {root} ({said[0] if said else 'git config failed'}); "
            "fix it (the agent needs git 2.26 or newer)"
        )
    fields = run.stdout.decode("utf-8", "replace").split("\0")  # scope, "key\nvalue", scope, ...
    keys = []
    for scope, entry in zip(fields[::2], fields[1::2]):
        key = entry.split("\n", 1)[0]  # section and name come lower-cased; a subsection keeps its case
        section, _, rest = key.partition(".")
        if scope in REPO_SCOPES and "." in rest and rest.rsplit(".", 1)[1] in DRIVER_KEYS.get(section, ()):
            keys.append(key)
    return keys


def identity_environment(repo: git.Repo) -> dict[str, str]:
    """Author/committer for git commands we run (commit, stash), so they work where no identity is set."""
    actor = _actor(repo)
    name, email = actor.name or "", actor.email or ""
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def commit_all(repo: git.Repo, message: str) -> str | None:
    """Stage everything git does not ignore (nested repositories excepted) and commit; None when there is
    nothing to commit."""
    return commit_paths(repo, dirty_paths(repo), message)


def _actor(repo: git.Repo) -> git.Actor:
    reader = repo.config_reader()
    name = str(reader.get_value("user", "name", default=""))
    email = str(reader.get_value("user", "email", default=""))
    return git.Actor(name, email) if name and email else FALLBACK_ACTOR


def is_junk(path: str) -> bool:
    parts = path.split("/")
    return any(p in JUNK_DIRS or p.endswith(".egg-info") for p in parts[:-1]) or parts[-1].endswith(JUNK_SUFFIXES)


def dirty_paths(repo: git.Repo) -> list[str]:
    """Every path with uncommitted work: tracked changes (staged or not) and untracked files, minus junk and
    nested repositories (see `nested_repos`: `git add` would record them as gitlinks)."""
    return _status(repo)[0]


def nested_repos(repo: git.Repo) -> list[str]:
    """Untracked folders that are git repositories of their own (`sub/`): the agent never commits, stashes or
    enters them."""
    return _status(repo)[1]


def _status(repo: git.Repo) -> tuple[list[str], list[str]]:
    entries = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all").split("\0")
    paths: list[str] = []
    nested: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            if path.endswith("/"):  # with --untracked-files=all only a repository is listed as a folder
                nested.append(path)
            elif not is_junk(path):
                paths.append(path)
            continue
        paths.append(path)
        if "R" in code or "C" in code:  # a rename's source follows as its own entry
            paths.append(entries[i])
            i += 1
    return sorted(set(paths)), sorted(nested)


def literal(paths: list[str]) -> list[str]:
    return [f":(literal){p}" for p in paths]


def commit_paths(repo: git.Repo, paths: list[str], message: str) -> str | None:
    """Stage exactly `paths` (additions, changes and deletions) and commit; None when nothing is staged."""
    if not paths:
        return None
    repo.git.add("-A", "--", *literal(paths))
    if not diff(repo, "--cached", "--name-only"):
        return None
    repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "-m", message)  # checkpoints never wait on hooks or keys
    return repo.head.commit.hexsha


def snapshot(repo: git.Repo, ref: str, message: str) -> str | None:
    """The working tree as it is now, uncommitted and never-committed files included (what `dirty_paths`
    lists: not ignored, junk and nested repositories excepted), as a commit on top of HEAD stored under `ref`.
    Built in a temporary index (a copy of the real one, so only changed files are read), so neither the index
    nor the working tree changes. None when there is nothing uncommitted (HEAD already holds it all)."""
    paths = dirty_paths(repo)
    if not paths:
        return None
    with tempfile.TemporaryDirectory(prefix="dflash-agent-index-") as folder:
        index = Path(folder) / "index"
        real = Path(repo.git_dir) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if real.is_file():
            shutil.copyfile(real, index)
        else:
            repo.git.read_tree("HEAD", env=env)
        repo.git.add("-A", "--", *literal(paths), env=env)
        tree = repo.git.write_tree(env=env)
    sha = repo.git.commit_tree(tree, "-p", "HEAD", "-m", message)
    repo.git.update_ref(ref, sha)
    return sha


def restore_snapshot(repo: git.Repo, sha: str) -> list[str]:
    """Make the working tree what snapshot `sha` holds, leaving HEAD and the index where they are (the
    restored work is uncommitted again, as it was). Returns the paths it put back or removed."""
    changed = names(diff(repo, "--no-renames", "--name-only", "-z", "HEAD", sha))
    if not changed:
        return []
    gone = set(names(diff(repo, "--no-renames", "--name-only", "-z", "--diff-filter=D", "HEAD", sha)))
    present = [p for p in changed if p not in gone]
    if present:
        repo.git.checkout(sha, "--", *literal(present))
    root = Path(repo.working_tree_dir or ".")
    for path in gone:
        with contextlib.suppress(FileNotFoundError):
            (root / path).unlink()
    repo.git.reset("-q")  # the index back to HEAD: the work is uncommitted, as before
    return changed


def diff(repo: git.Repo, *args: str) -> str:
    """`git diff` that never runs an external diff or textconv command."""
    return repo.git.diff(*DIFF_FLAGS, *args)


def changed_since(repo: git.Repo, base: str, tip: str = "HEAD") -> list[str]:
    """Paths that differ between two commits."""
    return names(diff(repo, "--no-renames", "--name-only", "-z", base, tip))


def names(listing: str) -> list[str]:
    """Paths from a `-z` listing: exactly as named, never C-quoted (a name may hold quotes or escapes)."""
    return sorted(p for p in listing.split("\0") if p)


def diff_stat_since(repo: git.Repo, base: str, tip: str = "HEAD") -> str:
    return diff(repo, "--stat", base, tip)


def stash_paths(repo: git.Repo, paths: list[str], message: str) -> str:
    """Stash the work in `paths` (untracked files included); returns the stash commit's sha."""
    repo.git.stash("push", "--include-untracked", "-m", message, "--", *literal(paths))
    return repo.git.rev_parse("stash@{0}")


def _stash_untracked(repo: git.Repo, sha: str) -> list[str]:
    """A stash made with untracked files keeps them in a third parent commit."""
    if len(repo.commit(sha).parents) < 3:
        return []
    return names(repo.git.ls_tree("-r", "--name-only", "-z", f"{sha}^3"))


def restore_stash(repo: git.Repo, sha: str) -> list[str]:
    """Apply a stash on the checked-out commit and drop it, unless that could clash with what is there now.
    Returns the clashing paths (empty when restored); on a clash the stash is kept untouched."""
    root = Path(repo.working_tree_dir or ".")
    busy = set(changed_since(repo, f"{sha}^1", "HEAD")) | set(dirty_paths(repo))
    tracked = names(diff(repo, "--no-renames", "--name-only", "-z", f"{sha}^1", sha))
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
