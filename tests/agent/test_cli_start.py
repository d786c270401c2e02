"""`agent --help`, `--version` and shell completion answer without loading what only a running command needs
(the MCP SDK alone took ~3 s to import: every TAB and every `--help` paid it)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import get_args

from agent.commands.common import SandboxMode
from agent.settings.config import Config

# Imports a command may need, never `--help`: the MCP SDK, the model runtimes, git, HTTP clients, our layers
# below agent/ (pydantic is not listed: typer itself loads it to build a command's parameters).
HEAVY = {"mcp", "llama_cpp", "openai", "git", "httpx", "huggingface_hub", "tree_sitter", "inference", "tools", "skills"}

RUNNER = """
import sys
from agent.cli import app
try:
    app(prog_name="agent")
except SystemExit as stop:
    code = stop.code
light = {"inference", "inference.errors"}  # the error root: one small class, no imports
loaded = sorted({name.split(".")[0] for name in set(sys.modules) - light} & set(sys.argv.pop().split(",")))
print("LOADED:" + ",".join(loaded), file=sys.stderr)
"""


def start(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args, ",".join(sorted(HEAVY))],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED:"))
    return done, [m for m in line.removeprefix("LOADED:").split(",") if m]


def test_help_loads_nothing_heavy():
    done, loaded = start("--help")
    assert "chat" in done.stdout and "sessions" in done.stdout and loaded == []


def test_a_command_s_help_loads_nothing_heavy():
    done, loaded = start("run", "--help")
    assert "--output-format" in done.stdout and loaded == []


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    done, loaded = start("--version")
    assert done.stdout.strip() == f"dflash-agent {version('dflash-agent')}" and loaded == []


def test_completion_answers_without_heavy_imports():
    done, loaded = start(env={"_AGENT_COMPLETE": "complete_bash", "COMP_WORDS": "agent sess", "COMP_CWORD": "1"})
    assert done.stdout.split() == ["sessions"] and loaded == []
    done, loaded = start(
        env={"_AGENT_COMPLETE": "complete_bash", "COMP_WORDS": "agent run --output", "COMP_CWORD": "2"}
    )
    assert done.stdout.split() == ["--output-format"] and loaded == []


def test_no_arguments_without_a_terminal_prints_help_and_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "agent.cli"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2 and "Commands" in done.stdout


def test_the_cli_sandbox_modes_are_the_config_s():
    assert get_args(SandboxMode) == get_args(Config.model_fields["sandbox"].annotation)


def test_every_command_that_runs_the_agent_takes_a_preset():
    """A preset chosen on the command line reaches every workflow that runs the loop, not only some."""
    import typer.main

    from agent.cli import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    for name in ("run", "new-project", "refactor", "chat"):
        options = {opt for param in commands[name].params for opt in param.opts}
        assert "--preset" in options, name
