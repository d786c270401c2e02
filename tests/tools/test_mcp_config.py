"""Reading MCP server entries: both JSON shapes, variable expansion, problems reported, approvals."""

from __future__ import annotations

import json

import pytest

from tools.mcp_config import Approvals, MCPConfigError, expand, load_servers, parse_entry, sanitize_name, write_entry


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_expansion_forms_and_missing_variable():
    env = {"TOKEN": "abc"}
    assert expand("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand("${env:TOKEN}/${LEVEL:-info}", env) == "abc/info"
    with pytest.raises(MCPConfigError, match=r"\$\{MISSING\} is not set"):
        expand("${MISSING}", env)
    with pytest.raises(MCPConfigError, match="input"):
        expand("${input:tok}", env)


def test_both_shapes_project_overrides_user_and_problems_are_reported(tmp_path):
    user = write(
        tmp_path / "user" / "mcp.json",
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "remote": {
                    "type": "http",
                    "url": "https://example.test/mcp",
                    "headers": {"Authorization": "Bearer ${TOK}"},
                },
                "broken": {"args": ["no command"]},
            }
        },
    )
    project = tmp_path / "proj"
    write(
        project / ".vscode" / "mcp.json",
        {
            "servers": {
                "time": {"type": "stdio", "command": "python", "args": ["t.py"]},
                "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            }
        },
    )
    loaded = load_servers(user, project, environ={"TOK": "s3cret"})
    servers = {s.name: s for s in loaded.servers}
    assert set(servers) == {"time", "remote", "old"}
    assert servers["time"].scope == "project" and servers["time"].command == "python"
    assert servers["time"].cwd == str(project)  # relative paths in a project file mean the project's
    assert servers["remote"].transport == "http" and servers["remote"].headers["Authorization"] == "Bearer s3cret"
    assert servers["old"].transport == "sse"
    assert len(loaded.problems) == 1 and "broken" in loaded.problems[0] and "command" in loaded.problems[0]


def test_unreadable_file_is_a_problem_not_a_crash(tmp_path):
    bad = tmp_path / "mcp.json"
    bad.write_text("{not json")
    loaded = load_servers(bad)
    assert loaded.servers == [] and "not valid JSON" in loaded.problems[0]


def test_approval_is_tied_to_the_exact_command(tmp_path):
    store = Approvals(tmp_path / "approvals.json")
    server = parse_entry("x", {"command": "python", "args": ["a.py"]}, origin="/p/.mcp.json", scope="project")
    assert not store.approved(server)
    store.approve(server)
    assert store.approved(server)
    changed = parse_entry(
        "x", {"command": "python", "args": ["a.py", "--evil"]}, origin="/p/.mcp.json", scope="project"
    )
    assert not store.approved(changed)
    assert store.approved(parse_entry("x", {"command": "anything"}))  # the user's own file needs no approval


def test_write_entry_adds_replaces_and_removes(tmp_path):
    path = tmp_path / "mcp.json"
    write_entry(path, "a", {"command": "x", "env": {"K": "${NOT_SET_YET}"}})
    write_entry(path, "b", {"url": "http://127.0.0.1:9/mcp"})
    assert set(json.loads(path.read_text())["mcpServers"]) == {"a", "b"}
    write_entry(path, "a", None)
    assert set(json.loads(path.read_text())["mcpServers"]) == {"b"}
    with pytest.raises(MCPConfigError, match="no server named"):
        write_entry(path, "a", None)
    with pytest.raises(MCPConfigError, match="needs `command`"):
        write_entry(path, "c", {"args": []})


def test_tool_names_fit_function_calling():
    assert sanitize_name("my.server__get time!") == "my_server__get_time"
    long = sanitize_name("s__" + "x" * 200)
    assert len(long) == 64 and long != sanitize_name("s__" + "x" * 199)


def test_project_approval_covers_the_workspace_files_the_command_names(tmp_path):
    project = tmp_path / "p"
    (project / "pkg").mkdir(parents=True)
    (project / "srv.py").write_text("v1")
    (project / "pkg" / "tool.py").write_text("v1")
    (project / "data.txt").write_text("v1")
    (tmp_path / "elsewhere.py").write_text("x")

    def fingerprint(*args: str) -> str:
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "python", "args": list(args)}}}))
        return load_servers(tmp_path / "none.json", project).servers[0].fingerprint()

    def changes(args: tuple[str, ...], edit) -> bool:
        before = fingerprint(*args)
        edit()
        return fingerprint(*args) != before

    assert changes(("srv.py",), lambda: (project / "srv.py").write_text("v2"))
    assert changes(("--script=srv.py",), lambda: (project / "srv.py").write_text("v3"))
    assert changes(("-m", "pkg.tool"), lambda: (project / "pkg" / "tool.py").write_text("v2"))
    assert changes(("pkg",), lambda: (project / "pkg" / "new.py").write_text("new"))  # a named folder, all of it
    assert changes(("later.py",), lambda: (project / "later.py").write_text("appears"))  # missing, then created
    (project / "link.py").symlink_to(tmp_path / "elsewhere.py")
    assert changes(
        ("link.py",), lambda: ((project / "link.py").unlink(), (project / "link.py").symlink_to("/dev/null"))
    )
    # the workspace itself named as the server's data: editing a file in it is not a new server
    assert not changes((".",), lambda: (project / "data.txt").write_text("v2"))
    assert not changes(("srv.py",), lambda: (project / "data.txt").write_text("v3"))  # files it does not name


def test_bad_timeouts_are_one_line_problems(tmp_path):
    with pytest.raises(MCPConfigError) as caught:
        parse_entry("t", {"command": "x", "tool_timeout": -1}, "mcp.json")
    assert str(caught.value) == "server 't' in mcp.json: tool_timeout: Input should be greater than 0 (got -1.0)"


def test_project_approval_covers_env_and_header_values_as_written(tmp_path):
    """`${HOME}` changed to `${OPENAI_API_KEY}` is a different server: the key would reach it."""
    store = Approvals(tmp_path / "approvals.json")
    environ = {"HOME": "/home/u", "OPENAI_API_KEY": "sk-secret"}

    def server(env: str, header: str, url: bool = False):
        raw = {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Token": header}} if url else {"command": "srv"}
        raw |= {} if url else {"env": {"DATA": env}}
        return parse_entry("s", raw, origin="/p/.mcp.json", scope="project", environ=environ)

    store.approve(server("${HOME}", ""))
    assert store.approved(server("${HOME}", ""))
    assert not store.approved(server("${OPENAI_API_KEY}", ""))
    assert not store.approved(server("literal", ""))
    store.approve(server("", "${HOME}", url=True))
    assert not store.approved(server("", "${OPENAI_API_KEY}", url=True))
    assert "sk-secret" not in server("${OPENAI_API_KEY}", "").launch_line()  # shown as written, never expanded
    assert "DATA=${OPENAI_API_KEY}" in server("${OPENAI_API_KEY}", "").launch_line()
