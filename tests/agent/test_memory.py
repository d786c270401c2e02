"""Project memory: AGENTS.md (CLAUDE.md as fallback) in the system prompt, and the drafted first AGENTS.md."""

from __future__ import annotations

import json

from agent.config import Config
from agent.memory import (
    MAX_MEMORY_CHARS,
    draft_agents_md,
    memory_section,
    read_project_memory,
    write_agents_md,
)
from agent.runtime import build_agent

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


def test_draft_describes_layout_languages_tests_and_conventions(tmp_path):
    (tmp_path / "src" / "shop").mkdir(parents=True)
    (tmp_path / "src" / "shop" / "cart.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cart.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "junk.js").write_text("")
    text = draft_agents_md(tmp_path)
    assert text.startswith(f"# {tmp_path.name}\n")
    for line in ["- `src/`", "- `tests/`", "- `pyproject.toml`", "- `Makefile`", "Python (2 files)",
                 "Run the tests with `python -m pytest -q`", "pyproject.toml", "A Makefile defines common tasks"]:
        assert line in text
    assert "build" not in text.split("## Layout")[1].split("##")[0] and "JavaScript" not in text


def test_draft_other_ecosystems_and_no_tests(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}}))
    (tmp_path / "index.js").write_text("")
    text = draft_agents_md(tmp_path)
    assert "`npm test`" in text and "JavaScript (1 file)" in text and "Node project" in text
    (tmp_path / "package.json").write_text("{}")
    assert "No test command was detected" in draft_agents_md(tmp_path)


def test_write_refuses_to_overwrite_unless_forced(tmp_path):
    (tmp_path / "AGENTS.md").write_text("mine\n")
    try:
        write_agents_md(tmp_path)
        raise AssertionError("must refuse")
    except FileExistsError as exc:
        assert "--force" in str(exc)
    assert (tmp_path / "AGENTS.md").read_text() == "mine\n"
    assert write_agents_md(tmp_path, force=True).read_text().startswith(f"# {tmp_path.name}")
