"""`agent mcp add|list|remove|approve|test` on real files and a real server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "release_server.py"
runner = CliRunner()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_add_list_test_remove_a_user_server(home):
    added = runner.invoke(
        app, ["mcp", "add", "release", "-e", "RELEASE_VERSION=${RV:-1.0}", "--", sys.executable, str(EXAMPLE)]
    )
    assert added.exit_code == 0, added.output
    saved = json.loads((home / "config" / "dflash-agent" / "mcp.json").read_text())["mcpServers"]["release"]
    assert saved == {"command": sys.executable, "args": [str(EXAMPLE)], "env": {"RELEASE_VERSION": "${RV:-1.0}"}}

    listed = runner.invoke(app, ["mcp", "list"])
    assert "release" in listed.output and "approved" in listed.output

    tested = runner.invoke(app, ["mcp", "test", "release"])
    assert tested.exit_code == 0 and "release__current_release" in tested.output

    assert runner.invoke(app, ["mcp", "remove", "release"]).exit_code == 0
    missing = runner.invoke(app, ["mcp", "test", "release"])
    assert missing.exit_code == 1 and "no MCP server named 'release'" in missing.output


@pytest.mark.slow
def test_project_server_is_refused_until_approved(home):
    # a project's server lives in the project (it runs sandboxed: a checkout under /tmp is not visible there)
    script = home / "release_server.py"
    script.write_text(EXAMPLE.read_text())
    (home / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"release": {"command": sys.executable, "args": [str(script)]}}})
    )
    refused = runner.invoke(app, ["mcp", "test", "release"])
    assert refused.exit_code == 1 and "not approved" in refused.output
    assert "needs approval" in runner.invoke(app, ["mcp", "list"]).output
    approved = runner.invoke(app, ["mcp", "approve", "release"])
    assert approved.exit_code == 0 and str(script) in approved.output
    tested = runner.invoke(app, ["mcp", "test", "release"])
    assert tested.exit_code == 0, tested.output


def test_failing_server_exits_nonzero_with_the_cause(home):
    runner.invoke(app, ["mcp", "add", "broken", "--", sys.executable, "-c", "import sys; sys.exit('no config file')"])
    result = runner.invoke(app, ["mcp", "test", "broken"])
    assert result.exit_code == 1 and "no config file" in result.output


def test_add_needs_exactly_one_transport(home):
    result = runner.invoke(app, ["mcp", "add", "x"])
    assert result.exit_code == 1 and "either a command" in result.output
