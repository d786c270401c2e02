"""Which MCP servers a run connects to: the user's file, the project's `.mcp.json` (approved once per exact
command and content of the workspace files it names; run under the run's sandbox), started together for the
run and stopped after it. Failures are reported and the run goes on."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.settings.config import Config, user_config_path
from agent.ui.plain import visible
from inference.paths import data_dir, platform_cache_dir
from tools.mcp import MCPTool, mcp_tools
from tools.mcp_client import MCPHub, ServerStatus
from tools.mcp_config import Approvals, LoadedServers, MCPServerConfig, load_servers


def user_mcp_file() -> Path:
    return user_config_path().parent / "mcp.json"


def approvals() -> Approvals:
    return Approvals(data_dir() / "mcp-approvals.json")


def log_dir() -> Path:
    return platform_cache_dir() / "mcp-logs"


def configured_servers(project: Path | None) -> LoadedServers:
    return load_servers(user_mcp_file(), project)


def ask_on_terminal(server: MCPServerConfig) -> bool:
    """The approval question for a project server: the exact command as written, every value whole, hidden
    characters shown escaped (`launch_line`), flagged as code execution."""
    if not sys.stdin.isatty():
        return False
    print(
        f"\nThe project file {visible(server.origin)} wants to start MCP server {server.name!r}.\n"
        f"This runs code on your machine (under the run's sandbox setting):\n\n    {server.launch_line()}\n",
        file=sys.stderr,
    )
    return input("Allow it (now and next time, until the command or its files change)? [y/N] ").strip().lower() in (
        "y",
        "yes",
    )


def approved_servers(
    loaded: LoadedServers,
    ask: Callable[[MCPServerConfig], bool] = ask_on_terminal,
    note: Callable[[str], None] = lambda text: None,
) -> list[MCPServerConfig]:
    """Enabled servers the user allows; a project server not approved yet is asked about (or skipped)."""
    store, allowed = approvals(), []
    for server in loaded.servers:
        if server.disabled:
            continue
        if not store.approved(server):
            if not ask(server):
                where = f" --project {server.root}" if server.root else ""
                note(
                    f"MCP server {server.name!r} from {server.origin} is not approved, skipped; approve it with "
                    f"`agent mcp approve {server.name}{where}` after checking: {server.launch_line()}"
                )
                continue
            store.approve(server)
        allowed.append(server)
    return allowed


@contextmanager
def mcp_session(
    config: Config, workspace: Path, note: Callable[[str], None] = lambda text: None
) -> Iterator[list[MCPTool]]:
    """The MCP tools for one run; every problem becomes a note, never an exception."""
    if not config.mcp:
        yield []
        return
    loaded = configured_servers(workspace)
    for problem in loaded.problems:
        note(f"MCP config problem (skipped): {problem}")
    servers = approved_servers(loaded, note=note)
    if not servers:
        yield []
        return
    with MCPHub(servers, log_dir(), config.sandbox_policy()) as hub:
        for status in hub.statuses():
            note(describe_status(status))
        yield mcp_tools(hub, builtin_tool_names(), note)


def builtin_tool_names() -> set[str]:
    """Names no MCP tool may take: the agent's own tools always win."""
    from agent.core.loop import FinishTool
    from agent.workflows.runtime import default_tools
    from skills.tool import ActivateSkillTool

    return {tool.name for tool in default_tools()} | {FinishTool.name, ActivateSkillTool.name}


def describe_status(status: ServerStatus) -> str:
    if status.state == "ready":
        return f"MCP server {status.name!r}: {len(status.tools)} tools ({status.detail})"
    return f"MCP server {status.name!r} skipped: {status.detail}"
