"""The agent as an MCP server, driven by the real `mcp.Client`: in memory, over stdio as a subprocess (with a
real model run), and over streamable HTTP with and without the bearer token."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import git
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from agent.workflows.mcp_server import build_server
from inference.net import free_port

AGENT = str(Path(sys.executable).parent / "agent")


def make_repo(path: Path) -> Path:
    repo = git.Repo.init(path)
    (path / "README.md").write_text("# demo\n")
    repo.index.add(["README.md"])
    repo.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    return path


def test_in_memory_tools_skills_and_root_refusal(tmp_path):
    async def main():
        async with Client(build_server(roots=[tmp_path])) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"run_task", "new_project", "list_skills"} <= names
            skills = await client.call_tool("list_skills", {})
            assert not skills.is_error
            listed = {s["name"] for s in skills.structured_content["result"]}
            assert "verify-before-finish" in listed
            outside = await client.call_tool("run_task", {"task": "x", "directory": "/etc"})
            assert outside.is_error and "outside the folders" in outside.content[0].text
            nobody = await client.call_tool("run_task", {"task": "x", "directory": "~no-such-user-0/x"})
            assert nobody.is_error and "no folder on this machine" in nobody.content[0].text
            for tool, arguments in [
                ("run_task", {"task": "x", "directory": f"{tmp_path}/a\0b"}),
                ("new_project", {"prompt": "x", "directory": f"{tmp_path}/new\0"}),
                ("list_skills", {"directory": "a\0b"}),
            ]:
                nul = await client.call_tool(tool, arguments)
                assert nul.is_error and "holds a NUL byte" in nul.content[0].text, (tool, nul.content)

    anyio.run(main)


@pytest.mark.model
def test_stdio_subprocess_runs_a_real_task_with_progress(tmp_path, qwen_path):
    repo = make_repo(tmp_path / "repo")
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    async def main():
        params = StdioServerParameters(command=AGENT, args=["mcp", "serve", "--root", str(tmp_path)])
        async with Client(params, read_timeout_seconds=600) as client:
            assert "run_task" in {t.name for t in (await client.list_tools()).tools}
            return await client.call_tool(
                "run_task",
                {
                    "task": "Create a file named hello.txt whose only line is: hello from mcp. Then call finish.",
                    "directory": str(repo),
                    "max_steps": 4,
                },
                progress_callback=on_progress,
            )

    result = anyio.run(main)
    assert not result.is_error, result.content
    report = result.structured_content
    assert report["steps"] >= 1 and len(progress) == report["steps"]  # one notification per agent step
    assert progress[0][1].startswith("step 1:")
    assert report["status"] in ("finished", "step_limit")
    hello = repo / "hello.txt"
    assert ("hello.txt" in report["changed_files"]) == hello.exists()
    if hello.exists():
        assert "hello from mcp" in hello.read_text() and "+hello from mcp" in report["diff"]


@pytest.mark.slow
def test_http_needs_the_bearer_token(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [AGENT, "mcp", "serve", "--http", "--port", str(port), "--token", "t0ken", "--root", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status = httpx2.post(url, json={}, timeout=2).status_code
                break
            except httpx2.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not come up"
                time.sleep(0.3)
        assert status == 401

        async def with_token():
            async with (
                httpx2.AsyncClient(headers={"Authorization": "Bearer t0ken"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                return {t.name for t in (await client.list_tools()).tools}

        assert "run_task" in anyio.run(with_token)

        async def without_token():
            async with Client(url) as client:
                await client.list_tools()

        with pytest.raises(Exception) as failure:
            anyio.run(without_token)
        assert "error response" in repr(failure.value)  # the SDK's wording for the 401 checked above
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.model
def test_runs_in_two_folders_share_one_server_at_once(tmp_path, engine, qwen_path, monkeypatch):
    """`agent mcp serve --profile P --parallel 2`: one llama-server with two slots serves both runs, which overlap
    in time; two runs in one folder never do."""
    import agent.workflows.runs
    from agent.workflows.mcp_server import shared_backend

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user config: the profile is the overrides
    repos = [make_repo(tmp_path / name) for name in ("a", "b")]
    spans: list[tuple[str, float, float]] = []  # (folder, start, end) of each workflow run, timed in its thread
    real_run_task = agent.workflows.runs.run_task

    def timed_run_task(target, *args, **kwargs):
        started = time.monotonic()
        try:
            return real_run_task(target, *args, **kwargs)
        finally:
            spans.append((Path(target).name, started, time.monotonic()))

    monkeypatch.setattr(agent.workflows.runs, "run_task", timed_run_task)

    async def run(client: Client, repo: Path) -> None:
        task = "Create a file named note.txt containing: ok. Then call finish."
        result = await client.call_tool("run_task", {"task": task, "directory": str(repo), "max_steps": 2})
        assert not result.is_error, result.content

    async def main(server) -> None:
        async with Client(server) as client, anyio.create_task_group() as group:
            for repo in (repos[0], repos[1], repos[0]):
                group.start_soon(run, client, repo)

    with shared_backend({"profile": "qwen-cpu"}, 2) as (overrides, runs):
        assert runs == 2 and overrides["endpoint"].startswith("http://127.0.0.1:")
        assert httpx2.get(overrides["endpoint"].removesuffix("/v1") + "/props").json()["total_slots"] == 2
        anyio.run(main, build_server(overrides, roots=[tmp_path], runs_at_once=runs))
    in_a = sorted((s, e) for name, s, e in spans if name == "a")
    [(b_start, b_end)] = [(s, e) for name, s, e in spans if name == "b"]
    assert len(in_a) == 2 and in_a[0][1] <= in_a[1][0], "two runs in one folder never overlap"
    assert any(s < b_end and b_start < e for s, e in in_a), "the two folders ran at the same time"


def test_shared_backend_takes_the_runtimes_choice(tmp_path, monkeypatch):
    """No model: a profile's server (faked) is started once with `parallel` slots and given to every run as the
    endpoint; a given endpoint is shared as it is; the embedded model runs one at a time and is not loaded here."""
    from contextlib import contextmanager

    import agent.workflows.runtime
    from agent.workflows.mcp_server import shared_backend

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    started = []

    @contextmanager
    def fake_managed(profile, engine):
        started.append(profile.parallel)
        yield type("Server", (), {"url": "http://127.0.0.1:9/v1"})()

    monkeypatch.setattr(agent.workflows.runtime, "managed", fake_managed)
    monkeypatch.setattr(agent.workflows.runtime, "embedded_backend", lambda config: pytest.fail("loaded the model"))
    with shared_backend({"profile": "qwen-cpu"}, 3) as (overrides, runs):
        assert (overrides, runs, started) == ({"profile": "qwen-cpu", "endpoint": "http://127.0.0.1:9/v1"}, 3, [3])
    with shared_backend({"endpoint": "http://example:1/v1"}, 2) as (overrides, runs):
        assert (overrides, runs) == ({"endpoint": "http://example:1/v1"}, 2)
    with shared_backend({"model": None}, 4) as (overrides, runs):
        assert (overrides, runs) == ({"model": None}, 1)
    assert started == [3]
