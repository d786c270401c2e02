"""Scripted refactors: one instruction over many repositories, each verified, committed on its own branch only
when the verification passes, and a JSON + Markdown report of what happened in each."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

import git
from pydantic import BaseModel

from agent.checks.finish import TestOutcome, run_verification
from agent.checks.project import test_command
from agent.core.loop import AgentEvents
from agent.core.texts import REFACTOR_TASK
from agent.git import repo as gitrepo
from agent.git.checkpoints import CheckpointEvents, GitRun
from agent.settings.config import Config
from agent.workflows.runs import run_agent
from agent.workflows.runtime import backends
from inference.backends.backend import ChatBackend


class RepoOutcome(BaseModel):
    repo: str
    status: Literal["passed", "failed", "unchanged", "error"]
    reason: str  # one line: why this status
    branch: str | None = None  # holds the verified change (passed only)
    commit: str | None = None
    files: list[str] = []  # changed by the run (for failed repos: by the discarded attempt)
    diff_stat: str = ""
    verify: TestOutcome | None = None
    run_status: str | None = None  # how the agent's run ended: finished, step_limit, stuck, error
    summary: str = ""
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    transcript: str | None = None
    notes: list[str] = []


class RefactorReport(BaseModel):
    instruction: str
    verify: str | None  # the command given; None: each repo's own test command
    backend: str  # what ran the model, and how many repos at once
    parallel: int
    started_at: str
    seconds: float
    repos: list[RepoOutcome]

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.repos) for s in ("passed", "failed", "unchanged", "error")}


class RefactorEvents(Protocol):
    def on_note(self, text: str) -> None: ...
    def on_repo_start(self, repo: Path) -> AgentEvents | None: ...
    def on_repo_done(self, outcome: RepoOutcome) -> None: ...


def refactor(
    instruction: str,
    repos: list[Path],
    config: Config,
    verify: str | None = None,
    parallel: int = 1,
    events: RefactorEvents | None = None,
    *,
    backends: Callable[[], ChatBackend] | None = None,
) -> RefactorReport:
    """Run `instruction` on each repo and verify it (`verify`, else the repo's test command). With an endpoint or
    a profile, `parallel` repos run at once (a profile's llama-server gets that many slots); the embedded model
    is one in-process model, so its repos run one at a time. `backends`: a factory giving each repo its backend."""
    paths = list(dict.fromkeys(Path(r).expanduser().resolve() for r in repos))
    started, stamp = time.monotonic(), datetime.now(UTC).isoformat(timespec="seconds")
    with _backends(config, max(1, parallel), backends) as (make, slots, label):
        if events and slots < parallel:
            events.on_note(f"{label}: repos run one at a time (use --endpoint or --profile to run {parallel} at once)")

        def one(path: Path) -> RepoOutcome:
            outcome = refactor_repo(
                path, instruction, config, verify, make, events.on_repo_start(path) if events else None
            )
            if events:
                events.on_repo_done(outcome)
            return outcome

        with ThreadPoolExecutor(max_workers=slots) as pool:
            outcomes = list(pool.map(one, paths))
    return RefactorReport(
        instruction=instruction,
        verify=verify,
        backend=label,
        parallel=slots,
        started_at=stamp,
        seconds=time.monotonic() - started,
        repos=outcomes,
    )


@contextmanager
def _backends(
    config: Config, parallel: int, given: Callable[[], ChatBackend] | None
) -> Iterator[tuple[Callable[[], ChatBackend], int, str]]:
    """(backend factory, repos at once, description) for the run; a profile's server lives as long as the run."""
    if given:
        yield given, parallel, f"given backends, {parallel} at once"
    else:
        with backends(config, parallel) as chosen:
            yield chosen


def refactor_repo(
    path: Path,
    instruction: str,
    config: Config,
    verify: str | None,
    backend: Callable[[], ChatBackend],
    events: AgentEvents | None = None,
) -> RepoOutcome:
    """One repo: own branch, agent run with checkpoints, verification; the branch keeps the change only when
    verification passes, else the start branch is left exactly as it was and the agent branch removed."""
    started = time.monotonic()
    try:
        git_run = GitRun(path, instruction, config)
    except (ValueError, git.GitCommandError) as exc:
        return RepoOutcome(repo=str(path), status="error", reason=str(exc).strip(), seconds=time.monotonic() - started)
    command = verify or test_command(path)
    try:
        task = REFACTOR_TASK.format(instruction=instruction.strip(), command=command) if command else instruction
        gate = _gate(path, command, config) if command else None
        run, transcript = run_agent(
            path,
            task,
            config,
            CheckpointEvents(git_run, events),
            None,
            backend(),
            label=f"{path.name}-{git_run.run_id}",
            restore=git_run.restart,
            verify=gate,
        )
        git_run.commit_leftovers("changes left at the end of the run")
        check = run_verification(path, command, config) if command else None
    except BaseException as exc:
        report = git_run.discard(f"{type(exc).__name__}: {exc}")
        if not isinstance(exc, Exception):
            raise
        return RepoOutcome(
            repo=str(path),
            status="error",
            reason=f"{type(exc).__name__}: {exc}",
            files=report.files,
            diff_stat=report.diff_stat,
            notes=report.notes,
            seconds=time.monotonic() - started,
        )
    changed = bool(gitrepo.changed_since(git_run.repo, git_run.start_commit))
    if not changed and not git_run.checkpoints:
        status, reason, report = "unchanged", "the agent changed nothing", git_run.discard("no change")
    elif not changed:  # every attempt was undone (agent/strategies/attempts.py): its commits stay inspectable
        status, reason = "failed", "no attempt passed verification; the last one ended with nothing changed"
        report = git_run.discard("no attempt passed")
    elif check and check.passed:
        report = git_run.finish(f"Verified: `{command}` passes.\n\n{run.summary}", return_to_start=True)
        status, reason = "passed", f"`{command}` passes ({check.summary}); committed on {report.branch}"
    else:
        status = "failed"
        reason = f"`{command}` fails ({check.summary})" if check else "no verification command found (pass --verify)"
        if check and check.count and check.count.none:
            reason = f"`{command}` ran no tests: {check.count.none}"
        report = git_run.discard("verification failed" if check else "not verified")
    return RepoOutcome(
        repo=str(path),
        status=status,
        reason=reason,
        branch=report.branch or None,
        commit=report.head if status == "passed" else None,
        files=report.files,
        diff_stat=report.diff_stat,
        verify=check,
        run_status=run.status,
        summary=run.summary.strip()[:1000],
        steps=run.stats.steps,
        prompt_tokens=run.stats.prompt_tokens,
        completion_tokens=run.stats.completion_tokens,
        seconds=time.monotonic() - started,
        transcript=str(transcript),
        notes=report.notes,
    )


def _gate(path: Path, command: str, config: Config) -> Callable[[], str | None]:
    """`finish` is refused while the verification command fails, or runs no tests where it is a test runner."""

    def check() -> str | None:
        return run_verification(path, command, config).problem()

    return check


def read_repos_file(path: Path) -> list[Path]:
    """One repository path per line; blank lines and `#` comments skipped; relative paths from the file's folder."""
    lines = [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()]
    return [
        (path.parent / line).expanduser() if not line.startswith(("/", "~")) else Path(line).expanduser()
        for line in lines
        if line
    ]


def write_report(report: RefactorReport, directory: Path) -> tuple[Path, Path]:
    """`report.json` (everything) and `report.md` (a table, then each repo's details) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path, md_path = directory / "report.json", directory / "report.md"
    json_path.write_text(report.model_dump_json(indent=2) + "\n")
    md_path.write_text(markdown(report))
    return json_path, md_path


def markdown(report: RefactorReport) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items() if n)
    lines = [
        "# Refactor report",
        "",
        f"Instruction: {report.instruction}",
        "",
        f"Verification: `{report.verify}`" if report.verify else "Verification: each repo's own test command",
        f"Backend: {report.backend} · started {report.started_at} · {report.seconds:.0f}s · {counts}",
        "",
        "| repo | status | files | steps | tokens (prompt/generated) | time | branch |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report.repos:
        lines.append(
            f"| {Path(r.repo).name} | {r.status} | {len(r.files)} | {r.steps} | {r.prompt_tokens}/{r.completion_tokens}"
            f" | {r.seconds:.0f}s | {r.branch or '-'} |"
        )
    for r in report.repos:
        lines += ["", f"## {Path(r.repo).name}: {r.status}", "", f"- path: `{r.repo}`", f"- why: {r.reason}"]
        lines += [f"- agent run: {r.run_status}, {r.steps} steps" if r.run_status else "- agent run: did not start"]
        lines += [f"- commit: `{r.commit}` on `{r.branch}`"] if r.commit else []
        lines += [f"- files: {', '.join(r.files) or '(none)'}"] + [f"- note: {n}" for n in r.notes]
        if r.diff_stat:
            lines += ["", "```", r.diff_stat, "```"]
        if r.verify:
            lines += [
                "",
                f"Verification `{r.verify.command}` (exit {r.verify.exit_code}; {r.verify.summary}), last lines:",
                "",
                "```",
                r.verify.output_tail,
                "```",
            ]
    return "\n".join(lines) + "\n"
