"""The MCP client against real servers over real transports: our example server (stdio and HTTP),
mcp-server-time and mcp-server-git from PyPI, server-everything from npm, and servers that crash or hang."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from inference.server import free_port
from tools.base import ToolContext
from tools.mcp import mcp_tools
from tools.mcp_client import MCPHub
from tools.mcp_config import parse_entry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "release_server.py"
NPM_PREFIX = Path.home() / ".cache" / "dflash-agent" / "npm-mcp"
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"


def stdio(name: str, *args: str, **extra) -> object:
    return parse_entry(name, {"command": args[0], "args": list(args[1:]), **extra})


def by_name(hub: MCPHub) -> dict:
    return {t.name: t for t in mcp_tools(hub)}


@pytest.fixture(scope="module")
def everything_js() -> Path:
    """server-everything installed once per machine from the npm registry into the user cache."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm are not installed: apt-get install nodejs npm to run the npm MCP server test")
    script = NPM_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.is_file():
        subprocess.run(
            ["npm", "install", "--prefix", str(NPM_PREFIX), EVERYTHING, "--no-audit", "--no-fund"],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return script


@pytest.mark.slow
def test_example_server_over_stdio_maps_every_result_kind(tmp_path):
    ctx = ToolContext(tmp_path)
    with MCPHub(
        [stdio("release", sys.executable, str(EXAMPLE), env={"RELEASE_VERSION": "9.9.0"})], tmp_path / "logs"
    ) as hub:
        status = hub.statuses()[0]
        assert status.state == "ready", status.detail
        tools = by_name(hub)
        assert {"release__current_release", "release__add_days", "release__check_branch_name"} <= set(tools)

        release = tools["release__current_release"].invoke({}, ctx)
        assert not release.is_error and '"version": "9.9.0"' in release.output  # env from the config reached it

        # text protocol values are strings; the schema's integer type converts them
        assert tools["release__add_days"].invoke({"date": "2026-12-30", "days": "3"}, ctx).output == "2027-01-02"

        refused = tools["release__check_branch_name"].invoke({"name": "main"}, ctx)
        assert refused.is_error and "release/<major>.<minor>" in refused.output

        image = tools["release__team_logo"].invoke({}, ctx)
        assert not image.is_error and image.output.startswith("[image image/png, 70 bytes")

        missing = tools["release__add_days"].invoke({"date": "2026-01-01"}, ctx)
        assert missing.is_error and "days" in missing.output


@pytest.mark.slow
def test_tool_list_change_is_picked_up(tmp_path):
    with MCPHub([stdio("release", sys.executable, str(EXAMPLE))], tmp_path) as hub:
        tools = by_name(hub)
        assert "hotfix_version" not in [t.name for t in hub.tools()["release"]]
        assert not tools["release__enable_hotfix_tools"].invoke({}, ToolContext(tmp_path)).is_error
        deadline = time.monotonic() + 10
        while "hotfix_version" not in [t.name for t in hub.tools()["release"]] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hub.list_changes("release") >= 1
        assert "release__hotfix_version" in by_name(hub)


@pytest.mark.slow
def test_crashing_and_hanging_servers_are_reported_and_skipped(tmp_path):
    crash = stdio(
        "crash",
        sys.executable,
        "-c",
        "import sys; print('config error: API_TOKEN missing', file=sys.stderr); sys.exit(3)",
    )
    hang = stdio("hang", sys.executable, "-c", "import time; time.sleep(120)", startup_timeout=3)
    missing = stdio("missing", "no-such-mcp-server-binary")
    good = stdio("release", sys.executable, str(EXAMPLE))
    started = time.monotonic()
    with MCPHub([crash, hang, missing, good], tmp_path) as hub:
        elapsed = time.monotonic() - started
        status = {s.name: s for s in hub.statuses()}
        assert status["release"].state == "ready"
        assert status["crash"].state == "failed" and "API_TOKEN missing" in status["crash"].detail
        assert status["hang"].state == "failed" and "did not answer within 3 s" in status["hang"].detail
        assert status["missing"].state == "failed" and "not found" in status["missing"].detail
        assert set(hub.tools()) == {"release"}
        assert elapsed < 15  # concurrent start: the hang costs its own timeout, not the others'
    leftover = subprocess.run(["pgrep", "-f", "time.sleep\\(120\\)"], capture_output=True, text=True).stdout
    assert leftover.strip() == "", "the hung server was not stopped"


@pytest.mark.slow
def test_a_server_that_dies_mid_run_gives_an_error_result(tmp_path):
    with MCPHub([stdio("release", sys.executable, str(EXAMPLE))], tmp_path) as hub:
        tools = by_name(hub)
        subprocess.run(["pkill", "-f", str(EXAMPLE)], check=False)
        time.sleep(0.5)
        result = tools["release__current_release"].invoke({}, ToolContext(tmp_path))
        assert result.is_error and "release" in result.output


@pytest.mark.slow
def test_example_server_over_streamable_http(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        entry = parse_entry("release", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
        deadline = time.monotonic() + 20
        while True:
            with MCPHub([entry], tmp_path) as hub:
                if hub.statuses()[0].state == "ready" or time.monotonic() > deadline:
                    break
            time.sleep(0.3)
        with MCPHub([entry], tmp_path) as hub:
            assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
            assert (
                by_name(hub)["release__add_days"]
                .invoke({"date": "2026-02-27", "days": 2}, ToolContext(tmp_path))
                .output
                == "2026-03-01"
            )
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
def test_mcp_server_time_from_pypi(tmp_path):
    binary = Path(sys.executable).parent / "mcp-server-time"
    with MCPHub([stdio("time", str(binary), "--local-timezone", "UTC")], tmp_path) as hub:
        assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
        tools = by_name(hub)
        result = tools["time__convert_time"].invoke(
            {"source_timezone": "Europe/Berlin", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            ToolContext(tmp_path),
        )
        assert not result.is_error and "20:00" in result.output
        bad = tools["time__get_current_time"].invoke({"timezone": "Mars/Olympus"}, ToolContext(tmp_path))
        assert bad.is_error


@pytest.mark.slow
def test_mcp_server_git_from_pypi(tmp_path):
    repo = git.Repo.init(tmp_path / "r")
    (tmp_path / "r" / "a.txt").write_text("hello\n")
    repo.index.add(["a.txt"])
    repo.index.commit("first commit", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    (tmp_path / "r" / "a.txt").write_text("hello world\n")
    binary = Path(sys.executable).parent / "mcp-server-git"
    with MCPHub([stdio("git", str(binary), "--repository", str(tmp_path / "r"))], tmp_path) as hub:
        assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
        tools = by_name(hub)
        ctx = ToolContext(tmp_path)
        assert "first commit" in tools["git__git_log"].invoke({"repo_path": str(tmp_path / "r")}, ctx).output
        diff = tools["git__git_diff_unstaged"].invoke({"repo_path": str(tmp_path / "r")}, ctx)
        assert "+hello world" in diff.output


def test_server_everything_from_npm(tmp_path, everything_js):
    with MCPHub([stdio("everything", "node", str(everything_js), "stdio")], tmp_path) as hub:
        status = hub.statuses()[0]
        assert status.state == "ready" and status.detail.startswith("2025"), status.detail  # a legacy-era server
        tools = by_name(hub)
        ctx = ToolContext(tmp_path)
        assert "hello there" in tools["everything__echo"].invoke({"message": "hello there"}, ctx).output
        assert "5" in tools["everything__get-sum"].invoke({"a": "2", "b": "3"}, ctx).output
        image = tools["everything__get-tiny-image"].invoke({}, ctx).output
        assert "[image image/png" in image
        structured = tools["everything__get-structured-content"].invoke({"location": "New York"}, ctx)
        assert not structured.is_error and "temperature" in structured.output
        resource = tools["everything__get-resource-reference"].invoke({"resourceType": "Text", "resourceId": "1"}, ctx)
        assert "[resource " in resource.output


HANGING_TOOL_SERVER = '''
import time
from mcp.server import MCPServer
server = MCPServer("slow")

@server.tool()
def wait_forever() -> str:
    """Never answers."""
    time.sleep(3600)
    return "never"

@server.tool()
def ping() -> str:
    """Answers at once."""
    return "pong"

server.run()
'''


@pytest.mark.slow
def test_a_tool_that_hangs_times_out_and_the_server_stays_usable(tmp_path):
    script = tmp_path / "slow_server.py"
    script.write_text(HANGING_TOOL_SERVER)
    with MCPHub([stdio("slow", sys.executable, str(script), tool_timeout=2)], tmp_path) as hub:
        tools = by_name(hub)
        started = time.monotonic()
        hung = tools["slow__wait_forever"].invoke({}, ToolContext(tmp_path))
        assert hung.is_error and "did not answer within 2 s" in hung.output
        assert time.monotonic() - started < 10
        assert tools["slow__ping"].invoke({}, ToolContext(tmp_path)).output == "pong"
