"""activate_skill and progressive disclosure: names and descriptions in the system prompt, the body only in
the observation after the model activates a skill (scripted model; the real model is in test_e2e_skills.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.settings.config import Config
from agent.workflows.runtime import build_agent
from skills.loader import discover_skills
from skills.tool import ActivateSkillTool
from tools.base import ToolContext

FINISH = "<finish><summary>done</summary></finish>"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    skill = root / ".agents" / "skills" / "deploy-app"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy-app\ndescription: How to deploy. Use when asked to deploy.\n---\n"
        "# Deploy\nRun `make deploy-SECRET-STEP` twice.\n"
    )
    (skill / "scripts").mkdir()
    (skill / "scripts" / "check.sh").write_text("echo checked\n")
    return root


def test_activate_returns_body_and_file_paths(project):
    tool = ActivateSkillTool(discover_skills(project))
    result = tool.invoke({"name": "deploy-app"}, ToolContext(project))
    assert not result.is_error
    assert result.output.startswith(
        '<skill name="deploy-app">\n# Deploy\nRun `make deploy-SECRET-STEP` twice.\n</skill>'
    )
    check = project.resolve() / ".agents" / "skills" / "deploy-app" / "scripts" / "check.sh"
    assert f"- {check}" in result.output and "cat PATH" in result.output


def test_bundled_file_paths_exist(project):
    result = ActivateSkillTool(discover_skills(project)).invoke({"name": "python-pytest-project"}, ToolContext(project))
    [listed] = [line[2:] for line in result.output.splitlines() if line.startswith("- /")]
    assert (
        listed.endswith("python-pytest-project/example_tests.py") and "from calc import add" in Path(listed).read_text()
    )


def test_the_tool_description_is_the_catalog(project):
    tool = ActivateSkillTool(discover_skills(project))
    assert "- deploy-app: How to deploy. Use when asked to deploy." in tool.description
    assert "- typer-cli: " in tool.description and "SECRET-STEP" not in tool.description
    assert list(tool.schema()["function"]["parameters"]["properties"]) == ["name"]


def test_unknown_skill_is_an_error_listing_the_available_ones(project):
    result = ActivateSkillTool(discover_skills(project)).invoke({"name": "deploy"}, ToolContext(project))
    assert result.is_error and "unknown skill 'deploy'" in result.output
    assert "deploy-app" in result.output and "typer-cli" in result.output
    missing = ActivateSkillTool(discover_skills(project)).invoke({}, ToolContext(project))
    assert missing.is_error and "activate_skill(name)" in missing.output


def test_progressive_disclosure_through_the_agent(scripted, project):
    backend = scripted(
        ["I will read the deploy skill.\n<activate_skill>\n<name>deploy-app</name>\n</activate_skill>", FINISH]
    )
    agent = build_agent(Config(), backend, project)
    result = agent.run("Deploy the app.")
    assert result.status == "finished"
    system = backend.calls[0]["messages"][0].content
    assert "- deploy-app: How to deploy. Use when asked to deploy." in system
    assert "- typer-cli: How to build a command-line program" in system and "### activate_skill" in system
    assert "SECRET-STEP" not in system and "typer.testing import CliRunner" not in system
    assert all("SECRET-STEP" not in m.content for m in backend.calls[0]["messages"])
    observation = backend.calls[1]["messages"][-1].content
    assert observation.startswith('<observation tool="activate_skill" status="ok">')
    assert "Run `make deploy-SECRET-STEP` twice." in observation and "scripts/check.sh" in observation


def test_system_prompt_is_stable_across_runs_in_one_workspace(scripted, project):
    first, second = scripted([FINISH]), scripted([FINISH])
    build_agent(Config(), first, project).run("one task")
    build_agent(Config(), second, project).run("another task")
    assert first.calls[0]["messages"][0] == second.calls[0]["messages"][0]


def test_no_skills_means_no_tool_and_no_catalog(scripted, tmp_path, monkeypatch):
    monkeypatch.setattr(
        "agent.workflows.runtime.discover_skills", lambda workspace: discover_skills(workspace, [], bundled_dir=None)
    )
    backend = scripted([FINISH])
    agent = build_agent(Config(), backend, tmp_path)
    agent.run("task")
    assert "activate_skill" not in agent.toolbox and "activate_skill" not in backend.calls[0]["messages"][0].content


def test_malformed_project_skills_become_notes(scripted, project):
    (project / ".claude" / "skills" / "broken").mkdir(parents=True)
    (project / ".claude" / "skills" / "broken" / "SKILL.md").write_text("no front matter\n")

    class Notes:
        def __init__(self):
            self.notes = []

        def on_text(self, text): ...
        def on_step(self, step, completion, results): ...
        def on_note(self, text):
            self.notes.append(text)

    events = Notes()
    agent = build_agent(Config(), scripted([FINISH]), project, events=events)
    assert "broken" not in agent.system
    assert any("broken/SKILL.md" in n and "(skipped)" in n for n in events.notes)
