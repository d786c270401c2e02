"""End to end: the real embedded model sees only the skill catalog, activates a bundled skill on its own
judgement, gets the skill's body back as an observation, and works from it."""

from __future__ import annotations

import os
import sys

import pytest

from agent.settings.config import Config
from agent.workflows.runtime import build_agent

pytestmark = pytest.mark.model

TASK = (
    "Build a command-line program cli.py with a command hello NAME that prints Hello NAME, with tests. "
    "Before writing anything, activate the skill that explains how to build a typer CLI."
)


class Recorder:
    """Agent events kept for assertions: every (step, call, result) of the run."""

    def __init__(self):
        self.calls = []

    def on_text(self, text): ...
    def on_note(self, text): ...

    def on_step(self, step, completion, results):
        self.calls += [(step, call, result) for call, result in results]


def test_real_model_activates_a_bundled_skill(embedded, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # only the bundled skills, never the tester's own
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    # the model's `python` is this venv's (typer is there): a `pip install` it tries never touches another Python
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    workspace = tmp_path / "app"
    workspace.mkdir()
    events = Recorder()
    agent = build_agent(Config(n_ctx=8192, max_steps=2, temperature=0.0, seed=7), embedded, workspace, events=events)
    assert "- typer-cli: " in agent.system and "CliRunner()" not in agent.system
    result = agent.run(TASK)
    made = [(s, c.name, c.arguments.get("name")) for s, c, _ in events.calls]
    activations = [(s, c, r) for s, c, r in events.calls if c.name == "activate_skill"]
    assert activations, f"no activate_skill call in {result.stats.steps} steps: {made}"
    step, call, observed = activations[0]
    assert step == 1 and call.arguments["name"] == "typer-cli" and not observed.is_error, observed.output
    assert observed.output.startswith('<skill name="typer-cli">') and "runner = CliRunner()" in observed.output
    # the body reached the model: the tests it wrote next use the skill's CliRunner pattern
    tests = [p.read_text() for p in workspace.glob("test_*.py")]
    assert tests and any("CliRunner" in t for t in tests), f"calls: {made}"
