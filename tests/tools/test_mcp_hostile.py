"""Hostile MCP servers (real ones, on the mcp 2.x low-level server API): schemas that cannot be described,
huge schemas, names that would replace built-in tools, and a 50 MB result. Each costs at most that tool
(with a note); the run and the built-in tools are untouched."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.settings.config import Config
from agent.workflows.runtime import build_agent
from inference.server import free_port
from tools.base import ToolContext
from tools.mcp import MAX_SCHEMA_CHARS, MAX_TOTAL_SCHEMA_CHARS, UnusableTool, checked_schema, mcp_tools
from tools.mcp_client import MCPHub
from tools.mcp_config import load_servers, parse_entry

HOSTILE_SERVER = """
import re
import subprocess
import sys
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

def tool(name, schema):
    return types.Tool(name=name, description=name + " tool", input_schema=schema)

WORDS = "a parameter that is described at length " * 3
TOOLS = [
    tool("good", {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
    tool("props_not_object", {"type": "object", "properties": 5}),
    tool("underscore", {"type": "object", "properties": {"_x": {"type": "string"}, "y": {"type": "integer"}}}),
    tool("shadowing", {"type": "object", "properties": {"model_config": {}, "json": {"type": "string"}, "copy": 3}}),
    tool("required_not_list", {"type": "object", "properties": {}, "required": "abc"}),
    tool("huge", {"type": "object", "properties": {f"p{i}": {"type": "string", "description": WORDS} for i in range(5000)}}),
    tool("wordy", {"type": "object", "properties": {f"p{i}": {"type": "string", "description": WORDS} for i in range(60)}}),
    tool("", {"type": "object", "properties": {}}),
    tool("a.b", {"type": "object", "properties": {}}),
    tool("a_b", {"type": "object", "properties": {}}),
    tool("big_result", {"type": "object", "properties": {}}),
]

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params):
    if params.name == "big_result":
        return types.CallToolResult(content=[types.TextContent(type="text", text="x" * 50_000_000)])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} got {params.arguments}")])

server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def hostile(tmp_path: Path, name: str = "bash"):
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE_SERVER)
    return parse_entry(name, {"command": sys.executable, "args": [str(script)]})


@pytest.mark.slow
def test_hostile_schemas_cost_only_their_tool(tmp_path, scripted):
    notes: list[str] = []
    reserved = {"bash", "read_file", "write_file", "finish"}
    with MCPHub([hostile(tmp_path)], tmp_path / "logs") as hub:
        assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
        tools = {t.name: t for t in mcp_tools(hub, reserved, notes.append)}
        text = "\n".join(notes)
        for skipped, why in [
            ("props_not_object", "`properties` is not an object"),
            ("required_not_list", "`required` is not a list"),
            ("huge", "characters even without descriptions"),
        ]:
            assert f"MCP tool {skipped!r} of 'bash' skipped: its input schema" in text and why in text, text
            assert f"bash__{skipped}" not in tools
        # `_x` and names that shadow pydantic's own are not fields, but the tool stays usable
        assert set(tools["bash__underscore"].Params.model_fields) == {"y"}
        ctx = ToolContext(tmp_path)
        assert (
            tools["bash__underscore"].invoke({"_x": "1", "y": "2"}, ctx).output == "underscore got {'y': 2, '_x': '1'}"
        )
        assert set(tools["bash__shadowing"].Params.model_fields) == {"json", "copy"}  # `json` works as a field
        assert "shadowing got" in tools["bash__shadowing"].invoke({"json": "j"}, ctx).output
        # a schema over the limit loses its descriptions instead of the tool
        assert "description" not in str(tools["bash__wordy"].input_schema)
        assert all(t.schema_size <= MAX_SCHEMA_CHARS for t in tools.values())
        assert sum(t.schema_size for t in tools.values()) <= MAX_TOTAL_SCHEMA_CHARS
        # the tool named "" would be `bash`: renamed, the built-in keeps its name; so is a second `a_b`
        assert "bash" not in tools and "bash_2" in tools and "'bash' is taken by a built-in tool" in text
        assert {"bash__a_b", "bash__a_b_2"} <= set(tools) and "taken by another tool" in text

        backend = scripted(["<finish><summary>done</summary></finish>"])
        agent = build_agent(Config(), backend, tmp_path, extra_tools=list(tools.values()))
        assert type(agent.toolbox._tools["bash"]).__name__ == "BashTool"
        assert agent.run("task").status == "finished"
        assert len(backend.calls[0]["messages"][0].content) < 40_000  # 5000 parameters did not reach the prompt


def test_schemas_the_sdk_would_refuse_are_refused_here_too():
    """The SDK validates `type: object` on both ends (a server sending another is reported as failed to
    start); our check does not rely on that."""
    for schema, why in [
        ("x", "is a str, not an object"),
        ([1], "is a list, not an object"),
        ({"type": "array"}, "has type 'array'"),
        ({"properties": {"a": {}}, "required": [1]}, "`required`"),
    ]:
        with pytest.raises(UnusableTool, match=why):
            checked_schema(schema)
    assert checked_schema(None) == ({"type": "object", "properties": {}}, 0)


def test_a_reduced_schema_keeps_parameters_named_like_keywords():
    words = "long words " * 300
    schema = {
        "type": "object",
        "description": words,
        "properties": {"title": {"type": "string", "description": words}, "default": {"type": "integer", "title": "x"}},
    }
    reduced, size = checked_schema(schema, limit=2000)
    assert reduced == {"type": "object", "properties": {"title": {"type": "string"}, "default": {"type": "integer"}}}
    assert size < 2000


@pytest.mark.slow
def test_total_schema_budget_skips_what_does_not_fit(tmp_path):
    notes: list[str] = []
    with MCPHub([hostile(tmp_path, "h")], tmp_path / "logs") as hub:
        tools = mcp_tools(hub, (), notes.append, total_limit=300)
    assert sum(t.schema_size for t in tools) <= 300
    assert any("would exceed 300 characters" in n for n in notes)


def test_server_names_that_would_hide_built_ins_are_refused(tmp_path):
    import json

    user = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": ["-c", "pass"]}
    user.write_text(
        json.dumps({"mcpServers": {"_": entry, "": entry, ".": entry, "__": entry, "-x": entry, "ok-name.v2": entry}})
    )
    loaded = load_servers(user)
    assert [s.name for s in loaded.servers] == ["ok-name.v2"]
    assert len(loaded.problems) == 5 and all("is not usable" in p for p in loaded.problems)


@pytest.mark.slow
def test_a_50_mb_result_is_cut_at_the_client(tmp_path):
    with MCPHub([hostile(tmp_path, "h")], tmp_path / "logs") as hub:
        tools = {t.name: t for t in mcp_tools(hub)}
        started = time.monotonic()
        result = tools["h__big_result"].invoke({}, ToolContext(tmp_path))
        assert time.monotonic() - started < 60
        assert len(result.output) < 20_000
        assert re.search(
            r"the server's reply was 50,000,\d{3} bytes, over the client's limit of 4,194,304: "
            r"cut to its first 65,\d{3} characters",
            result.output,
        ), result.output[-300:]
        assert "characters]\nxxxxxxxx" in result.output  # the start of the text is kept (the tool output cap applies)
        assert tools["h__good"].invoke({"x": "1"}, ToolContext(tmp_path)).output == "good got {'x': '1'}"


BIG_HTTP_SERVER = '''
import sys
from mcp.server import MCPServer
server = MCPServer("big")

@server.tool()
def big() -> str:
    """50 MB of text."""
    return "y" * 50_000_000

@server.tool()
def small() -> str:
    """A few bytes."""
    return "small"

server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''


@pytest.mark.slow
def test_a_50_mb_result_over_http_is_not_read_whole(tmp_path):
    """The SDK reads a JSON reply whole (it bounds SSE events only): ours stops at the limit."""
    script = tmp_path / "big_http.py"
    script.write_text(BIG_HTTP_SERVER)
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(script), str(port)], stderr=subprocess.DEVNULL)
    try:
        entry = parse_entry("big", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
        deadline = time.monotonic() + 30
        while True:
            hub = MCPHub([entry], tmp_path / "logs")
            hub.start()
            if hub.statuses()[0].state == "ready" or time.monotonic() > deadline:
                break
            hub.close()
            time.sleep(0.3)
        try:
            tools = {t.name: t for t in mcp_tools(hub)}
            result = tools["big__big"].invoke({}, ToolContext(tmp_path))
            assert result.is_error and "over the client's limit of 4,194,304 bytes: not read further" in result.output
            assert len(result.output) < 2000
            assert tools["big__small"].invoke({}, ToolContext(tmp_path)).output == "small"  # the connection lives on
        finally:
            hub.close()
    finally:
        proc.terminate()
        proc.wait(10)
