"""Project memory: the repository's AGENTS.md (or CLAUDE.md when there is none) goes into the system prompt.
(`agent init` drafts a first AGENTS.md from what the project is: see agent/checks/project.py.)"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agent.core.texts import MEMORY_CUT, MEMORY_SECTION

MEMORY_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_MEMORY_CHARS = 8000


class ProjectMemory(BaseModel):
    path: Path
    text: str
    truncated: bool


def read_project_memory(workspace: Path, limit: int = MAX_MEMORY_CHARS) -> ProjectMemory | None:
    """The first of AGENTS.md, CLAUDE.md at the workspace root that has content, cut to `limit` characters."""
    for name in MEMORY_FILES:
        path = Path(workspace) / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            return ProjectMemory(path=path, text=text[:limit], truncated=len(text) > limit)
    return None


def memory_section(workspace: Path, limit: int = MAX_MEMORY_CHARS) -> str | None:
    """The system-prompt section with the project's instructions, or None when there are none."""
    memory = read_project_memory(workspace, limit)
    if memory is None:
        return None
    note = MEMORY_CUT.format(name=memory.path.name, limit=limit) if memory.truncated else ""
    return MEMORY_SECTION.format(name=memory.path.name, text=memory.text, note=note)
