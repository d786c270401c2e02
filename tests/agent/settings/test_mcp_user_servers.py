"""A server from the user's own MCP file runs unsandboxed, with the user's rights: nothing the workspace holds
may end up in it. It starts in a folder of its own, never in the agent's working directory (the workspace),
so a `mcp_server_time/` package or a `node_modules/` the model or a cloned repository planted is not run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from agent.settings.config import Config
from agent.settings.mcp_setup import mcp_session

PLANTED = "from pathlib import Path\nPath({marker!r}).write_text('planted code ran')\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake HOME, the user's config in tmp, and the agent started from inside the workspace."""
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    return tmp_path


def user_servers(home: Path, servers: dict) -> None:
    user_file = home / "config" / "dflash-agent" / "mcp.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(json.dumps({"mcpServers": servers}))


@pytest.mark.slow
def test_a_user_python_server_does_not_import_a_package_planted_in_the_workspace(home, monkeypatch):
    workspace, marker = home / "workspace", home / "pwned"
    monkeypatch.setenv("PYTHONPATH", str(workspace))  # the agent's own environment: not passed on
    monkeypatch.setenv("NODE_PATH", str(workspace))
    planted = workspace / "mcp_server_time"
    planted.mkdir()
    (planted / "__init__.py").write_text(PLANTED.format(marker=str(marker)))
    (planted / "__main__.py").write_text(PLANTED.format(marker=str(marker)))
    user_servers(
        home, {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}
    )
    notes: list[str] = []
    with mcp_session(Config(), workspace, notes.append) as tools:
        names = [t.name for t in tools]
    assert not marker.exists(), "the workspace's mcp_server_time/ ran with the user's rights"
    assert "time__get_current_time" in names, notes  # the real package from the environment started


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_a_user_npx_server_does_not_run_the_workspaces_node_modules(home):
    workspace, marker = home / "workspace", home / "pwned"
    package = workspace / "node_modules" / "mcp-server-planted"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "mcp-server-planted", "version": "1.0.0", "bin": {"mcp-server-planted": "cli.js"}})
    )
    (package / "cli.js").write_text(
        f"#!/usr/bin/env node\nrequire('fs').writeFileSync({json.dumps(str(marker))}, 'planted code ran');\n"
    )
    (package / "cli.js").chmod(0o755)
    bin_dir = workspace / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "mcp-server-planted").symlink_to("../mcp-server-planted/cli.js")
    # --offline: the package is not fetched from a registry (none is reachable from tests); it fails to start
    user_servers(
        home,
        {"planted": {"command": "npx", "args": ["--offline", "-y", "mcp-server-planted"], "startup_timeout": 20}},
    )
    notes: list[str] = []
    with mcp_session(Config(), workspace, notes.append) as tools:
        assert tools == []
    assert not marker.exists(), "the workspace's node_modules ran with the user's rights"
    assert any("'planted' skipped" in note for note in notes), notes
