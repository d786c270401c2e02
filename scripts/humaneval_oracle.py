"""Run HumanEval's hidden tests on every one-shot answer the run transcripts recorded, per problem.

Why: it bounds what choosing between answers can win. A problem none of whose answers is right is lost to any
vote, probe or check; one whose right answer failed its examples is lost to the examples check (docs/eval.md,
session 13). Each answer is checked as `agent eval` checks a result: in a fresh folder, under the sandbox.

Usage: python scripts/humaneval_oracle.py [--runs DIR] [--tasks HumanEval-6,HumanEval-9] [--out oracle.json]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from pathlib import Path

from agent.core.session import runs_dir
from agent.evals.humaneval import load_humaneval
from agent.evals.runner import check
from agent.settings.config import Config
from agent.strategies.missing_imports import add_missing_imports
from agent.strategies.one_shot import code_in

TASK_IN_NAME = re.compile(r"(HumanEval-\d+)-s\d+")


def recorded_answers(runs: Path) -> dict[str, dict[str, bool]]:
    """task id -> each distinct answer's code (as the one-shot path wrote it) -> whether it passed the examples."""
    answers: dict[str, dict[str, bool]] = defaultdict(dict)
    for path in sorted(runs.glob("*HumanEval-*.jsonl")):
        if not (found := TASK_IN_NAME.search(path.name)):
            continue
        for event in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            code = code_in(event.get("text") or "") if event.get("type") == "one_shot" else None
            if code:
                answers[found.group(1)][add_missing_imports(code)] = event.get("problem") is None
    return answers


def right_answers(answers: dict[str, dict[str, bool]], only: set[str] | None) -> dict[str, list[tuple[bool, bool]]]:
    """task id -> (passed its examples, passed the hidden tests) for each answer."""
    tasks, config = {t.id: t for t in load_humaneval()}, Config()
    verdicts: dict[str, list[tuple[bool, bool]]] = {}
    for task_id, codes in sorted(answers.items(), key=lambda item: int(item[0].split("-")[1])):
        if only and task_id not in only:
            continue
        verdicts[task_id] = []
        for code, examples_passed in codes.items():
            with tempfile.TemporaryDirectory() as work:
                (Path(work) / "solution.py").write_text(code, encoding="utf-8")
                verdicts[task_id].append((examples_passed, check(tasks[task_id], Path(work), config)[0]))
        rows = verdicts[task_id]
        print(
            f"{task_id}: {len(rows)} answers, {sum(e for e, _ in rows)} pass the examples, "
            f"{sum(h for _, h in rows)} right, {sum(e and h for e, h in rows)} both",
            flush=True,
        )
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=runs_dir(), help="transcripts folder (default: the agent's)")
    parser.add_argument("--tasks", help="only these comma-separated task ids")
    parser.add_argument("--out", type=Path, help="write the verdicts here as JSON")
    args = parser.parse_args()
    verdicts = right_answers(recorded_answers(args.runs), set(args.tasks.split(",")) if args.tasks else None)
    some_right = [t for t, rows in verdicts.items() if any(h for _, h in rows)]
    selectable = [t for t, rows in verdicts.items() if any(e and h for e, h in rows)]
    print(f"{len(verdicts)} problems, {sum(map(len, verdicts.values()))} answers; some answer right: {len(some_right)}")
    print(f"a right answer that also passes the examples: {len(selectable)} ({', '.join(selectable)})")
    if args.out:
        args.out.write_text(json.dumps(verdicts, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
