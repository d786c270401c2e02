"""One-shot answers before the tool loop: where the task names one file of stubs with docstring examples,
ask for the whole file in one reply (`one_shots` times at most), and take the first that passes the finish
gate (with `one_shot_notes`, each answer after a failed one is told what that one failed).

Why: measured on HumanEval (docs/eval.md), the 1.5B model answering once solves as many problems as the tool
loop at a quarter of the wall time, and the two fail different problems; a one-shot answer that fails the
check costs one reply, not a context of failed edits. The loop runs only when no answer passes, from the
file as the task gave it. The question shares the run's first message, so the engine's cache serves it, and
the answers leave no trace in the loop's conversation. By default one answer is asked and the loop keeps all
its steps: a task that only names a stub loses one reply at most; the `humaneval` preset asks up to twelve
and leaves the loop one step, as measured best there."""

from __future__ import annotations

import ast
import re
import time

from agent.core.loop import RunResult, RunStats
from agent.core.prompt import task_message
from agent.core.texts import ONE_SHOT_NOTE, ONE_SHOT_REQUEST, ONE_SHOT_SYSTEM
from agent.strategies.base import Gate, Run, Strategy, Then, add_stats, named
from agent.strategies.given_code import top_level_names
from inference.backends.backend import CUT, Completion, Message, Sampling
from tools.workspace import iter_files, relative

LATER_TEMPERATURE = 0.7  # answers after the first are sampled hotter: at 0.2 a new seed repeats the first
CODE_BLOCK = re.compile(r"```[\w+-]*\n(.*?)```", re.DOTALL)
CODE_TAG = re.compile(
    r"<code>\n(.*?)</code>", re.DOTALL
)  # the whole file in <code> tags, as the model sometimes answers
# Answer n of a run at seed s is sampled with seed s + ANSWER_SEED_STRIDE * (n - 1): with a stride of 1, runs at
# seeds 1 and 2 shared their later answers (seed 2's answers 2-7 were seed 1's 3-8 word for word), so
# two seeds were not two samples. Runs at seeds 1-100 (of up to 100 answers) share none.
ANSWER_SEED_STRIDE = 100
NOTE_CHARS = 800  # a failure note's length at most: the failing example, not a page of output


class OneShots(Strategy):
    """Before the loop: up to `one_shots` whole-file answers for the one stub file the task names; the first
    that passes the finish gate is the run's result. When none does, the loop runs (with
    `steps_after_one_shots` steps at most, where set) from the file as the task gave it."""

    name = "one-shot answers"

    def applies(self, run: Run) -> bool:
        gate = run.gate
        if gate is None or run.history or run.config.one_shots < 1 or len(gate.given) != 1:
            return False
        return named(run.task, gate.given[0].path, gate.given[0].owners)

    def run(self, run: Run, then: Then) -> RunResult:
        answered, asked = try_one_shots(run)
        if answered:
            return answered
        steps = min(run.config.max_steps, run.config.steps_after_one_shots or run.config.max_steps)
        result = then(run.but(config=run.config.model_copy(update={"max_steps": steps})))
        add_stats(asked, result.stats)
        return result.model_copy(update={"stats": asked})


def stub_file(gate: Gate) -> str | None:
    """The one file whose stubs the task names (with examples), or None: one-shot answers are for that case."""
    return gate.given[0].path if len(gate.given) == 1 else None


def code_in(reply: str) -> str | None:
    """The reply's longest code block (fenced, or in <code> tags), when it is Python that parses."""
    blocks = CODE_BLOCK.findall(reply) + CODE_TAG.findall(reply)
    return python(max(blocks, key=len)) if blocks else None


def python(code: str) -> str | None:
    """`code` when it is Python that parses, else None."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return code if code.strip() else None


def try_one_shots(run: Run) -> tuple[RunResult | None, RunStats]:
    """Up to `one_shots` answers for the gate's stub file, each asked in a conversation of its own (the run's
    first message and the question, no tool protocol: it leaves no trace in the loop's conversation, and the
    engine's cache serves the shared prompt); the first that passes the gate stays written and is the run's
    result. None (the file as it was) when none passes; the stats count every answer either way."""
    started, stats, count, config = time.monotonic(), RunStats(), run.config.one_shots, run.config
    gate = run.gate
    name = stub_file(gate) if gate else None
    if gate is None or name is None or count < 1:
        return None, stats
    path = run.workspace / name
    given = path.read_text(encoding="utf-8")
    question, first = ONE_SHOT_REQUEST.format(path=name), _first_message(run)
    problem = None  # what the last answer failed
    for number in range(1, count + 1):
        run.note(f"asking for {name} whole in one reply (one-shot answer {number} of {count}) ...")
        asked = question if problem is None or not config.one_shot_notes else f"{question}\n\n{failure_note(problem)}"
        sampling = Sampling(
            temperature=config.temperature if number == 1 else max(config.temperature, LATER_TEMPERATURE),
            max_tokens=config.max_tokens,
            seed=None if config.seed is None else answer_seed(config.seed, number),
        )
        messages = [
            Message(role="system", content=ONE_SHOT_SYSTEM),
            Message(role="user", content=f"{first}\n\n{asked}"),
        ]
        watch = run.equipment.watch() if run.equipment.watch else None
        reply = run.backend.complete(messages, None, sampling, watch)
        stats.add(reply.timings, step=False)
        stats.one_shots += 1
        try:
            problem = _check(run, reply, name, given, gate)
        except BaseException:  # Ctrl-C while the answer is checked: the file as the task gave it
            path.write_text(given, encoding="utf-8")
            raise
        _record(run, number, count, reply, problem)
        if problem is None:
            summary = f"one-shot answer {number} of {count} for {name} passes the task's check"
            result = RunResult(status="finished", summary=summary, stats=stats, wall_seconds=time.monotonic() - started)
            run.transcript.write("end", result=result.model_dump())
            return result, stats
        path.write_text(given, encoding="utf-8")
    return None, stats


def _first_message(run: Run) -> str:
    """The run's first message as the loop would start it: the files, those the task is about, the task."""
    files = [relative(run.workspace, p) for p in iter_files(run.workspace, run.workspace)]
    look = run.equipment.first_look
    return task_message(run.task, files, look(run.workspace, files, run.task) if look else None)


def answer_seed(seed: int, number: int) -> int:
    """The sampling seed of one-shot answer `number` (from 1) in a run at `seed`: the first keeps the run's."""
    return seed + ANSWER_SEED_STRIDE * (number - 1)


def failure_note(problem: str) -> str:
    """What an answer failed, told to the next: the check's lines without doctest's rulers and file names."""
    lines = [line for line in problem.strip().splitlines() if not line.startswith(("*****", 'File "'))]
    return ONE_SHOT_NOTE.format(failure="\n".join(lines)[:NOTE_CHARS])


def _check(run: Run, reply: Completion, name: str, given: str, gate: Gate) -> str | None:
    """What is wrong with this answer (written to the file `name` and checked by the gate), or None."""
    path = run.workspace / name
    code = code_in(reply.text)
    if code is None:
        if reply.finish_reason == CUT:
            return "it fell into repetition and was cut"
        fenced = CODE_BLOCK.search(reply.text) or CODE_TAG.search(reply.text)
        return "its code is not Python that parses" if fenced else "no code block in the reply"
    missing = top_level_names(given) - top_level_names(code)
    if missing:
        return f"it leaves out {', '.join(sorted(missing))}"
    for fix in run.equipment.answer_fixes:  # e.g. agent/strategies/missing_imports.py
        code = fix(code)
    path.write_text(code if code.endswith("\n") else code + "\n", encoding="utf-8")
    return gate.verdict()  # examples get 30 s at most there (checks.EXAMPLES_SECONDS)


def _record(run: Run, number: int, count: int, reply: Completion, problem: str | None) -> None:
    verdict = "passes the check" if problem is None else f"fails: {problem.strip().splitlines()[0]}"
    run.note(f"one-shot answer {number} of {count} ({reply.timings.completion_tokens} tok) {verdict}")
    run.transcript.write(
        "one_shot", number=number, text=reply.text, problem=problem, timings=reply.timings.model_dump()
    )
