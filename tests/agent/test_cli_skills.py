"""`agent skills list|show` and `agent init` through the command line (no model needed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agent.cli import app

runner = CliRunner()
WIDE = {"COLUMNS": "250"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    root = tmp_path / "project"
    good = root / ".agents" / "skills" / "release-notes"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes. Use when releasing.\n---\n"
        "# Release notes\nList every merged change.\n"
    )
    (good / "template.md").write_text("## Changes\n")
    bad = root / ".claude" / "skills" / "broken"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    return root


def test_skills_list_shows_sources_and_problems(project):
    result = runner.invoke(app, ["skills", "list", "--project", str(project)], env=WIDE)
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 4}
    assert {"release-notes", "typer-cli", "python-pytest-project", "rename-refactor", "verify-before-finish"} <= set(
        rows
    )
    assert "project" in rows["release-notes"] and "bundled" in rows["typer-cli"]
    assert "skipped:" in result.output and "broken/SKILL.md: front matter has no `description`" in result.output


def test_skills_show_prints_body_and_files(project):
    result = runner.invoke(app, ["skills", "show", "release-notes", "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert "release-notes (project)" in result.output and "List every merged change." in result.output
    assert "release-notes/template.md" in result.output
    bundled = runner.invoke(app, ["skills", "show", "typer-cli", "--project", str(project)])
    assert bundled.exit_code == 0 and "from typer.testing import CliRunner" in bundled.output
    unknown = runner.invoke(app, ["skills", "show", "nope", "--project", str(project)])
    assert unknown.exit_code == 1 and "unknown skill 'nope'" in unknown.output and "release-notes" in unknown.output


def test_init_writes_agents_md_and_refuses_to_overwrite(tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "test_calc.py").write_text("from calc import add\n")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "AGENTS.md").read_text()
    assert "- `calc.py`" in text and "`python -m pytest -q`" in text and "Python (2 files)" in text
    (tmp_path / "AGENTS.md").write_text("hand-written\n")
    again = runner.invoke(app, ["init", str(tmp_path)])
    assert again.exit_code == 1 and "already exists" in again.output and "--force" in again.output
    assert (tmp_path / "AGENTS.md").read_text() == "hand-written\n"
    forced = runner.invoke(app, ["init", str(tmp_path), "--force"])
    assert forced.exit_code == 0 and "- `AGENTS.md`" in (tmp_path / "AGENTS.md").read_text()


def test_init_refuses_a_missing_folder(tmp_path):
    result = runner.invoke(app, ["init", str(tmp_path / "nope")])
    assert result.exit_code == 1 and "is not a folder" in result.output


def test_help_lists_the_new_commands():
    result = runner.invoke(app, ["--help"])
    assert "skills" in result.output and "init" in result.output


def test_a_projects_skill_text_is_shown_as_it_is(project):
    hostile = project / ".agents" / "skills" / "hostile"
    hostile.mkdir(parents=True)
    (hostile / "SKILL.md").write_text(
        '---\nname: hostile\ndescription: "Use [/a-z]+( and [bold]x \\x1b[2J"\n---\nbody \x1b]0;title\x07\n'
    )
    listed = runner.invoke(app, ["skills", "list", "--project", str(project)], env=WIDE)
    assert listed.exit_code == 0 and "Use [/a-z]+( and [bold]x \\x1b[2J" in listed.output, listed.output
    shown = runner.invoke(app, ["skills", "show", "hostile", "--project", str(project)])
    assert shown.exit_code == 0 and "body \\x1b]0;title\\x07" in shown.output and "\x1b" not in shown.output
