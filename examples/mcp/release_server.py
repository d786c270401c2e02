"""A small MCP server of our own: facts about a (pretend) release process that a model cannot guess.

Run it over stdio (what `.mcp.json` does): `python examples/mcp/release_server.py`
or over HTTP on 127.0.0.1: `python examples/mcp/release_server.py --http 8765` (endpoint /mcp).
"""

from __future__ import annotations

import base64
import os
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Image
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

# a real 1x1 PNG, so image results can be shown
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer(
    "release-info",
    version="1.0.0",
    instructions="Facts about this team's release process: versions, code names, checks.",
)


class Release(BaseModel):
    version: str
    code_name: str


@server.tool()
def current_release() -> Release:
    """The version number and code name of the release being prepared now."""
    return Release(version=os.environ.get("RELEASE_VERSION", "7.3.1"), code_name="blue-heron")


@server.tool()
def add_days(date: str, days: int) -> str:
    """The ISO date `days` days after `date` (YYYY-MM-DD), e.g. to plan a release."""
    import datetime as dt

    try:
        start = dt.date.fromisoformat(date)
    except ValueError as exc:
        raise ToolError(f"date must be YYYY-MM-DD, got {date!r}") from exc
    return (start + dt.timedelta(days=days)).isoformat()


@server.tool()
def check_branch_name(name: str) -> str:
    """Check a branch name against the team's rule (release/<major>.<minor>)."""
    import re

    if not re.fullmatch(r"release/\d+\.\d+", name):
        raise ToolError(f"{name!r} breaks the rule: release branches are named release/<major>.<minor>")
    return f"{name} is a valid release branch name"


@server.tool()
def team_logo() -> Image:
    """The team's logo as a PNG image."""
    return Image(data=PIXEL_PNG, format="png")


@server.tool()
async def enable_hotfix_tools(ctx: Context) -> str:
    """Adds the hotfix tools to this server (its tool list changes)."""

    def hotfix_version() -> str:
        """The version number a hotfix of the current release gets."""
        return "7.3.2"

    server.add_tool(hotfix_version)
    await ctx.notify_tools_changed()
    return "hotfix tools enabled: hotfix_version"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
