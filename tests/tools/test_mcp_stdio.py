"""The capped stdio transport's handling of one oversized message (the whole path runs against a real
server returning 50 MB in test_mcp_hostile.py)."""

from __future__ import annotations

import pytest

from tools.mcp_stdio import OversizedMessage, oversized


def result_of(message) -> dict:
    return message.message.result


def test_id_after_the_result_and_an_escape_cut_in_half():
    head = b'{"result":{"content":[{"type":"text","text":"caf\\u00e9 line\\nnext \\u00'
    message = oversized(head, b'...","type":"text"}]},"jsonrpc":"2.0","id":"req-7"}', 9_000_000, 4_000_000)
    assert message.message.id == "req-7"
    note, text = (block["text"] for block in result_of(message)["content"])
    assert text == "café line\nnext " and "9,000,000 bytes" in note and "first 15 characters" in note


def test_a_text_that_closed_inside_the_kept_part():
    head = b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"short"},{"type":"image","data":"AAAA'
    assert result_of(oversized(head, b'AAAA"}]}}', 5_000_000, 4_000_000))["content"][1]["text"] == "short"


def test_no_id_means_dropped_and_reported():
    dropped = oversized(
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xxx', b"xx", 5_000_000, 4_000_000
    )
    assert isinstance(dropped, OversizedMessage) and "5,000,000-byte message" in str(dropped)


CHILD_SPAWNING_SERVER = '''
import subprocess, sys
from pathlib import Path
from mcp.server import MCPServer
child = subprocess.Popen(["sleep", "300"])
Path(sys.argv[1]).write_text(str(child.pid))
server = MCPServer("parent")

@server.tool()
def ping() -> str:
    """pong"""
    return "pong"

server.run()
'''


@pytest.mark.slow
def test_closing_stops_the_servers_children_too(tmp_path):
    """`npx`/`uvx` run the real server as a child: it must not outlive the run."""
    import sys
    import time
    from pathlib import Path

    from tools.mcp_client import MCPHub
    from tools.mcp_config import parse_entry

    script, pid_file = tmp_path / "parent.py", tmp_path / "child.pid"
    script.write_text(CHILD_SPAWNING_SERVER)
    with MCPHub([parse_entry("p", {"command": sys.executable, "args": [str(script), str(pid_file)]})]) as hub:
        assert hub.statuses()[0].state == "ready", hub.statuses()[0].detail
        child = Path(f"/proc/{pid_file.read_text()}")
        assert child.exists()
    deadline = time.monotonic() + 10
    while child.exists() and "Z" not in (child / "stat").read_text().split()[2] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not child.exists() or (child / "stat").read_text().split()[2] == "Z"
