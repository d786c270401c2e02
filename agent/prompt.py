"""The system prompt: a stable prefix (no timestamps, no paths, no per-run data), so every turn, and every run
with the same tools, reuses the engine's KV cache for it. Per-run facts go in the first user message."""

from __future__ import annotations

from agent.toolcalls import TextProtocol
from tools.base import Toolbox

RULES = """\
You are dflash-agent, a coding agent working inside a project folder on the user's computer.
You act only through tools. In each reply, say in one short sentence what you will do next, then make one
or more tool calls. Tool results come back to you in <observation> blocks; never write observations yourself.

Rules:
- Paths are relative to the project folder. Stay inside it.
- Create files and rewrite whole files with write_file; change part of a file with edit_file.
- Keep code simple and complete: no placeholders, no "TODO".
- Verify your work: run the tests or the program with bash and read the output. Run the tests with the
  project's own command from the project folder: the one the task or the project instructions name, else
  `python -m pytest -q` (Python), `node --test` (Node.js), `cargo test` (Rust).
- Add no dependencies unless the task asks for them: commands run without network by default.
- If a command fails, read the error, fix the cause and run it again.
- When the task is done and verified, call finish with a short summary."""

TEXT_FORMAT = """\
How to call a tool: write its XML form. Parameter values are written raw, exactly as they should be:
no quotes, no escaping, code exactly as it should appear in the file.

Example, for a different task ("a module with an area function, with tests"):
I will create the module and its test, then run the tests.
<write_file>
<path>geometry.py</path>
<content>
def rectangle_area(width, height):
    return width * height
</content>
</write_file>
<write_file>
<path>test_geometry.py</path>
<content>
from geometry import rectangle_area


def test_rectangle_area():
    assert rectangle_area(2, 3) == 6
</content>
</write_file>
<bash>
<command>python -m pytest -q</command>
</bash>

Then, once the observation shows the tests pass:
<finish>
<summary>Added rectangle_area in geometry.py; 1 test passes.</summary>
</finish>"""


def system_prompt(protocol: TextProtocol, toolbox: Toolbox, extra_sections: list[str] | None = None) -> str:
    sections = [RULES]
    if protocol.name == "text":
        sections.append(TEXT_FORMAT)
    sections.append("Tools:\n\n" + protocol.instructions(toolbox))
    sections.extend(extra_sections or [])
    return "\n\n".join(sections)


def task_message(task: str, files: list[str], shown: dict[str, str] | None = None) -> str:
    """The first user message: the files, the contents of those the task is about (agent/first_look.py),
    then the task."""
    listing = "\n".join(files[:100]) if files else "(the folder is empty)"
    more = f"\n... and {len(files) - 100} more" if len(files) > 100 else ""
    contents = "".join(
        f"\n\n{name}:\n```\n{text}{'' if text.endswith(chr(10)) else chr(10)}```"
        for name, text in (shown or {}).items()
    )
    return f"Files in the project folder:\n{listing}{more}{contents}\n\nTask:\n{task.strip()}"
