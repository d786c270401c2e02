"""`agent mcp ...`: manage and check MCP server connections, and serve the agent itself over MCP."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agent.commands.common import Endpoint, Model, Profile, err, fail

if TYPE_CHECKING:
    from tools.mcp_config import MCPServerConfig

app = typer.Typer(help="Connect MCP servers to the agent, and serve the agent over MCP.", no_args_is_help=True)

ProjectOpt = typer.Option(None, "--project", help="The project folder: use its .mcp.json instead of your user file.")


def _find(name: str, project: Path | None) -> MCPServerConfig:
    from agent.settings.mcp_setup import configured_servers

    loaded = configured_servers(project or Path.cwd())
    server = next((s for s in loaded.servers if s.name == name), None)
    if server is None:
        known = ", ".join(s.name for s in loaded.servers) or "none"
        problems = "".join(f"\n  {p}" for p in loaded.problems)
        fail(f"no MCP server named {name!r} (configured: {known}); add one with `agent mcp add`{problems}")
    return server


@app.command("list")
def mcp_list(project: Path | None = ProjectOpt) -> None:
    """Show configured servers: where they come from, what runs, and whether they are approved."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from agent.settings.mcp_setup import approvals, configured_servers, user_mcp_file
    from agent.ui.plain import plain

    loaded = configured_servers(project or Path.cwd())
    store = approvals()
    table = Table("name", "scope", "transport", "runs / reaches", "state")
    table.columns[3].overflow = "fold"  # a long value wraps, never cut
    for server in loaded.servers:  # every cell plain text: a `[/x]` or `[conceal]` in an entry is shown as is
        state = "disabled" if server.disabled else ("approved" if store.approved(server) else "needs approval")
        table.add_row(server.name, server.scope, server.transport, plain(server.launch_line()), state)
    Console().print(table if loaded.servers else plain(f"No MCP servers configured (user file: {user_mcp_file()})."))
    for problem in loaded.problems:
        err.print(Text.assemble(("skipped:", "yellow"), " ", plain(problem)), highlight=False)


@app.command("add")
def mcp_add(
    name: str = typer.Argument(..., help="Name for the server; its tools appear as NAME__tool."),
    command: list[str] | None = typer.Argument(None, help="For stdio: the command and its arguments, after `--`."),
    url: str | None = typer.Option(
        None, "--url", help="For streamable HTTP: the server's URL (e.g. http://127.0.0.1:8765/mcp)."
    ),
    env: list[str] | None = typer.Option(
        None, "--env", "-e", help="KEY=VALUE for the server's environment; VALUE may be ${VAR}."
    ),
    header: list[str] | None = typer.Option(None, "--header", help="'Name: value' HTTP header; value may be ${VAR}."),
    project: Path | None = typer.Option(
        None, "--project", help="Write to this project's .mcp.json instead of your user file."
    ),
) -> None:
    """Add (or replace) a server: `agent mcp add time -- uvx mcp-server-time`, or `--url URL`."""
    if bool(command) == bool(url):
        fail("give either a command after `--` (stdio) or --url (HTTP)")
    raw: dict = {"command": command[0], "args": command[1:]} if command else {"url": url}
    if env:
        raw["env"] = dict(_split(item, "=", "--env KEY=VALUE") for item in env)
    if header:
        raw["headers"] = dict(_split(item, ":", "--header 'Name: value'") for item in header)
    typer.echo(f"added {name!r} to {_save(name, raw, project)}")


def _save(name: str, raw: dict | None, project: Path | None) -> Path:
    """Write (or, with `raw` None, remove) one entry in the user file or the project's .mcp.json."""
    from agent.settings.mcp_setup import user_mcp_file
    from tools.mcp_config import MCPConfigError, write_entry

    path = (project / ".mcp.json") if project else user_mcp_file()
    try:
        write_entry(path, name, raw)
    except MCPConfigError as exc:
        fail(str(exc))
    return path


def _split(item: str, sep: str, form: str) -> tuple[str, str]:
    key, found, value = item.partition(sep)
    if not found or not key.strip():
        fail(f"expected {form}, got {item!r}")
    return key.strip(), value.strip()


@app.command("remove")
def mcp_remove(name: str = typer.Argument(...), project: Path | None = ProjectOpt) -> None:
    """Remove a server from your user file (or the project's .mcp.json with --project)."""
    typer.echo(f"removed {name!r} from {_save(name, None, project)}")


@app.command("approve")
def mcp_approve(name: str = typer.Argument(...), project: Path | None = ProjectOpt) -> None:
    """Allow a project's server to start (asked once per exact command and content of the workspace files it
    names; a change to either asks again)."""
    from agent.settings.mcp_setup import approvals

    server = _find(name, project)
    approvals().approve(server)
    typer.echo(f"approved {name!r}: {server.launch_line()}")


@app.command("test")
def mcp_test(
    name: str = typer.Argument(...),
    project: Path | None = ProjectOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="Approve a project server without asking."),
) -> None:
    """Start one server, list its tools, and stop it: exit code 1 when it does not work."""
    from rich.console import Console
    from rich.table import Table

    from agent.settings.config import ConfigError, load_config
    from agent.settings.mcp_setup import approvals, ask_on_terminal, describe_status, log_dir
    from tools.mcp_client import MCPHub

    server = _find(name, project)
    try:
        policy = load_config(project or Path.cwd()).sandbox_policy()
    except ConfigError as exc:
        fail(str(exc))
    if not approvals().approved(server):
        if not (yes or ask_on_terminal(server)):
            fail(
                f"{name!r} from {server.origin} is not approved; run with --yes after checking: {server.launch_line()}"
            )
        approvals().approve(server)
    with MCPHub([server], log_dir(), policy) as hub:
        status = hub.statuses()[0]
        err.print(describe_status(status), highlight=False)
        if status.state != "ready":
            raise typer.Exit(1)
        table = Table("tool", "description")
        for spec in hub.tools()[name]:
            table.add_row(
                f"{name}__{spec.name}",
                (spec.description or "").strip().splitlines()[0][:100] if spec.description else "",
            )
        Console().print(table)


@app.command("serve")
def mcp_serve(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio."),
    port: int = typer.Option(8765, "--port", help="HTTP port (with --http)."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="DFLASH_AGENT_MCP_TOKEN",
        help="Bearer token HTTP clients must send (default: a new random one, printed on stderr).",
    ),
    root: list[Path] | None = typer.Option(
        None, "--root", help="Folders clients may ask the agent to work in (default: the current one)."
    ),
    parallel: int = typer.Option(
        1,
        "--parallel",
        "-j",
        min=1,
        help="Runs at once (with --profile: one llama-server with this many slots, started once for all runs).",
    ),
    model: Model = None,
    endpoint: Endpoint = None,
    profile: Profile = None,
) -> None:
    """Serve the agent over MCP: tools run_task, new_project, list_skills. IDEs launch `agent mcp serve`."""
    from agent.workflows.mcp_server import build_server, serve_http, serve_stdio, shared_backend

    with shared_backend(dict(model=model, endpoint=endpoint, profile=profile), parallel) as (overrides, runs):
        server = build_server(overrides, roots=root, runs_at_once=runs)
        if not http:
            serve_stdio(server)
            return
        if not token:
            token = secrets.token_urlsafe(24)
            err.print(f"bearer token for this server: {token}  (set --token or DFLASH_AGENT_MCP_TOKEN to choose one)")
        err.print(f"serving MCP at http://127.0.0.1:{port}/mcp (pid {os.getpid()}, {runs} run(s) at once)")
        serve_http(server, port, token)
