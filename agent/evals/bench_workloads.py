"""Agent workloads for `agent bench`: what the seed's single-shot prompts miss.

- A file-writing turn through each tool-call protocol: native function calling (file content JSON-escaped
  inside arguments, often grammar-constrained, where engines stop drafting) vs our text protocol (content
  written raw, where drafting works).
- A scripted agent session: our real system prompt, a task, and fixed observations; the model's own replies
  are appended between turns, so per-turn prompt-cache reuse is what an agent run would see.
"""

from __future__ import annotations

from agent.core.loop import FinishTool
from agent.core.prompt import system_prompt, task_message
from agent.core.toolcalls import NativeProtocol, TextProtocol
from agent.workflows.runtime import default_tools
from inference.backends.backend import Message
from inference.bench import EDIT_SOURCE, Workload
from tools.base import Toolbox

WRITE_TASK = (
    "The project has inventory.py:\n```python\n" + EDIT_SOURCE + "```\n"
    "Rename the method `total_value` to `inventory_value` (and every call to it) by writing the complete "
    "updated inventory.py with write_file."
)

SESSION_TASK = (
    "A Python module temperature.py with functions c_to_f(celsius) and f_to_c(fahrenheit), with pytest tests."
)
SESSION_OBSERVATIONS = [
    '<observation tool="write_file" status="ok">\ncreated temperature.py (6 lines)\n</observation>\n'
    '<observation tool="write_file" status="ok">\ncreated test_temperature.py (9 lines)\n</observation>\n'
    '<observation tool="bash" status="error">\nexit code 1\n.F\n=== FAILURES ===\n___ test_f_to_c ___\n'
    "    def test_f_to_c():\n>       assert f_to_c(212) == 100\nE       assert 100.00000000000001 == 100\n"
    "test_temperature.py:9: AssertionError\n1 failed, 1 passed in 0.41s\n</observation>",
    '<observation tool="edit_file" status="ok">\nedited test_temperature.py at line 9\n</observation>',
    '<observation tool="bash" status="ok">\nexit code 0\n..\n2 passed in 0.40s\n</observation>',
]


def _toolbox() -> Toolbox:
    return Toolbox([*default_tools(), FinishTool()])


def file_write_workloads(max_tokens: int = 1200) -> list[Workload]:
    toolbox = _toolbox()
    task = Message(role="user", content=task_message(WRITE_TASK, ["inventory.py"]))
    text = [Message(role="system", content=system_prompt(TextProtocol(), toolbox)), task]
    native = [Message(role="system", content=system_prompt(NativeProtocol(), toolbox)), task]
    return [
        Workload(id="write-file-text", kind="agent", turns=[text], max_tokens=max_tokens),
        Workload(id="write-file-native", kind="agent", turns=[native], tools=toolbox.schemas(), max_tokens=max_tokens),
    ]


def session_workload(max_tokens: int = 400) -> Workload:
    opening = [
        Message(role="system", content=system_prompt(TextProtocol(), _toolbox())),
        Message(role="user", content=task_message(SESSION_TASK, [".gitignore"])),
    ]
    turns = [opening] + [[Message(role="user", content=o)] for o in SESSION_OBSERVATIONS]
    return Workload(id="agent-session", kind="agent", turns=turns, max_tokens=max_tokens)


def agent_workloads(max_tokens: int = 1200) -> list[Workload]:
    return [*file_write_workloads(max_tokens), session_workload(min(max_tokens, 400))]
