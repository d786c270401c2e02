"""Fresh attempts instead of a context that fills with failed edits.

A small model that got something wrong early (a wrong expected value in a test, a misread requirement) digs
in: it bends the code to fit the wrong test, renames functions, repeats itself. So the run's steps are split
into attempts: when one ends without a verified `finish` (its share of the steps spent, or stuck), the
workspace goes back to how the task found it and the next attempt starts from the same system prompt (the
engine's KV cache keeps serving it) with a fresh conversation, told in a few lines what went wrong."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Callable, NamedTuple

from agent.texts import RETRY_CHECK_FAILED, RETRY_NOTE, RETRY_UNFINISHED
from agent.loop import Agent, RunResult, RunStats
from agent.spec_checks import Score
from inference.backend import Message
from tools.workspace import iter_files, relative

OUTPUT_LINES = 6  # of the failing check's output, in the note
MIN_STEPS = 6  # an attempt gets at least this many steps: fewer attempts when max_steps is small
COMPARE_STEPS = 5  # an attempt made only to compare with a verified one (Candidates) gets at most these
# The lines of a test run's output that say what failed (pytest's `E ...` and `FAILED ...`, node's and cargo's
# assertion lines), without the code around them: the note must not hand the next attempt the old code.
VERDICT = re.compile(r"^(E  |FAILED |not ok |thread '.*' panicked|\s*(AssertionError|assertion)\b)", re.I)


class Candidates:
    """Verified attempts kept to choose from, by how many of the checks written from the task each passes
    (agent/spec_checks.py): an attempt that passes them all is taken at once, and so is one that fails the
    same checks with the same results as an earlier one (two independent samples agreeing: the checks are
    the likelier to be wrong); otherwise a fresh attempt is made and the best one is the result (the
    earliest of equals)."""

    def __init__(self, workspace: Path, score: Callable[[], Score | None]):
        self.workspace, self.score = workspace, score
        self.kept: list[Kept] = []

    def take(self, result: RunResult, attempt: int) -> bool:
        """Whether this verified attempt is the result; if not, it is kept (its files remembered)."""
        score = self.score()
        if score is None or score.perfect or any(k.score == score for k in self.kept):
            return True
        self.kept.append(Kept(score, attempt, result, snapshot_restorer(self.workspace)))
        return False

    def best(self) -> Kept:
        return max(self.kept, key=lambda kept: (kept.score.examples_pass, kept.score.passed, -kept.attempt))


class Kept(NamedTuple):
    score: Score
    attempt: int
    result: RunResult
    put_back: Callable[[], None]


def run_attempts(
    new_agent: Callable[[int, int], Agent],
    task: str,
    *,
    attempts: int,
    max_steps: int,
    restore: Callable[[], None],
    verify: Callable[[], str | None] | None,
    note: Callable[[str], None] = lambda text: None,
    history: list[Message] | None = None,
    candidates: Candidates | None = None,
) -> RunResult:
    """Run `task` in up to `attempts` fresh attempts sharing `max_steps`; `new_agent(steps, attempt)` builds
    one attempt's agent (its own sampling seed: the same seed and a fresh context would repeat the attempt),
    `restore()` puts the workspace back as the task found it; `candidates`: verified attempts may be compared
    (see Candidates). A resumed conversation (`history`) goes on as one attempt with all the steps."""
    attempts = min(attempts, max(1, max_steps // MIN_STEPS))
    if history or attempts <= 1:
        return new_agent(max_steps, 1).run(task, history)
    started, stats, spent = time.monotonic(), RunStats(), 0
    share, why, compared = math.ceil(max_steps / attempts), "", False
    for number in range(1, attempts + 1):
        steps = max_steps - spent if number == attempts else min(share, max_steps - spent)
        if candidates and candidates.kept:  # only to compare with a verified one: a short try
            steps = min(steps, COMPARE_STEPS)
        agent = new_agent(steps, number)
        result = agent.run(f"{task}\n\n{RETRY_NOTE.format(why=why)}" if why else task)
        add_stats(stats, result.stats)
        spent += result.stats.steps
        last = number == attempts or spent >= max_steps
        compared = result.status == "finished" and candidates is not None and not candidates.take(result, number)
        if compared and not last:
            assert candidates is not None
            passed = candidates.kept[-1].score.passed
            note(f"attempt {number} passes {passed} of its checks from the task; trying a fresh attempt to compare")
            if agent.transcript:
                agent.transcript.write("restart", attempt=number + 1, why=f"compare: {passed} checks pass")
            why = ""  # an independent sample: nothing it could bend to
            restore()
            continue
        if result.status in ("finished", "error") or last:
            break
        why = failure(result, verify() if verify else None)
        note(
            f"attempt {number} ended {result.status} ({why.splitlines()[0]}); undoing its changes and starting "
            f"attempt {number + 1} with a fresh context"
        )
        if agent.transcript:
            agent.transcript.write("restart", attempt=number + 1, why=why)
        restore()
    if candidates and candidates.kept and (compared or result.status != "finished"):  # the last was not taken
        best = candidates.best()
        best.put_back()
        number, result = best.attempt, best.result
        note(f"attempt {number} is the result: it passes {best.score.passed} of the checks from the task, the most")
    return result.model_copy(
        update={
            "stats": stats,
            "wall_seconds": time.monotonic() - started,
            "summary": f"{result.summary} (attempt {number} of {attempts})",
        }
    )


def failure(result: RunResult, check: str | None) -> str:
    """A few lines on what went wrong: the check's complaint (test output) when there is one."""
    if check:
        lines = check.strip().splitlines()
        verdicts = [line.strip() for line in lines if VERDICT.match(line)] or lines[-OUTPUT_LINES:]
        return RETRY_CHECK_FAILED.format(lines="\n".join(verdicts[:OUTPUT_LINES]))
    return RETRY_UNFINISHED.format(summary=result.summary)


def add_stats(total: RunStats, part: RunStats) -> None:
    """Add `part` to `total`; a part after one with steps counts as later turns (its prompts reuse the cache)."""
    first = total.steps == 0
    for name in RunStats.model_fields:
        setattr(total, name, getattr(total, name) + getattr(part, name))
    if not first:  # every prompt of a later attempt is a later turn of the run
        total.later_prompt_tokens += part.prompt_tokens - part.later_prompt_tokens
        total.later_cached_tokens += part.cached_prompt_tokens - part.later_cached_tokens


def snapshot_restorer(workspace: Path) -> Callable[[], None]:
    """For a folder without commits (a new project): remember its files now; the function returned puts them
    back and removes what was added since. Ignored files (.venv, node_modules) stay as they are."""
    saved = {relative(workspace, p): p.read_bytes() for p in iter_files(workspace, workspace) if not p.is_symlink()}

    def restore() -> None:
        emptied: set[Path] = set()
        for path in list(iter_files(workspace, workspace)):
            if relative(workspace, path) not in saved:
                path.unlink()
                emptied.update(p for p in path.parents if workspace in p.parents)
        for name, data in saved.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_bytes(data)
        for folder in sorted(emptied, key=lambda p: len(p.parts), reverse=True):  # deepest first
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                folder.rmdir()

    return restore
