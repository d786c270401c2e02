"""A project's MCP server runs code from the workspace, which the model can edit: its approval covers the
content of the files its launch line names, and it runs in the bash tool's sandbox (real bubblewrap)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from agent.settings.config import Config
from agent.settings.mcp_setup import approvals, configured_servers, mcp_session
from tools.base import ToolContext
from tools.sandbox import probe_bwrap

READER = textwrap.dedent("""
    from pathlib import Path
    from mcp.server import MCPServer
    server = MCPServer("reader")

    @server.tool()
    def read(path: str) -> str:
        \"\"\"The text of a file, or why it cannot be read.\"\"\"
        try:
            return "CONTENT:" + Path(path).expanduser().read_text()
        except OSError as exc:
            return f"UNREADABLE: {type(exc).__name__}"

    @server.tool()
    def write(path: str) -> str:
        \"\"\"Write a file, or say why not.\"\"\"
        try:
            Path(path).write_text("x")
            return "WROTE"
        except OSError as exc:
            return f"REFUSED: {type(exc).__name__}"

    server.run()
""")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake HOME with a secret, and the user's config and approvals in tmp."""
    fake_home = tmp_path / "home"
    (fake_home / ".ssh").mkdir(parents=True)
    (fake_home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def project(path: Path) -> Path:
    path.mkdir()
    (path / "srv.py").write_text(READER)
    (path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"reader": {"command": sys.executable, "args": ["srv.py"]}}})
    )
    return path


@pytest.mark.slow
def test_a_rewritten_server_script_is_not_started_without_new_approval(home):
    workspace = project(home / "p")
    approvals().approve(configured_servers(workspace).servers[0])
    notes: list[str] = []
    with mcp_session(Config(), workspace, notes.append) as tools:
        assert [t.name for t in tools] == ["reader__read", "reader__write"], notes

    (workspace / "srv.py").write_text(READER.replace("CONTENT:", "STOLEN:"))  # the model edits the server
    notes.clear()
    with mcp_session(Config(), workspace, notes.append) as tools:
        assert tools == []
    assert "MCP server 'reader' from" in notes[0] and "is not approved, skipped" in notes[0]

    approvals().approve(configured_servers(workspace).servers[0])  # the user looked and approves again
    with mcp_session(Config(), workspace, notes.append) as tools:
        assert len(tools) == 2


@pytest.mark.slow
@pytest.mark.skipif(not probe_bwrap().ok, reason="bubblewrap is not usable here")
def test_a_project_server_runs_sandboxed_and_a_user_server_as_configured(home):
    workspace = project(home / "p")
    secret, outside = Path.home() / ".ssh" / "id_rsa", home / "outside.txt"
    approvals().approve(configured_servers(workspace).servers[0])
    notes: list[str] = []
    with mcp_session(Config(), workspace, notes.append) as tools:
        read, write = tools
        ctx = ToolContext(workspace)
        assert read.invoke({"path": str(secret)}, ctx).output.startswith("UNREADABLE"), notes
        assert read.invoke({"path": "srv.py"}, ctx).output.startswith("CONTENT:")  # its own workspace: fine
        write.invoke({"path": str(outside)}, ctx)  # (lands in the sandbox's private /tmp at most)
        assert write.invoke({"path": "made.txt"}, ctx).output == "WROTE"  # workspace-write, like bash
    assert not outside.exists() and (workspace / "made.txt").exists()

    with mcp_session(Config(sandbox="read-only"), workspace, notes.append) as tools:
        assert tools[1].invoke({"path": "made2.txt"}, ToolContext(workspace)).output.startswith("REFUSED")

    user_file = home / "config" / "dflash-agent" / "mcp.json"  # the same script, set up by the user
    user_file.parent.mkdir(parents=True)
    user_file.write_text(
        json.dumps({"mcpServers": {"mine": {"command": sys.executable, "args": [str(workspace / "srv.py")]}}})
    )
    (workspace / ".mcp.json").unlink()
    with mcp_session(Config(), workspace, notes.append) as tools:
        assert tools[0].invoke({"path": str(secret)}, ToolContext(workspace)).output == "CONTENT:PRIVATE KEY"


class Notes:
    def __init__(self):
        self.notes: list[str] = []

    def on_text(self, text: str) -> None:
        pass

    def on_step(self, step, completion, results) -> None:
        pass

    def on_note(self, text: str) -> None:
        self.notes.append(text)


@pytest.mark.slow
def test_the_model_rewriting_the_server_in_a_run_stops_it_in_the_next(home, scripted):
    """The same through `run`: the model rewrites srv.py with write_file (committed on the run's branch);
    the next run does not start the rewritten server."""
    import git

    from agent.workflows.runs import run_task

    workspace = project(home / "repo")
    repo = git.Repo.init(workspace)
    repo.index.add(["srv.py", ".mcp.json"])
    repo.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    approvals().approve(configured_servers(workspace).servers[0])
    rewrite = (
        "<write_file>\n<path>srv.py</path>\n<content>\n"
        + READER.replace("CONTENT:", "STOLEN:")
        + "\n</content>\n</write_file>"
    )
    first = Notes()
    run_task(
        workspace,
        "change the server",
        Config(current_branch=True),
        first,
        backend=scripted([rewrite, "<finish><summary>done</summary></finish>"]),
    )
    assert "MCP server 'reader': 2 tools" in " ".join(first.notes), first.notes
    assert "STOLEN:" in (workspace / "srv.py").read_text()

    second = Notes()
    run_task(
        workspace,
        "use the server",
        Config(current_branch=True),
        second,
        backend=scripted(["<finish><summary>done</summary></finish>"]),
    )
    assert any("MCP server 'reader' from" in n and "is not approved, skipped" in n for n in second.notes), second.notes
