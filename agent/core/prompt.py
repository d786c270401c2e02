"""The system prompt: a stable prefix (no timestamps, no paths, no per-run data), so every turn, and every run
with the same tools, reuses the engine's KV cache for it. Per-run facts go in the first user message."""

from __future__ import annotations

from agent.core.texts import MORE_FILES, NO_FILES, RULES, TASK_MESSAGE, TEXT_FORMAT
from agent.core.toolcalls import TextProtocol
from tools.base import Toolbox


def system_prompt(protocol: TextProtocol, toolbox: Toolbox, extra_sections: list[str] | None = None) -> str:
    sections = [RULES]
    if protocol.name == "text":
        sections.append(TEXT_FORMAT)
    sections.append("Tools:\n\n" + protocol.instructions(toolbox))
    sections.extend(extra_sections or [])
    return "\n\n".join(sections)


def task_message(task: str, files: list[str], shown: dict[str, str] | None = None) -> str:
    """The first user message: the files, the contents of those the task is about (agent/strategies/first_look.py),
    then the task."""
    listing = "\n".join(files[:100]) if files else NO_FILES
    more = MORE_FILES.format(count=len(files) - 100) if len(files) > 100 else ""
    contents = "".join(
        f"\n\n{name}:\n```\n{text}{'' if text.endswith(chr(10)) else chr(10)}```"
        for name, text in (shown or {}).items()
    )
    return TASK_MESSAGE.format(files=listing + more, contents=contents, task=task.strip())
