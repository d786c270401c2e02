"""Git checkpoints: a run works on its own branch, commits after each step that changed files, and puts
the user's uncommitted work aside first (stashed, then restored) so nothing of theirs is ever lost.

Every commit a run makes carries an `Agent-Run:` trailer; `undo` only ever moves back over such commits."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import git
from pydantic import BaseModel

from agent.core.loop import AgentEvents
from agent.core.toolcalls import ParsedCall
from agent.git import repo as gitrepo
from agent.settings.config import Config
from inference.backends.backend import Completion
from tools.base import ToolResult

TRAILER = "Agent-Run"
SNAPSHOT_TRAILER = "Agent-Snapshot"  # the snapshot of the working tree taken before the checkpoint's step
ATTEMPTS_REF = "refs/dflash-agent/attempts"  # failed refactor attempts, kept off every branch
SNAPSHOTS_REF = "refs/dflash-agent/snapshots"  # the working tree before a step, where it held uncommitted work


class Checkpoint(BaseModel):
    step: int
    commit: str
    subject: str
    files: list[str]


class GitReport(BaseModel):
    """Where a run's work is and what happened to the user's own work."""

    branch: str  # the branch holding the run's commits ("" when they were discarded)
    start_branch: str | None  # the branch checked out when the run began (None: detached HEAD)
    start_commit: str
    checked_out: str  # what is checked out now
    checkpoints: list[Checkpoint]
    squashed: bool = False
    head: str | None = None  # the run's last commit (None: it committed nothing)
    files: list[str] = []  # changed versus start_commit
    diff_stat: str = ""  # versus start_commit
    stash: str | None = None  # sha of a stash still holding the user's work (None: restored, or none needed)
    notes: list[str] = []  # what happened, in words


class GitRun:
    """One run's git life: creating it puts uncommitted work aside (stash) and starts the branch; then
    `checkpoint` after each step, and at the end `finish` (keep), `discard` (drop) or `abandon` (interrupted)."""

    def __init__(self, path: Path, task: str, config: Config, resume: str | None = None):
        """`resume`: the branch of an earlier run to go on committing to (`agent run --resume`), taken from a
        transcript, a file anyone could write: only a branch this repository confirms as an agent branch
        (`is_run_branch`) is committed to, else the run gets a new branch, never the user's `main`."""
        self.repo = gitrepo.open_repo(path)
        if not self.repo.head.is_valid():
            raise gitrepo.RepoError(f"{path} has no commits yet; commit something first (or use `agent new-project`)")
        gitrepo.check_ready(self.repo)
        self.notes: list[str] = []
        if resume is not None and not is_run_branch(self.repo, resume, config.branch):
            self.notes.append(
                f"the transcript names branch {resume!r}, which is not an agent branch of this repository: this "
                "run works on a new branch of its own"
            )
            resume = None
        self.task, self.config, self.run_id, self.resumed = task, config, secrets.token_hex(3), resume is not None
        self.start_branch = None if self.repo.head.is_detached else self.repo.active_branch.name
        self.home = self.start_branch or self.repo.head.commit.hexsha  # where the user was, and gets back to
        self.checkpoints: list[Checkpoint] = []
        self.last_step, self.squashed, self.attempt = 0, False, 1
        self.nested: set[str] = set()  # nested repositories already reported
        self.stash: str | None = None
        self.snapshot_before: str | None = None  # the snapshot taken before the current step (see `snapshot`)
        self.own_branch = not config.current_branch or self.resumed  # the run works on a branch of its own
        if not self.own_branch and self.start_branch is None:
            raise gitrepo.RepoError("HEAD is detached: there is no current branch to work on; check out a branch first")
        self.branch = resume or (
            branch_name(config.branch, task, self.run_id) if self.own_branch else self.start_branch
        )
        dirty = gitrepo.dirty_paths(self.repo)
        if dirty and config.dirty == "refuse":
            raise gitrepo.RepoError(
                f"{path} has uncommitted changes ({', '.join(dirty[:5])}{' ...' if len(dirty) > 5 else ''}); "
                'commit or stash them, or set dirty = "stash"'
            )
        if dirty:
            self.stash = gitrepo.stash_paths(self.repo, dirty, f"dflash-agent: your work before run {self.run_id}")
            self.notes.append(
                f"your uncommitted changes ({len(dirty)} files) were stashed as {self.stash[:10]} before the run"
            )
        if self.own_branch:
            try:
                self.repo.git.checkout("-q", *([self.branch] if self.resumed else ["-b", self.branch]))
            except git.GitCommandError as exc:
                self._restore_user_work()
                raise gitrepo.RepoError(f"cannot check out {self.branch}: {gitrepo.git_said(exc)}") from None
        self.start_commit = self.repo.head.commit.hexsha  # a resumed run reports what it adds to its branch

    def snapshot(self, step: int) -> str | None:
        """Before a step: keep the working tree as it is, also files never committed (a chat's user may edit
        between messages; a checkpoint may have failed), under refs/dflash-agent/snapshots/, so that undoing
        the step's checkpoint brings every file back exactly. None when HEAD already holds everything."""
        ref = f"{SNAPSHOTS_REF}/{self.run_id}/{step}"
        try:
            self.snapshot_before = gitrepo.snapshot(
                self.repo, ref, f"dflash-agent: the working tree before step {step}"
            )
        except git.GitCommandError as exc:
            self.snapshot_before = None
            self.notes.append(f"the working tree before step {step} could not be kept: {gitrepo.git_said(exc)}")
        return self.snapshot_before

    def checkpoint(
        self,
        step: int,
        completion: Completion | None,
        results: list[tuple[ParsedCall, ToolResult]],
        subject: str | None = None,
    ) -> Checkpoint | None:
        """Commit what this step changed, with a message saying what (calls, files) and why (the model's intent)."""
        self.last_step = max(self.last_step, step)
        paths = gitrepo.dirty_paths(self.repo)
        self._note_nested()
        snapshot, self.snapshot_before = self.snapshot_before, None
        if not paths and not snapshot:
            return None
        intent = subject or _intent(completion.text if completion else "") or _calls(results) or "changes"
        body = f"Tool calls: {_calls(results) or '(none)'}\nFiles: {', '.join(paths) or '(none)'}"
        message = f"agent step {step}: {intent}\n\n{body}\n\n{TRAILER}: {self.run_id}\nAgent-Step: {step}\n"
        if snapshot:
            message += f"{SNAPSHOT_TRAILER}: {snapshot}\n"
        sha = gitrepo.commit_paths(self.repo, paths, message)
        if sha is None and snapshot:
            # The step left HEAD's contents (it threw away the uncommitted work the snapshot holds): an empty
            # checkpoint keeps the way back, so undoing it brings that work back.
            self.repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "--allow-empty", "-m", message)
            sha = self.repo.head.commit.hexsha
        if sha is None:
            return None
        point = Checkpoint(step=step, commit=sha, subject=f"agent step {step}: {intent}", files=paths)
        self.checkpoints.append(point)
        return point

    def restart(self) -> None:
        """Put the working tree back at the run's start for a fresh attempt (agent/strategies/attempts.py). Committed as a
        checkpoint, so the branch shows each attempt; ignored files (.venv) and nested repositories stay."""
        self.attempt += 1
        self.repo.git.restore("--source", self.start_commit, "--worktree", "--", ".")
        self.repo.git.clean("-fdq")
        self.checkpoint(self.last_step, None, [], subject=f"attempt {self.attempt}: back to the start")

    def finish(self, outcome: str, *, squash: bool | None = None, return_to_start: bool | None = None) -> GitReport:
        """Keep the run's commits on its branch (squashed into one if configured) and restore the user's work.
        By default the run's branch stays checked out, unless the user's work was stashed: then the start
        branch is checked out again and their work put back exactly as it was (unless changes the run left
        could not be committed: then everything stays where it is)."""
        committed = self.commit_leftovers("changes left at the end of the run")
        squash = self.config.checkpoints == "squash" if squash is None else squash
        if squash and committed and self.checkpoints and self._on_branch():
            self._squash(outcome)
        report = self._report()
        if committed and ((self.stash is not None) if return_to_start is None else return_to_start):
            self._go_to_start()
        elif not self._on_branch():
            self.notes.append(
                f"the run ended on {self._checked_out()}, not on {self.branch} (the model ran git itself?)"
            )
        self._restore_user_work()
        return self._final(report)

    def discard(self, reason: str) -> GitReport:
        """Take the run's commits off its branch (e.g. verification failed): the start branch is checked out at
        its start commit, the run's own branch deleted, the attempt kept under refs/dflash-agent/attempts/."""
        if not self.commit_leftovers("changes left at the end of the run"):
            self.notes.append(
                f"{reason}, but nothing was discarded: the run's changes could not all be committed"
                + (f"; your own work is in the stash {self.stash[:10]}" if self.stash else "")
            )
            return self._final(self._report())
        report = self._report()
        if report.head:
            ref = f"{ATTEMPTS_REF}/{self.branch}" if self.own_branch else f"{ATTEMPTS_REF}/{self.branch}-{self.run_id}"
            self.repo.git.update_ref(ref, report.head)
            self.notes.append(f"{reason}: the attempt is kept as {ref} (`git diff {self.start_commit[:10]} {ref}`)")
        self._go_to_start()
        if not self.own_branch:
            self.repo.git.reset("-q", "--hard", self.start_commit)  # only the run's own commits: all checkpointed
        elif self.branch in self.repo.heads:
            self.repo.git.branch("-D", self.branch)
        self.notes.append(f"{self.start_branch or 'HEAD'} is untouched at {self.start_commit[:10]}")
        self._restore_user_work()
        return self._final(report.model_copy(update={"branch": ""}))

    def abandon(self, failed: bool = False) -> str | None:
        """An interrupted or failed run: keep what it did as a checkpoint and give the user back their work.
        A run that `failed` before committing anything puts the user back where they were and leaves no new
        branch behind; an interrupted one keeps its branch for `agent run --resume`. Returns the branch
        holding the run's work (None: there is none)."""
        if not self.commit_leftovers("changes left when the run was interrupted"):
            return self.branch  # changes the run left could not be committed: they stay where they are
        empty = failed and self.own_branch and self._report().head is None
        if self.stash is not None or empty:
            self._go_to_start()
        deleted = empty and not self.resumed and self.branch in self.repo.heads and not self._on_branch()
        if deleted:
            self.repo.git.branch("-D", self.branch)
        self._restore_user_work()
        return None if deleted else self.branch

    def _note_nested(self) -> None:
        for path in set(gitrepo.nested_repos(self.repo)) - self.nested:
            self.nested.add(path)
            self.notes.append(
                f"{path} is a git repository of its own: not committed (the agent never records or "
                "enters nested repositories; commit it there, or add it as a submodule yourself)"
            )

    def commit_leftovers(self, subject: str) -> bool:
        """Checkpoint what the last step left; False (with a note) when git could not commit it."""
        try:
            self.checkpoint(self.last_step, None, [], subject=subject)
        except git.GitCommandError as exc:
            self.notes.append(
                f"{subject} could not be committed ({gitrepo.git_said(exc)}); they are uncommitted "
                f"on {self._checked_out()}" + (f", your own work in the stash {self.stash[:10]}" if self.stash else "")
            )
            return False
        return True

    def _final(self, report: GitReport) -> GitReport:
        return report.model_copy(update={"checked_out": self._checked_out(), "stash": self.stash, "notes": self.notes})

    def _squash(self, outcome: str) -> None:
        steps = "\n".join(f"- {c.subject}" for c in self.checkpoints)
        message = (
            f"agent: {self.task.strip().splitlines()[0][:60]}\n\n{outcome.strip()[:800]}\n\n"
            f"Squashed {len(self.checkpoints)} checkpoints:\n{steps}\n\n{TRAILER}: {self.run_id}\nAgent-Step: squash\n"
        )
        self.repo.git.reset("-q", "--soft", self.start_commit)
        self.squashed, self.checkpoints = True, []
        files = gitrepo.names(gitrepo.diff(self.repo, "--cached", "--no-renames", "--name-only", "-z"))
        if files:  # else the steps cancelled out: the branch stays at the start commit
            self.repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "-m", message)
            self.checkpoints = [
                Checkpoint(
                    step=0, commit=self.repo.head.commit.hexsha, subject=message.splitlines()[0], files=sorted(files)
                )
            ]

    def _report(self) -> GitReport:
        head = self.repo.commit(self.branch).hexsha if self.branch in self.repo.heads else self.start_commit
        touched = head != self.start_commit
        return GitReport(
            branch=self.branch,
            start_branch=self.start_branch,
            start_commit=self.start_commit,
            checked_out=self._checked_out(),
            checkpoints=self.checkpoints,
            squashed=self.squashed,
            head=head if touched else None,
            files=gitrepo.changed_since(self.repo, self.start_commit, head) if touched else [],
            diff_stat=gitrepo.diff_stat_since(self.repo, self.start_commit, head) if touched else "",
        )

    def _go_to_start(self) -> None:
        if self._checked_out() != self.home:
            self.repo.git.checkout("-q", self.home)

    def _restore_user_work(self) -> None:
        if self.stash is None:
            return
        clashes = gitrepo.restore_stash(self.repo, self.stash)
        if clashes:
            self.notes.append(
                f"your stashed changes touch files the run changed ({', '.join(clashes[:5])}); they are "
                f"kept in the stash {self.stash[:10]}: apply them with `git stash pop` when ready"
            )
        else:
            self.notes.append(f"your uncommitted changes were restored on {self._checked_out()}")
            self.stash = None

    def _on_branch(self) -> bool:
        return not self.repo.head.is_detached and self.repo.active_branch.name == self.branch

    def _checked_out(self) -> str:
        return self.repo.head.commit.hexsha if self.repo.head.is_detached else self.repo.active_branch.name


class CheckpointEvents:
    """Agent events that commit a checkpoint after each step, then pass everything on to `inner`."""

    def __init__(self, run: GitRun, inner: AgentEvents | None = None):
        self.run, self.inner = run, inner

    def on_text(self, text: str) -> None:
        if self.inner:
            self.inner.on_text(text)

    def on_note(self, text: str) -> None:
        if self.inner:
            self.inner.on_note(text)

    def on_prompt(self, tokens: int, cached: int) -> None:
        forward = getattr(self.inner, "on_prompt", None)  # optional (see AgentEvents)
        if forward:
            forward(tokens, cached)

    def before_calls(self, step: int, calls: list[ParsedCall]) -> None:
        """Before a step's tool calls run: keep the working tree so the step can be undone exactly."""
        if any(call.name != "finish" for call in calls):
            self.run.snapshot(step)

    def on_step(self, step: int, completion: Completion, results: list[tuple[ParsedCall, ToolResult]]) -> None:
        if self.inner:
            self.inner.on_step(step, completion, results)
        try:
            point = self.run.checkpoint(step, completion, results)
        except git.GitCommandError as exc:  # the next checkpoint picks these changes up
            self.on_note(f"checkpoint after step {step} failed: {str(exc).strip()[:300]}")
            return
        if point:
            self.on_note(
                f"checkpoint {point.commit[:8]} on {self.run.branch}: {', '.join(point.files[:4])}"
                + (" ..." if len(point.files) > 4 else "")
            )


def branch_name(template: str, task: str, run_id: str) -> str:
    """Render the branch template ({slug}: from the task, {id}: this run's id) into a valid branch name."""
    slug = "-".join(re.findall(r"[a-z0-9]+", task.lower())[:6])[:40].strip("-") or "task"
    name = template.format(slug=slug, id=run_id)
    name = re.sub(r"[^A-Za-z0-9._/-]+", "-", name).strip("/.-")
    name = re.sub(r"\.\.+|/\.|//+", "-", name).removesuffix(".lock")
    return name or f"agent/{run_id}"


def _intent(text: str) -> str:
    """The model's own words before its first tool call, cut to one sentence."""
    prose = re.split(r"<[A-Za-z_]+>|```|\{", text, maxsplit=1)[0]
    prose = " ".join(prose.split())
    sentence = re.split(r"(?<=[.!?])\s", prose, maxsplit=1)[0]
    return sentence[:100] + ("..." if len(sentence) > 100 else "")


def _calls(results: list[tuple[ParsedCall, ToolResult]]) -> str:
    parts = []
    for call, result in results:
        arg = call.arguments.get("path") or call.arguments.get("command") or call.arguments.get("pattern") or ""
        arg = " ".join(str(arg).split())
        arg = arg[:60] + ("..." if len(arg) > 60 else "")
        parts.append(f"{call.name}{' ' + arg if arg else ''}{' (failed)' if result.is_error else ''}")
    return "; ".join(parts)


class UndoResult(BaseModel):
    branch: str
    undone: str  # the checkpoint taken back
    undone_subject: str
    now_at: str  # the commit whose exact contents the branch now has
    files: list[str]  # paths whose contents changed back
    restored: list[str] = []  # uncommitted work from before the step, put back from its snapshot
    checked_out: bool  # whether the working tree was updated (else only the branch moved)
    redo: str  # the command that brings the checkpoint back


def undo(path: Path, branch: str | None = None) -> UndoResult:
    """Move a branch back over its latest agent checkpoint, restoring the exact contents before it. Refuses when
    that tip is not an agent commit, or the branch is checked out with uncommitted work in the tree."""
    repo = gitrepo.open_repo(path)
    gitrepo.check_ready(repo)
    current = None if repo.head.is_detached or not repo.head.is_valid() else repo.active_branch.name
    branch = branch or current
    if branch is None or branch not in repo.heads:
        raise gitrepo.RepoError(
            f"no branch to undo on{f' ({branch!r} does not exist)' if branch else ' (detached HEAD)'}; "
            f"agent branches: {', '.join(agent_branches(repo)) or 'none'}"
        )
    tip = repo.heads[branch].commit
    if not is_agent_commit(tip):
        raise gitrepo.RepoError(
            f"the last commit on {branch} ({tip.hexsha[:10]} {tip.summary!r}) is not an agent checkpoint; "
            f"nothing to undo there. Agent branches: {', '.join(agent_branches(repo)) or 'none'}"
        )
    if not tip.parents:
        raise gitrepo.RepoError(f"{tip.hexsha[:10]} has no parent to go back to")
    parent = tip.parents[0]
    files = gitrepo.changed_since(repo, parent.hexsha, tip.hexsha)
    if branch == current:
        dirty = gitrepo.dirty_paths(repo)
        if dirty:
            raise gitrepo.RepoError(
                f"uncommitted changes in {', '.join(dirty[:5])}; commit or stash them first (undo never "
                "overwrites work)"
            )
        repo.git.reset("-q", "--hard", parent.hexsha)
        snapshot = _snapshot_of(repo, tip)
        restored = gitrepo.restore_snapshot(repo, snapshot) if snapshot else []
        redo = f"git reset --hard {tip.hexsha[:10]}"
    else:
        repo.git.branch("-f", branch, parent.hexsha)
        restored = []
        redo = f"git branch -f {branch} {tip.hexsha[:10]}"
    return UndoResult(
        branch=branch,
        undone=tip.hexsha,
        undone_subject=str(tip.summary),
        now_at=parent.hexsha,
        files=files,
        checked_out=branch == current,
        redo=redo,
        restored=restored,
    )


def _snapshot_of(repo: git.Repo, commit: git.Commit) -> str | None:
    """The snapshot a checkpoint names (the working tree before its step), when it is still there."""
    message = commit.message if isinstance(commit.message, str) else commit.message.decode(errors="replace")
    for line in message.splitlines():
        if line.startswith(f"{SNAPSHOT_TRAILER}: "):
            sha = line.split(": ", 1)[1].strip()
            try:
                return repo.commit(sha).hexsha
            except (ValueError, git.BadName):
                return None
    return None


def is_agent_commit(commit: git.Commit) -> bool:
    message = commit.message if isinstance(commit.message, str) else commit.message.decode(errors="replace")
    return any(line.startswith(f"{TRAILER}: ") for line in message.splitlines())


def is_run_branch(repo: git.Repo, name: str, template: str) -> bool:
    """Whether `name` is a branch of `repo` made for an agent run: it exists and starts as the configured branch
    template does (`agent/` by default; the template's text before its first `{`, `agent/` if it has none)."""
    prefix = template.split("{", 1)[0] or "agent/"
    return name in repo.heads and name.startswith(prefix) and name != prefix


def agent_branches(repo: git.Repo) -> list[str]:
    """Branches whose tip is an agent commit (what `undo --branch` can take)."""
    return sorted(h.name for h in repo.heads if is_agent_commit(h.commit))
