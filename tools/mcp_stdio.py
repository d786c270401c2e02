"""Transports for MCP servers that never hold more than `max_bytes` of one message.

The SDK's `stdio_client` joins a line in memory however long it gets (and re-copies the buffer per chunk):
one 50 MB tool result took a minute and hundreds of MB. Here a line over the limit is not kept: its start
(up to `KEEP_BYTES`) and end are, and it becomes a tool result: a line saying how much was cut, then the
salvaged start of its text; an oversized message whose request id cannot be found is dropped and reported.

Over HTTP the SDK bounds SSE events itself (`max_sse_event_size`) but reads a JSON body whole: the
transport below stops reading one at the limit, which the SDK reports as an error for that request.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import IO, Any

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

from inference.errors import DflashError

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
KEEP_BYTES = 64 * 1024  # of an oversized message: enough for the model, and to find its id and first text
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_TEXT = re.compile(rb'"text"\s*:\s*"')


class OversizedMessage(DflashError, ValueError):
    """A message over the limit that could not be turned into a result (no request id in it)."""


@asynccontextmanager
async def capped_stdio_client(
    server: StdioServerParameters, errlog: IO[str] | None = None, max_bytes: int = MAX_MESSAGE_BYTES
) -> AsyncIterator[tuple[Any, Any]]:
    """Like `mcp.client.stdio.stdio_client` (same environment rules), with a bound on each message."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        cwd=server.cwd,
        stderr=_stderr(errlog),
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdin is not None  # opened as pipes
    stdout, stdin = process.stdout, process.stdin
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        async with read_writer:
            try:
                async for message in _messages(stdout, max_bytes):
                    await read_writer.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass

    async def writer() -> None:
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_writer.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            group.cancel_scope.cancel()


def _stderr(errlog: IO[str] | None) -> Any:
    """The server's stderr: the log file, else ours (never an unread pipe, which would block the server)."""
    for stream in (errlog, sys.stderr):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):
            continue
    return subprocess.DEVNULL


async def _stop(process: anyio.abc.Process) -> None:
    """As the spec orders it: close stdin (a well-behaved server exits), then SIGTERM, then SIGKILL, each to
    the server's whole process group (`npx`/`uvx` start the real server as a child)."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)
        if await _exited(process, 2.0):
            break
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # children a server that exited left behind
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError), anyio.move_on_after(2):
        await process.aclose()  # streams and the event loop's transport, while the loop still runs


async def _exited(process: anyio.abc.Process, timeout: float) -> bool:
    """Polls the exit status: `process.wait()` also waits for the pipes, which a child may still hold."""
    deadline = anyio.current_time() + timeout
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.05)
    return True


async def _messages(stdout: anyio.abc.ByteReceiveStream, max_bytes: int) -> AsyncIterator[SessionMessage | Exception]:
    line = bytearray()
    size, tail = 0, b""  # while a line is over the limit: its full size and its last bytes
    while True:
        try:
            chunk = await stdout.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        while chunk:
            end = chunk.find(b"\n")
            piece, chunk = (chunk, b"") if end < 0 else (chunk[:end], chunk[end + 1 :])
            if size:  # over the limit: count, keep the tail only
                size += len(piece)
                tail = (tail + piece)[-512:]
            else:
                line += piece
                if len(line) > max_bytes:
                    size, tail = len(line), bytes(line[-512:])
                    del line[KEEP_BYTES:]
            if end < 0:
                break
            yield _parse(bytes(line)) if not size else oversized(bytes(line), tail, size, max_bytes)
            line, size, tail = bytearray(), 0, b""


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


def oversized(head: bytes, tail: bytes, size: int, max_bytes: int) -> SessionMessage | Exception:
    """The result that stands for a message of `size` bytes of which `head` and `tail` were kept."""
    found = _ID.search(head[:1024]) or _ID.search(tail)
    if not found:
        return OversizedMessage(f"dropped a {size:,}-byte message from the server (over the {max_bytes:,}-byte limit)")
    request_id = json.loads(found.group(1))
    text = _salvaged_text(head)
    note = (
        f"[the server's reply was {size:,} bytes, over the client's limit of {max_bytes:,}: "
        f"cut to its first {len(text):,} characters]"
    )
    content = [{"type": "text", "text": note}] + ([{"type": "text", "text": text}] if text else [])
    return SessionMessage(
        types.jsonrpc_message_adapter.validate_python(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"content": content, "isError": False, "resultType": "complete"},
            }
        )
    )


def _salvaged_text(head: bytes) -> str:
    """The start of the first text block in a cut message (a JSON string that may end mid-escape)."""
    found = _TEXT.search(head)
    if not found:
        return ""
    fragment = head[found.end() :].decode("utf-8", errors="ignore")
    decoder = json.JSONDecoder()
    try:
        return str(decoder.raw_decode('"' + fragment)[0])  # the string closed within the kept part
    except json.JSONDecodeError:
        pass
    for cut in range(min(len(fragment), 8) + 1):  # an escape cut in half: drop its start
        try:
            return str(json.loads('"' + fragment[: len(fragment) - cut] + '"'))
        except json.JSONDecodeError:
            continue
    return ""


class ReplyTooBig(DflashError, httpx2.StreamError):
    """A JSON reply over the limit (the SDK turns a stream error into an error response for the request)."""


def capped_http_transport(max_bytes: int = MAX_MESSAGE_BYTES) -> httpx2.AsyncBaseTransport:
    return _CappedHTTP(httpx2.AsyncHTTPTransport(), max_bytes)


class _CappedHTTP(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, max_bytes: int):
        self.inner, self.max_bytes = inner, max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            response.stream = _CappedBody(response.stream, self.max_bytes)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, max_bytes: int):
        self.inner, self.max_bytes = inner, max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.max_bytes:
                raise ReplyTooBig(
                    f"the server's reply is over the client's limit of {self.max_bytes:,} bytes: "
                    "not read further; ask the tool for less"
                )
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()
