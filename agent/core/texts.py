"""Words the model reads that are not a tool's own (tool descriptions and tool errors stay with their tool):
the system prompt, the tasks the workflows give it, what the `finish` gate answers, and the notes put into its
conversation.

Still elsewhere: the skills' catalog texts (`skills/`, which cannot import `agent/`), the eval harness's task
wording (`agent/evals/`: part of each suite, not of the agent), and what the tool-call parser says about a
malformed call (`agent/core/toolcalls.py`, next to the parsing it describes, as a tool's errors stay with the tool)."""

from __future__ import annotations

NEW_PROJECT_TASK = """\
Build this new project in the current (empty) project folder:

{prompt}

Write the code and tests for it. {layout}
Run the tests with `{command}`, fix any failure, then call finish."""

REFACTOR_TASK = """{instruction}

First find every place to change (search), then change each of them; where a file needs several changes,
rewrite it whole with write_file. A rename is one edit_file call without a path, with replace_all true: it
changes the name in every file that has it. When you are done, run `{command}` to check your change, fix any failure,
then call finish."""

# Asks for the stub file whole in one reply, before the tool loop (agent/strategies/one_shot.py).
ONE_SHOT_REQUEST = """\
Reply with the complete new {path}, every stub implemented so that it does what its docstring says, in one
fenced Python code block. Keep every name, signature and docstring."""
# ... in a conversation of their own, without the tool protocol: on HumanEval the 1.5B model's first answers were
# right more often so.
ONE_SHOT_SYSTEM = "You are an expert Python programmer. Answer with the complete file in one fenced code block."
# ... and, with `one_shot_notes`, after a failed answer, what it failed (not the answer: shown its own answer
# and its failing example, the model repeated the answer word for word).
ONE_SHOT_NOTE = "An earlier answer failed the check; do not repeat its mistake:\n{failure}"

# The `finish` gate's answer while the project's tests (or a refactor's --verify) fail ...
CHECK_FAILS = "`{command}` fails:\n{output}"
# ... when the check ran no test at all (agent/checks/test_runs.py): exit 0 then proves nothing ...
NO_TESTS_RAN = (
    "`{command}` ran no tests: {why}. A check that runs nothing proves nothing: write the code the task asks "
    "for and tests that exercise it, where the test command finds them, then run it.\n{output}"
)
# ... when a file or name the task asked for is not there (agent/checks/named.py) ...
NAMED_MISSING = "The task asks for what is not there yet: {items}. Write it, then call finish."
# ... while a project without tests fails the docstring examples the run started with (agent/strategies/examples.py) ...
EXAMPLES_FAIL = "The docstring examples (as the task gave them) fail:\n{output}"
# ... a check that ran past its time (an endless loop, often) ...
TIMED_OUT = "(it did not end within {seconds:.0f} s and was stopped: look for a loop that never ends)\n{output}"
# ... when a function or class the task's stub files defined is gone, or a stub is still one ...
NAMES_DROPPED = "The task's files no longer define {names}: the task gave them; keep them beside your changes."
STILL_STUBS = "Still stubs (the body only a placeholder): {names}. Implement them as their docstrings say."
# ... and when those examples were edited.
EXAMPLES_EDITED = (
    "\nThe docstring examples in {files} were changed: they are part of the task and are checked as they were. "
    "Put them back and fix the code instead."
)

# The first user message (agent/core/prompt.py `task_message`): the project's files, the contents of those the task
# is about, then the task.
TASK_MESSAGE = "Files in the project folder:\n{files}{contents}\n\nTask:\n{task}"
NO_FILES = "(the folder is empty)"
MORE_FILES = "\n... and {count} more"

# Where an old observation was, once the conversation outgrew the context window (agent/core/context.py).
TRIMMED = "[observation removed to fit the context window; run the tool again if you need it]"

# The project's own instructions (AGENTS.md or CLAUDE.md) in the system prompt (agent/core/memory.py).
MEMORY_SECTION = "Project instructions from {name}:\n{text}{note}"
MEMORY_CUT = "\n[... {name} was cut at {limit} characters; read the rest with read_file]"


# The system prompt's rules and, for the text protocol, how to call a tool (agent/core/prompt.py).
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


# The loop's answers to a reply without a tool call and to a model repeating itself (agent/core/loop.py).
NO_CALL_NUDGE = (
    "Your reply contained no tool call, so nothing happened. Reply with a tool call in the XML form "
    "shown in the instructions (for example <bash><command>ls</command></bash>), or call finish if the task is done."
)

REPEAT_HELP = (
    "You are repeating yourself. Do something different and keep replies short (a few distinct test cases, not "
    "dozens): read the file with read_file, or rewrite the whole file with write_file, fixing the cause of the "
    "last error."
)


# What a fresh attempt is told about the one before (agent/strategies/attempts.py).
RETRY_NOTE = """\
Note: an earlier attempt at this task failed, so everything it changed was undone: the files are as listed
above, and any file not listed does not exist. {why}
Work out each expected value in a test by hand before you write it, and if a test fails, decide whether
the test or the code is wrong before changing either."""


# RETRY_NOTE's {why}: the check's complaint, or how the attempt ended.
RETRY_CHECK_FAILED = "Its check failed:\n{lines}"
RETRY_UNFINISHED = "It did not finish: {summary}."


# A chat's compaction and /undo (agent/ui/chat.py).
COMPACT_REQUEST = (
    "Summarize this conversation for yourself, to go on from the summary alone: what the user asked, what was "
    "done (which files changed and why), what failed and why, which files matter, and what is left to do. Plain "
    "sentences, at most 200 words. Do not call a tool."
)
COMPACTED = "Summary of this session so far (it replaces the earlier turns):\n{summary}"
UNDONE = "(The user took back your last change with /undo: {files} are as they were before it.)"
