"""Words the model reads that are not a tool's own (tool descriptions and tool errors stay with their tool):
the tasks the workflows give it, what the `finish` gate answers, and the notes put into its conversation.

Still elsewhere, to be gathered here once issue 14's work on them has landed: the system prompt
(`agent/prompt.py`), the loop's nudges (`agent/loop.py`), the retry note (`agent/attempts.py`), and the
skills' catalog texts (`skills/`, which cannot import `agent/`)."""

from __future__ import annotations

NEW_PROJECT_TASK = """\
Build this new project in the current (empty) project folder:

{prompt}

Write the code and tests for it. {layout}
Run the tests with `{command}`, fix any failure, then call finish."""

REFACTOR_TASK = """{instruction}

First find every place to change (search), then change each of them; where a file needs several changes,
rewrite it whole with write_file. When you are done, run `{command}` to check your change, fix any failure,
then call finish."""

# The `finish` gate's answer while the project's tests (or a refactor's --verify) fail.
CHECK_FAILS = "`{command}` fails:\n{output}"

# Where an old observation was, once the conversation outgrew the context window (agent/context.py).
TRIMMED = "[observation removed to fit the context window; run the tool again if you need it]"

# The project's own instructions (AGENTS.md or CLAUDE.md) in the system prompt (agent/memory.py).
MEMORY_SECTION = "Project instructions from {name}:\n{text}{note}"
MEMORY_CUT = "\n[... {name} was cut at {limit} characters; read the rest with read_file]"
