"""Run a suite through the real workflows and check each result with the task's hidden check.

Each (task, seed) pair is one record in `results.jsonl`, appended as soon as it is known, so a suite stopped by
Ctrl-C (or a crash) goes on where it stopped: pairs already recorded are skipped."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from agent.checks import project
from agent.checks.finish import run_project_tests
from agent.evals import metrics
from agent.evals.tasks import EvalTask
from agent.git import repo as gitrepo
from agent.settings.config import Config
from agent.workflows.runs import WorkflowResult, new_project, run_task
from inference.backends.backend import BackendError, ChatBackend
from inference.errors import DflashError
from tools.base import ToolError
from tools.files import write_atomically
from tools.shell import run_command
from tools.workspace import open_folder

Mode = Literal["agent", "single-reply", "command"]


class EvalRecord(BaseModel):
    task: str
    seed: int
    mode: Mode
    passed: bool
    status: str  # the run's end: finished, step_limit, stuck, error...
    steps: int = 0
    one_shots: int = 0  # whole-file answers asked before the loop (agent/strategies/one_shot.py)
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    draft_n: int = 0
    draft_accepted: int = 0
    wall_seconds: float = 0.0  # what the user waits for: environment, agent, tests
    check_tail: str = ""
    tests: str = ""  # the run's own final check, what ran: "3 tests passed", "no tests ran (...)"
    missing: list[str] = []  # files and names the task asked for that were not there at the end
    vacuous: bool = False  # reported finished while no test ran or something the task asked for was missing
    # the eval's own reading of the result, beside the gate's (agent/evals/metrics.py); None: an older record
    tests_passed: bool | None = None
    tests_ran: bool | None = None  # False: no test command, or one that ran no test
    named_missing: list[str] = []  # files the task names that the result lacks
    error: str | None = None
    transcript: str = ""  # the run's transcript (agent mode), to read what went wrong


class EvalSettings(BaseModel):
    """What a results folder was made with: a resumed suite must not mix settings."""

    suite: str
    mode: Mode
    backend: str
    max_steps: int
    temperature: float
    one_shots: int | None = None  # Config.one_shots (None: a folder made before it was recorded)
    one_shot_notes: bool = False  # Config.one_shot_notes: later whole-file answers told why the last one failed
    agent_command: str | None = None  # mode `command`: another agent, run in the task's folder (a peer row)


def run_suite(
    tasks: list[EvalTask],
    seeds: list[int],
    config: Config,
    backend: ChatBackend | None,
    out: Path,
    *,
    mode: Mode = "agent",
    agent_command: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> list[EvalRecord]:
    """Run every task at every seed not yet in `out/results.jsonl`; returns all records of the folder."""
    results = out / "results.jsonl"
    records = read_records(results)
    if results.is_file():  # drop a line cut by Ctrl-C, so the next record starts on a line of its own
        results.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    done = {(r.task, r.seed) for r in records}
    pairs = [(t, s) for t in tasks for s in seeds]
    for number, (task, seed) in enumerate(pairs, 1):
        if (task.id, seed) in done:
            continue
        progress(f"[{number}/{len(pairs)}] {task.id} seed {seed}: running ({task.workflow})")
        record = run_one(task, seed, config, backend, out / "work" / f"{task.id}-s{seed}", mode, agent_command)
        with results.open("a", encoding="utf-8") as fh:
            fh.write(record.model_dump_json() + "\n")
        records.append(record)
        verdict = "PASS" if record.passed else f"fail ({record.error or record.status})"
        progress(
            f"[{number}/{len(pairs)}] {task.id} seed {seed}: {verdict} in {record.wall_seconds:.0f} s, "
            f"{record.steps} steps"
        )
    return records


def read_records(path: Path) -> list[EvalRecord]:
    """The records so far; a last line cut by Ctrl-C or a crash is dropped (that pair runs again)."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(EvalRecord.model_validate_json(line))
        except ValueError:
            continue
    return records


def run_one(
    task: EvalTask,
    seed: int,
    config: Config,
    backend: ChatBackend | None,
    work: Path,
    mode: Mode,
    agent_command: str | None = None,
) -> EvalRecord:
    """One task at one seed in a fresh folder `work`, then its hidden check."""
    if work.exists():
        shutil.rmtree(work)  # left by an interrupted try
    work.parent.mkdir(parents=True, exist_ok=True)
    config = config.model_copy(update={"seed": seed})
    started = time.monotonic()
    try:
        if mode == "command":
            from agent.evals.peer import run_peer

            prepare_repository(task, work, config)
            result = run_peer(agent_command or "", task, work, config)
        elif mode == "single-reply":
            from agent.evals.single_reply import single_reply

            prepare_repository(task, work, config)
            assert backend is not None, "a backend is opened for every mode but command"
            result = single_reply(task, work, config, backend)
        elif task.workflow == "run":
            prepare_repository(task, work, config)
            result = run_task(work, task.prompt, config, backend=backend)
        else:
            result = new_project(work, task.prompt, config, backend=backend)
    except BackendError:
        raise  # the engine is gone: every later task would fail the same way
    except DflashError as exc:
        return EvalRecord(
            task=task.id,
            seed=seed,
            mode=mode,
            passed=False,
            status="error",
            error=str(exc),
            wall_seconds=time.monotonic() - started,
        )
    wall = time.monotonic() - started
    tests = result.tests
    if tests is None and mode != "agent":  # a peer or one reply ran none of ours: the project's tests, as a user would
        tests = run_project_tests(work, config)
    passed, tail = check(task, work, config)
    record = _record(task, seed, mode, result, passed, tail, wall)
    return record.model_copy(
        update={
            "tests_passed": tests is not None and tests.passed,
            "tests_ran": metrics.tests_ran(tests),
            "named_missing": metrics.missing_files(task.prompt, work),
        }
    )


def prepare_repository(task: EvalTask, work: Path, config: Config) -> None:
    """The task's starting repository (empty for a new project), committed, with the environment its
    language needs (as a user has it, and as `new-project` makes it)."""
    work.mkdir(parents=True, exist_ok=True)
    for name, text in task.start_files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    gitignore = work / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(".venv/\nnode_modules/\ntarget/\n__pycache__/\n", encoding="utf-8")
    repo = gitrepo.init_repo(work)
    gitrepo.commit_all(repo, "the task's starting point")
    language = project.language(work) if task.start_files else project.guess_language(task.prompt)
    project.setup_environment(work, language, config.sandbox_policy(), offline=config.offline)


def check(task: EvalTask, work: Path, config: Config) -> tuple[bool, str]:
    """The hidden check, run in the result folder under the run's sandbox, its files removed after. The result
    folder is the model's: its check files are written and removed without following any link in it (a link
    at `tests/` must not make the check write or delete outside), and a link on the way fails the check."""
    written: list[Path] = []
    try:
        for name, text in task.check_files.items():
            write_atomically(work, work / name, text)
            written.append(work / name)
    except (ToolError, OSError) as exc:
        _remove_without_links(work, written)
        return False, f"the hidden check files could not be written into the result: {exc}"
    try:
        policy = project.command_policy(config.sandbox_policy(), work)
        outcome = run_command(task.check_command, work, task.check_timeout, 4000, policy)
    finally:
        _remove_without_links(work, written)
    tail = "\n".join(outcome.output.strip().splitlines()[-10:])
    return outcome.exit_code == 0, tail


def _remove_without_links(work: Path, paths: list[Path]) -> None:
    """Remove the check files `paths`, each by its name in its folder reached without following links: the
    check ran the model's code, which may have swapped a folder on the way for a link since."""
    for path in paths:
        try:
            folder = open_folder(work, path.parent)
        except (ToolError, OSError):
            continue  # no longer a real folder in the result: nothing of ours to remove there
        try:
            os.unlink(path.name, dir_fd=folder)
        except OSError:
            pass
        finally:
            os.close(folder)


def _record(
    task: EvalTask, seed: int, mode: Mode, result: WorkflowResult, passed: bool, tail: str, wall: float
) -> EvalRecord:
    stats = result.run.stats
    return EvalRecord(
        task=task.id,
        seed=seed,
        mode=mode,
        passed=passed,
        status=result.run.status,
        steps=stats.steps,
        one_shots=stats.one_shots,
        prompt_tokens=stats.prompt_tokens,
        cached_prompt_tokens=stats.cached_prompt_tokens,
        completion_tokens=stats.completion_tokens,
        generation_seconds=stats.generation_seconds,
        draft_n=stats.draft_n,
        draft_accepted=stats.draft_accepted,
        wall_seconds=wall,
        check_tail=tail if not passed else "",
        tests="" if result.tests is None else f"`{result.tests.command}`: {result.tests.summary}",
        missing=result.missing,
        vacuous=result.run.status == "finished"
        and (bool(result.missing) or (result.tests is not None and result.tests.vacuous)),
        error=result.run.summary if result.run.status == "error" else None,  # e.g. a peer's own end: LimitsExceeded
        transcript=result.transcript,
    )
