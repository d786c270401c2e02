"""Project memory: AGENTS.md (CLAUDE.md as fallback) in the system prompt."""

from __future__ import annotations

from agent.core.memory import MAX_MEMORY_CHARS, memory_section, read_project_memory
from agent.settings.config import Config
from agent.workflows.runtime import build_agent

FINISH = "<finish><summary>done</summary></finish>"


def test_agents_md_wins_over_claude_md(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    assert memory_section(tmp_path) == "Project instructions from CLAUDE.md:\nUse tabs."
    (tmp_path / "AGENTS.md").write_text("\nAlways run `make check`.\n\n")
    assert memory_section(tmp_path) == "Project instructions from AGENTS.md:\nAlways run `make check`."


def test_empty_or_missing_memory_is_no_section(tmp_path):
    assert memory_section(tmp_path) is None
    (tmp_path / "AGENTS.md").write_text("  \n")
    (tmp_path / "CLAUDE.md").write_text("From claude.\n")
    assert read_project_memory(tmp_path).path.name == "CLAUDE.md"
    (tmp_path / "CLAUDE.md").unlink()
    assert memory_section(tmp_path) is None
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "AGENTS.md").write_text("nested files are not the root's memory")
    assert memory_section(tmp_path) is None


def test_long_memory_is_cut_with_a_note(tmp_path):
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_MEMORY_CHARS + 500))
    memory = read_project_memory(tmp_path)
    assert memory.truncated and len(memory.text) == MAX_MEMORY_CHARS
    section = memory_section(tmp_path)
    assert section.endswith(f"[... AGENTS.md was cut at {MAX_MEMORY_CHARS} characters; read the rest with read_file]")
    assert memory_section(tmp_path, limit=10).count("x") == 10


def test_memory_enters_the_system_prompt_once(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "AGENTS.md").write_text("Name every function in snake_case.\n")
    backend = scripted(["<list_files></list_files>", FINISH])
    build_agent(Config(), backend, tmp_path / "repo").run("task")
    system = backend.calls[0]["messages"][0].content
    assert system.endswith("Project instructions from AGENTS.md:\nName every function in snake_case.")
    assert backend.calls[1]["messages"][0] == backend.calls[0]["messages"][0]
    assert sum(m.content.count("snake_case") for m in backend.calls[1]["messages"]) == 1
