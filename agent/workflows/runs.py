"""Workflows on top of the loop: build a new project, or run one task on an existing repository."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from pydantic import BaseModel

from agent.checks import project
from agent.checks.finish import FinishGate, TestOutcome, run_project_tests
from agent.core.errors import UserError
from agent.core.loop import Agent, AgentEvents, RunResult
from agent.core.session import Transcript, new_transcript_path, read_transcript
from agent.core.texts import NEW_PROJECT_TASK
from agent.git import repo as gitrepo
from agent.git.checkpoints import CheckpointEvents, GitReport, GitRun
from agent.settings.config import Config
from agent.settings.mcp_setup import mcp_session
from agent.strategies.attempts import FreshAttempts, snapshot_restorer
from agent.strategies.base import Equipment, Run, Strategy, run_chain, the_loop
from agent.strategies.examples import ExampleChecks
from agent.strategies.first_look import FirstLook
from agent.strategies.given_code import GivenCodeChecks
from agent.strategies.missing_imports import MissingImports
from agent.strategies.one_shot import OneShots
from agent.strategies.repetition import RepetitionCut
from agent.workflows.runtime import backend_session, build_agent, check_backend
from inference.backends.backend import ChatBackend, Message
from tools.workspace import iter_files, relative


class WorkflowResult(BaseModel):
    directory: str
    run: RunResult
    files: list[str]
    tests: TestOutcome | None
    commit: str | None
    diff_stat: str
    transcript: str
    git: GitReport | None = None  # branch, checkpoints and what happened to the user's work (`run` only)
    setup: project.SetupReport | None = None  # the project's environment made for the run (`new-project`)
    missing: list[str] = []  # files and names the task asked for that are not there at the end (agent/checks/named.py)


def new_project(
    directory: Path,
    prompt: str,
    config: Config,
    events: AgentEvents | None = None,
    *,
    backend: ChatBackend | None = None,
) -> WorkflowResult:
    """Create `directory`, git-init it, give it the environment its language needs (a Python `.venv` with
    pytest), let the agent build the project, run its tests, commit the result. `backend`: an open backend
    to use instead of the one the config names."""
    directory = directory.expanduser().resolve()
    if directory.exists() and not directory.is_dir():
        raise UserError(f"{directory} exists and is not a folder; choose a new folder for the project")
    if directory.exists() and any(p.name != ".git" for p in directory.iterdir()):
        raise UserError(f"{directory} exists and is not empty; choose a new folder (or use `agent run` on it)")
    check_backend(config)
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}; choose a folder you can write to") from None
    repo = gitrepo.init_repo(directory)
    recipe = project.RECIPES[project.guess_language(prompt)]
    setup = project.setup_environment(
        directory,
        recipe.language,
        config.sandbox_policy(),
        timeout=max(config.command_timeout, 300),
        offline=config.offline,
    )
    if events:
        events.on_note(f"project environment ({recipe.language}): {setup.describe()}")
    task = NEW_PROJECT_TASK.format(prompt=prompt.strip(), layout=recipe.layout, command=recipe.test_command)
    gate = FinishGate(directory, config, recipe.no_tests, task=prompt)  # the user's words name what to make
    try:
        result, transcript = run_agent(
            directory,
            task,
            config,
            events,
            gate,
            backend,
            meta={"workflow": "new-project"},
            restore=snapshot_restorer(directory),
        )
    except BaseException:
        if created and {p.name for p in directory.iterdir()} <= {".git", ".gitignore", ".venv"}:
            shutil.rmtree(directory)  # nothing was built: a second try must not find the folder "not empty"
        raise
    tests, missing = run_project_tests(directory, config), gate.missing()
    commit = gitrepo.commit_all(
        repo,
        f"agent new-project: {prompt.strip()[:60]}\n\nRun: {result.status}, {checked_line(tests, missing)}.\n"
        f"Environment: {setup.describe()}.\n\n{result.summary}",
    )
    return _result(directory, result, tests, commit, "", transcript).model_copy(
        update={"setup": setup, "missing": missing}
    )


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, after the transcript and git state were put in order: says where things are."""

    def __init__(self, transcript: Path, branch: str | None = None):
        super().__init__(str(transcript))
        self.transcript, self.branch = transcript, branch


def run_task(
    repository: Path,
    task: str,
    config: Config,
    events: AgentEvents | None = None,
    *,
    backend: ChatBackend | None = None,
    history: list[Message] | None = None,
    resume: str | None = None,
) -> WorkflowResult:
    """Run one task headless on an existing git repository, on its own branch with a checkpoint commit per
    step that changed files (see agent/git/checkpoints.py); uncommitted work found at start is put aside first.
    `backend`: an open backend to use instead of the one the config names; `history` and `resume`: a
    conversation to continue and the branch it was committing to (see `resume_run`)."""
    repository = repository.expanduser().resolve()
    if backend is None:
        check_backend(config)
    git_run = GitRun(repository, task, config, resume)
    gate = FinishGate(repository, config, task=task)
    try:
        result, transcript = run_agent(
            repository,
            task,
            config,
            CheckpointEvents(git_run, events),
            gate,
            backend,
            history=history,
            meta={"workflow": "run", "branch": git_run.branch},
            restore=git_run.restart,
        )
        tests, missing = run_project_tests(repository, config), gate.missing()
    except BaseException as exc:
        kept = git_run.abandon(failed=not isinstance(exc, KeyboardInterrupt))
        if isinstance(exc, RunInterrupted):
            exc.branch = kept
        raise
    report = git_run.finish(f"Run: {result.status}, {checked_line(tests, missing)}.\n\n{result.summary}")
    done = _result(repository, result, tests, report.head, report.diff_stat, transcript, report.files, report)
    return done.model_copy(update={"missing": missing})


def resume_run(
    transcript_path: Path, config: Config, events: AgentEvents | None = None, *, backend: ChatBackend | None = None
) -> WorkflowResult:
    """Continue an interrupted or failed `run` from its transcript: same repository, same task, the
    conversation so far, on the branch that run was committing to (`backend`: as for `run_task`)."""
    recorded = read_transcript(transcript_path)
    if recorded.note and events:
        events.on_note(recorded.note)
    repository = Path(recorded.start["workspace"])
    messages = recorded.messages
    while messages and messages[-1].role == "assistant":  # its calls may not have run: ask again
        messages.pop()
    branch = recorded.start.get("branch")
    resume = branch if isinstance(branch, str) and branch in gitrepo.open_repo(repository).heads else None
    return run_task(
        repository, recorded.start["task"], config, events, backend=backend, history=messages, resume=resume
    )


def strategies() -> list[Strategy]:
    """The chain every workflow runs before the loop, in order: each applies only where it fits the run
    (agent/strategies/)."""
    return [
        RepetitionCut(),
        FirstLook(),
        ExampleChecks(),
        GivenCodeChecks(),
        MissingImports(),
        OneShots(),
        FreshAttempts(),
    ]


def run_agent(
    workspace: Path,
    task: str,
    config: Config,
    events: AgentEvents | None,
    gate: FinishGate | None,
    backend: ChatBackend | None = None,
    label: str | None = None,
    history: list[Message] | None = None,
    meta: dict | None = None,
    restore: Callable[[], None] | None = None,
    verify: Callable[[], str | None] | None = None,
) -> tuple[RunResult, Path]:
    """One agent run: the chain of strategies (`strategies`), ending in the loop. `gate`: the finish check when
    it is the project's own (the strategies that work on stubs arm it); `verify`: what `finish` must pass
    instead (a refactor's command), else the gate; `restore`: puts the workspace back for a fresh attempt;
    `backend` shares an already open backend (a refactor's server) instead of opening one. Ctrl-C comes out
    as `RunInterrupted`, naming the transcript to resume from."""
    path = new_transcript_path(label or workspace.name)
    transcript = Transcript(path)
    transcript.write(
        "start", workspace=str(workspace), task=task, config=config.model_dump(exclude={"api_key"}), **(meta or {})
    )
    check = verify or gate
    try:
        note = events.on_note if events else (lambda text: None)
        opened = nullcontext(backend) if backend else backend_session(config)
        with opened as backend, mcp_session(config, workspace, note) as mcp_tools:

            def build(settings: Config, equipment: Equipment) -> Agent:
                return build_agent(
                    settings,
                    backend,
                    workspace,
                    transcript=transcript,
                    events=events,
                    verify=check,
                    extra_tools=mcp_tools,
                    first_look=equipment.first_look,
                    watch=equipment.watch,
                )

            run = Run(
                workspace,
                task,
                config,
                backend,
                transcript,
                build,
                gate=gate,
                verify=check,
                history=history,
                restore=restore,
                note=note,
            )
            return run_chain(strategies(), run, the_loop), path
    except KeyboardInterrupt:
        raise RunInterrupted(path) from None
    finally:
        transcript.close()


def checked_line(tests: TestOutcome | None, missing: list[str]) -> str:
    """What the final check found, for a commit message: "`npm test`: 12 tests passed", "no test command found",
    then what the task asked for and is missing."""
    line = "no test command found" if tests is None else f"`{tests.command}`: {tests.summary}"
    return line + (f"; missing: {', '.join(missing)}" if missing else "")


def _result(
    directory: Path,
    run: RunResult,
    tests: TestOutcome | None,
    commit: str | None,
    stat: str,
    transcript: Path,
    files: list[str] | None = None,
    git: GitReport | None = None,
) -> WorkflowResult:
    if files is None:
        files = [relative(directory, p) for p in iter_files(directory, directory)]
    return WorkflowResult(
        directory=str(directory),
        run=run,
        files=files,
        tests=tests,
        commit=commit,
        diff_stat=stat,
        transcript=str(transcript),
        git=git,
    )
