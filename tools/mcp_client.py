"""Connections to MCP servers, held open on a background event loop so the synchronous agent loop can call
their tools. Servers start concurrently, each within its start-up timeout; one that fails or hangs is
reported with its cause and skipped, never blocks the others or the agent. A project's stdio server runs
code from the workspace, which the model can edit: it runs under the same sandbox as the bash tool."""

from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import tempfile
import threading
from collections.abc import Coroutine
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation
from mcp.types import Tool as MCPToolSpec
from pydantic import BaseModel

from inference.errors import DflashError
from inference.paths import APP, app_version
from tools.mcp_config import MCPServerConfig
from tools.mcp_stdio import MAX_MESSAGE_BYTES, capped_http_transport, capped_stdio_client
from tools.sandbox import SandboxPolicy, WrappedCommand, wrap_command

T = TypeVar("T")
CLIENT_INFO = Implementation(name=APP, version=app_version())
# Added to a user server's environment (its entry's `env` may override): Python puts neither the current
# folder nor the script's folder on sys.path, and no module path is inherited (the minimal environment has none).
USER_SERVER_ENV = {"PYTHONSAFEPATH": "1"}


class MCPCallError(DflashError, RuntimeError):
    """A call that got no result: timeout, dead server, protocol error. The message names the cause."""


class ServerStatus(BaseModel):
    name: str
    state: Literal["ready", "failed"]
    detail: str  # the protocol version when ready; the cause and the fix when failed
    tools: list[str] = []
    log: str | None = None


class _Connection:
    def __init__(self, config: MCPServerConfig, log_path: Path | None):
        self.config, self.log_path = config, log_path
        self.client: Client | None = None
        self.tools: list[MCPToolSpec] = []
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.list_changes = 0  # how many times the server said its tools changed

    def status(self) -> ServerStatus:
        ok = self.client is not None and self.error is None
        detail = self.client.protocol_version if ok and self.client else (self.error or "not started")
        return ServerStatus(
            name=self.config.name,
            state="ready" if ok else "failed",
            detail=str(detail),
            tools=[t.name for t in self.tools],
            log=str(self.log_path) if self.log_path else None,
        )

    def log_tail(self, lines: int = 8) -> str:
        if not self.log_path or not self.log_path.is_file():
            return ""
        tail = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return ("\nserver stderr:\n  " + "\n  ".join(tail)) if tail else ""


class MCPHub:
    """All configured servers of one run. Use as a context manager; `start()` returns every server's status."""

    def __init__(
        self, servers: list[MCPServerConfig], log_dir: Path | None = None, sandbox: SandboxPolicy | None = None
    ):
        """`sandbox`: the policy project servers run under (their workspace is their project); None runs them
        as configured, like user servers always are."""
        self._sandbox = sandbox
        self._connections = {
            s.name: _Connection(s, log_dir / f"{s.name}.log" if log_dir else None) for s in servers if not s.disabled
        }
        self._log_dir = log_dir
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-hub", daemon=True)

    def __enter__(self) -> MCPHub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> list[ServerStatus]:
        if self._log_dir:
            self._log_dir.mkdir(parents=True, exist_ok=True)
        self._thread.start()
        return self._submit(self._start_all(), None)

    def statuses(self) -> list[ServerStatus]:
        return [c.status() for c in self._connections.values()]

    def tools(self) -> dict[str, list[MCPToolSpec]]:
        """The current tool list of each ready server (updated when a server says it changed)."""
        return {name: list(c.tools) for name, c in self._connections.items() if c.client and not c.error}

    def list_changes(self, server: str) -> int:
        return self._connections[server].list_changes

    def call(self, server: str, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> CallToolResult:
        conn = self._connections.get(server)
        if conn is None or conn.client is None or conn.error:
            raise MCPCallError(f"MCP server {server!r} is not connected: {conn.error if conn else 'not configured'}")
        timeout = timeout or conn.config.tool_timeout
        try:
            return self._submit(conn.client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 5)
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise MCPCallError(
                f"{server}.{tool} did not answer within {timeout:.0f} s (raise tool_timeout for "
                f"{server!r} in {conn.config.origin or 'the MCP config'} if it needs longer)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - a dead or confused server is reported, never raised into the loop
            cause = _describe(exc)
            if "timed out" in cause.lower() or "timeout" in cause.lower():
                raise MCPCallError(f"{server}.{tool} did not answer within {timeout:.0f} s: {cause}") from None
            raise MCPCallError(f"{server}.{tool} failed: {cause}{conn.log_tail()}") from None

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        try:
            self._submit(self._stop_all(), 15)
        except Exception:  # noqa: BLE001 - closing must not raise over the run's own outcome
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _submit(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _start_all(self) -> list[ServerStatus]:
        for conn in self._connections.values():
            conn.task = asyncio.create_task(self._hold(conn), name=f"mcp:{conn.config.name}")
        await asyncio.gather(*(self._await_ready(c) for c in self._connections.values()))
        return self.statuses()

    async def _await_ready(self, conn: _Connection) -> None:
        timeout = conn.config.startup_timeout
        try:
            await asyncio.wait_for(conn.ready.wait(), timeout)
        except TimeoutError:
            conn.error = (
                f"did not answer within {timeout:.0f} s of starting (a hung or very slow server); "
                f"check `{conn.config.launch_line()}` by hand, or raise startup_timeout{conn.log_tail()}"
            )
            if conn.task is not None:
                conn.task.cancel()
                await asyncio.gather(conn.task, return_exceptions=True)

    async def _stop_all(self) -> None:
        for conn in self._connections.values():
            conn.stop.set()
        tasks = [c.task for c in self._connections.values() if c.task]
        _, pending = await asyncio.wait(tasks, timeout=10) if tasks else (set(), set())
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _hold(self, conn: _Connection) -> None:
        """Connect, list tools, then keep the connection open until stopped (same task: anyio scopes need it)."""
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(conn, stack)
                conn.client = await stack.enter_async_context(
                    Client(
                        transport,
                        read_timeout_seconds=conn.config.startup_timeout,
                        client_info=CLIENT_INFO,
                        message_handler=lambda message: self._on_message(conn, message),
                    )
                )
                conn.tools = (await conn.client.list_tools()).tools
                conn.ready.set()
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_changes, conn)
                    await conn.stop.wait()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - anything a server does at start is reported, not raised
            conn.error = conn.error or self._start_failure(conn, exc)
        finally:
            conn.ready.set()

    async def _transport(self, conn: _Connection, stack: AsyncExitStack) -> Any:
        config = conn.config
        if config.transport == "stdio":
            errlog = stack.enter_context(open(conn.log_path, "w")) if conn.log_path else None  # noqa: SIM115 - the stack closes it
            wrapped = self._wrap(config)
            stack.callback(wrapped.cleanup)
            cwd: str | None
            if config.scope == "user":
                cwd, env = self._user_start_folder(config, stack), {**USER_SERVER_ENV, **config.env}
            else:
                cwd, env = config.cwd, {**config.env, **wrapped.env}
            params = StdioServerParameters(command=wrapped.argv[0], args=wrapped.argv[1:], env=env or None, cwd=cwd)
            return capped_stdio_client(params, errlog)
        if config.transport == "sse":
            return sse_client(config.url or "", headers=config.headers or None)
        import httpx2

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=config.headers,
                timeout=httpx2.Timeout(30, read=config.tool_timeout),
                transport=capped_http_transport(),
            )
        )
        return streamable_http_client(config.url or "", http_client=http, max_sse_event_size=MAX_MESSAGE_BYTES)

    @staticmethod
    def _user_start_folder(config: MCPServerConfig, stack: AsyncExitStack) -> str:
        """Where a user server starts: its `cwd` (relative to `$HOME`), else a fresh private empty folder, never
        the agent's working directory: that is the workspace, and `python -m pkg` would import the workspace's
        `pkg/`, `npx pkg` run its `node_modules`, unsandboxed with the user's rights."""
        if config.cwd:
            return str(Path.home() / Path(config.cwd).expanduser())
        folder = tempfile.mkdtemp(prefix=f"{APP}-mcp-")
        stack.callback(shutil.rmtree, folder, True)
        return folder

    def _wrap(self, config: MCPServerConfig) -> WrappedCommand:
        argv = [config.command or "", *config.args]
        if config.scope != "project" or self._sandbox is None or not config.root:
            return WrappedCommand(argv, sandboxed=False)
        root = Path(config.root)
        if config.cwd and Path(config.cwd).resolve() != root.resolve():
            argv = ["env", "-C", config.cwd, *argv]  # bubblewrap starts in the workspace
        return wrap_command(argv, root, self._sandbox)

    def _start_failure(self, conn: _Connection, exc: BaseException) -> str:
        cause = _describe(exc)
        config = conn.config
        if isinstance(_leaf(exc), FileNotFoundError) and config.transport == "stdio":
            return (
                f"command {config.command!r} not found; install it or fix `command` for {config.name!r} "
                f"in {config.origin or 'the MCP config'}"
            )
        return f"failed to start: {cause}{conn.log_tail()}"

    async def _on_message(self, conn: _Connection, message: object) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            await self._refresh(conn)

    async def _watch_changes(self, conn: _Connection) -> None:
        """2026-era servers announce tool changes on a `subscriptions/listen` stream; older ones notify
        through `message_handler`. Either way the tool list is fetched again."""
        if conn.client is None:
            return
        try:
            async with conn.client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    await self._refresh(conn)
        except Exception:  # noqa: BLE001 - a server without the stream still notifies the legacy way
            return

    async def _refresh(self, conn: _Connection) -> None:
        conn.list_changes += 1
        if conn.client:
            conn.tools = (await conn.client.list_tools(cache_mode="refresh")).tools


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip() or type(leaf).__name__
    return text if type(leaf).__name__ in text else f"{type(leaf).__name__}: {text}"
