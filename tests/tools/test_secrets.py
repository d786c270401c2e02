"""Secret values of the agent's environment never reach the model, whichever tool shows them: file tools,
search, listing, and MCP tools (a real MCP server over stdio) all pass the one redaction in Tool.invoke."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from tools.base import Tool, Toolbox, ToolContext, ToolResult
from tools.files import ListFilesTool, ReadFileTool, SearchTool
from tools.mcp import mcp_tools
from tools.mcp_client import MCPHub
from tools.mcp_config import parse_entry
from tools.secrets import redact_secrets

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "release_server.py"


@pytest.fixture
def ctx(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return ToolContext(workspace)


def test_secret_values_are_redacted_from_every_tools_output(ctx, monkeypatch):
    secret = "sk-live-9f8e7d6c5b4a"
    monkeypatch.setenv("PAYMENTS_API_KEY", secret)
    (ctx.workspace / "settings.py").write_text(f"KEY = '{secret}'\n")
    (ctx.workspace / f"{secret}.txt").write_text("named after it\n")

    class Echo(Tool):  # stands in for an MCP tool: any tool's result passes the same post-processing
        name, description = "remote__echo", "echo"

        class Params(BaseModel):
            text: str

        def run(self, params, ctx):
            return ToolResult(output=params.text)

    box = Toolbox([ReadFileTool(), SearchTool(), ListFilesTool(), Echo()])
    outputs = [
        box.run("read_file", {"path": "settings.py"}, ctx).output,
        box.run("search", {"pattern": "KEY"}, ctx).output,
        box.run("list_files", {}, ctx).output,
        box.run("remote__echo", {"text": f"token={secret}"}, ctx).output,
    ]
    for output in outputs:
        assert secret not in output and "[redacted: value of $PAYMENTS_API_KEY]" in output, output


def test_an_mcp_tools_result_is_redacted(ctx, monkeypatch):
    """The example server answers with the version its config gives it: here, a secret's value."""
    secret = "rel-token-5e4d3c2b1a"
    monkeypatch.setenv("RELEASE_API_TOKEN", secret)
    entry = parse_entry(
        "release", {"command": sys.executable, "args": [str(EXAMPLE)], "env": {"RELEASE_VERSION": secret}}
    )
    with MCPHub([entry], ctx.workspace.parent / "logs") as hub:
        assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
        tool = {t.name: t for t in mcp_tools(hub)}["release__current_release"]
        result = Toolbox([tool]).run(tool.name, {}, ctx)
    assert secret not in result.output and "[redacted: value of $RELEASE_API_TOKEN]" in result.output, result.output


def test_only_long_values_of_secret_looking_names_are_redacted():
    env = {"GITHUB_TOKEN": "ghp_abcdefgh12", "SHORT_TOKEN": "1234567", "EDITOR_NAME": "vim-is-long-enough"}
    text = "ghp_abcdefgh12 1234567 vim-is-long-enough"
    assert redact_secrets(text, env) == "[redacted: value of $GITHUB_TOKEN] 1234567 vim-is-long-enough"
