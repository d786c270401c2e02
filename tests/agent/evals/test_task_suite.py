"""The bundled eval tasks (examples/eval/tasks) are sound: each hidden check fails on the task's starting state
and passes on a reference solution (tests/agent/evals/solutions/TASK: files laid over the starting repository),
run as `agent eval` runs it, under the sandbox. A check that passes at the start measures nothing; one that no
solution passes measures the check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.evals.runner import check
from agent.evals.tasks import EvalTask, load_folder_suite
from agent.settings.config import Config

SUITE = Path(__file__).parents[3] / "examples" / "eval" / "tasks"
SOLUTIONS = Path(__file__).parent / "solutions"
TASKS = load_folder_suite(SUITE)
CONFIG = Config(mcp=False)


def test_the_suite_has_the_mix_the_issue_asks_for():
    ids = [t.id for t in TASKS]
    assert len(ids) >= 24
    assert sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir()) == ids, "one reference solution per task"

    def files(task: EvalTask) -> set[str]:
        return set(task.start_files)

    new = [t for t in TASKS if t.workflow == "new-project"]
    repos = [t for t in TASKS if t.workflow == "run"]
    assert len(new) >= 6 and len(repos) >= 12
    assert any("package.json" in files(t) for t in repos) and any("Cargo.toml" in files(t) for t in repos)
    assert sum("AGENTS.md" in files(t) for t in repos) >= 2
    assert sum(any(name.count("/") >= 1 for name in files(t) if not name.startswith("test")) for t in repos) >= 8
    prompts = " ".join(t.prompt for t in new)
    for asked in ("Node.js", "Rust", "argparse", "package"):
        assert asked in prompts


def _lay_out(folder: Path, files: dict[str, str], overlay: Path | None = None) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    for path in sorted(overlay.rglob("*")) if overlay else []:
        if path.is_file():
            target = folder / path.relative_to(overlay)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    # the project's environment as `agent eval` gives it one (a .venv with pytest): this interpreter's
    (folder / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return folder


@pytest.mark.slow  # 25 tasks, each checked twice under the sandbox (pytest, node, cargo): about a minute
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_the_hidden_check_fails_at_the_start_and_passes_on_a_reference_solution(task, tmp_path):
    start = _lay_out(tmp_path / "start", task.start_files)
    passed, tail = check(task, start, CONFIG)
    assert not passed, f"{task.id}: the hidden check passes on the starting state\n{tail}"
    solved = _lay_out(tmp_path / "solved", task.start_files, SOLUTIONS / task.id)
    passed, tail = check(task, solved, CONFIG)
    assert passed, f"{task.id}: the hidden check fails on the reference solution\n{tail}"
