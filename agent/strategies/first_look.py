"""What the model sees of the project before its first step: the contents of the files the task is about.

A small model that is only given file names writes a file without reading it first (dropping the imports,
the signature and the docstring it was asked to follow); shown the contents, its first reply is as good as
its best single answer. Small projects are shown whole; in larger ones, the files the task names."""

from __future__ import annotations

from pathlib import Path

from agent.core.loop import RunResult
from agent.strategies.base import Run, Strategy, Then
from tools.secrets import redact_secrets

BUDGET = 8000  # characters of file contents in the first message, all files together
WHOLE_PROJECT_FILES = 12  # a project with at most this many files (and within BUDGET) is shown whole
NOT_SHOWN = {".gitignore", "AGENTS.md", "CLAUDE.md", "package-lock.json", "Cargo.lock", "uv.lock", "poetry.lock"}


class FirstLook(Strategy):
    """Before the loop: every agent of the run shows the files the task is about in its first message."""

    name = "first look"

    def applies(self, run: Run) -> bool:
        return run.history is None  # a resumed conversation keeps its own first message

    def run(self, run: Run, then: Then) -> RunResult:
        run = run.but()
        run.equipment.first_look = files_to_show
        return then(run)


def files_to_show(workspace: Path, files: list[str], task: str) -> dict[str, str]:
    """`{path: contents}` to put in the first message, within BUDGET characters."""
    # No dotfiles or dot-folders' files either: configuration (.env, .mcp.json) is not the task, and project
    # skills (.agent/skills) are read when activated, not up front. What is shown passes the same secret
    # redaction as every tool's output.
    candidates = [
        f for f in files if Path(f).name not in NOT_SHOWN and not any(p.startswith(".") for p in Path(f).parts)
    ]
    texts = {f: redact_secrets(text) for f in candidates if (text := _text(workspace / f)) is not None}
    if len(texts) <= WHOLE_PROJECT_FILES and sum(len(t) for t in texts.values()) <= BUDGET:
        return texts
    named = [f for f in texts if f in task or (Path(f).name in task and len(Path(f).name) > 3)]
    shown: dict[str, str] = {}
    used = 0
    for name in named:
        text = texts[name]
        if used + len(text) > BUDGET:
            text = _head(text, BUDGET - used)
        shown[name] = text
        used += len(text)
        if used >= BUDGET:
            break
    return shown


def _text(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 * BUDGET:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _head(text: str, limit: int) -> str:
    lines, kept = text.splitlines(keepends=True), ""
    for line in lines:
        if len(kept) + len(line) > max(limit, 200):
            break
        kept += line
    rest = len(lines) - kept.count("\n")
    return kept + f"... ({rest} more lines: read_file shows them)\n"
