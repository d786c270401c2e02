"""Eval tasks: what the agent is asked, what it starts from, and the hidden check it never sees.

A folder suite holds one folder per task:
    task.md      what the agent is asked (the whole file)
    repo/        optional: the repository it starts from (absent: a new project, built by `new-project`)
    check/       optional: files copied next to the result for the check only (hidden tests)
    check.sh     the check: run with bash in the result folder, under the run's sandbox; exit 0 = passed
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agent.core.errors import UserError

CHECK_SCRIPT = ".eval-check.sh"


class EvalTask(BaseModel):
    id: str
    prompt: str
    start_files: dict[str, str] = Field(default_factory=dict)  # the starting repository; empty: a new project
    check_command: str
    check_files: dict[str, str] = Field(default_factory=dict)  # written next to the result for the check only
    check_timeout: float = 120.0

    @property
    def workflow(self) -> Literal["new-project", "run"]:
        return "run" if self.start_files else "new-project"


def load_folder_suite(folder: Path) -> list[EvalTask]:
    """Every task folder under `folder` (one with a task.md), sorted by name; a folder that is a task itself
    is a suite of one."""
    folder = folder.expanduser()
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder; name a built-in suite (`agent eval suites`) or a folder of tasks")
    task_dirs = (
        [folder] if (folder / "task.md").is_file() else sorted(p for p in folder.iterdir() if (p / "task.md").is_file())
    )
    if not task_dirs:
        raise UserError(f"{folder} has no task folders (a task folder holds task.md and check.sh)")
    return [load_task_folder(p, folder) for p in task_dirs]


def load_task_folder(path: Path, suite: Path | None = None) -> EvalTask:
    refuse_links_out(path, suite or path)
    check = path / "check.sh"
    if not check.is_file():
        raise UserError(f"{path} has no check.sh; write the command that decides whether the task passed")
    hidden = {CHECK_SCRIPT: check.read_text(encoding="utf-8"), **_read_tree(path / "check")}
    return EvalTask(
        id=path.name,
        prompt=(path / "task.md").read_text(encoding="utf-8").strip(),
        start_files=_read_tree(path / "repo"),
        check_command=f"bash {CHECK_SCRIPT}",
        check_files=hidden,
    )


def refuse_links_out(task: Path, suite: Path) -> None:
    """A task folder (from a cloned repository, say) is read into the prompt, the workspace and the results: a
    link in it that leads outside it (`repo/key -> ~/.ssh/id_rsa`) is refused, never followed; so is a task
    folder that is itself a link out of its `suite` folder."""
    links = [task] if task.is_symlink() else []
    for folder, dirs, files in os.walk(task):  # does not descend into linked folders
        links += [Path(folder) / name for name in [*dirs, *files] if (Path(folder) / name).is_symlink()]
    for link in links:
        root = (suite if link == task else task).resolve()
        try:
            target = link.resolve()
        except (OSError, RuntimeError):  # a loop
            raise UserError(f"{link} is a link that leads nowhere (a loop); replace it with the file itself") from None
        if target != root and root not in target.parents:
            raise UserError(
                f"{link} is a link to {target}, outside {root}; an eval task may hold links only to its own "
                "files: replace the link with the file itself"
            )


def _read_tree(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{path} is not UTF-8 text; eval task files must be text") from None
    return files
