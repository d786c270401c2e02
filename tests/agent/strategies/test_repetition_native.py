"""The repetition cut on the native tool-call protocol: a `write_file` whose arguments repeat one block until
max_tokens streams as `tool_calls` deltas, not as text; it is cut while it streams all the same.

The server is a real local HTTP server speaking OpenAI's streaming format (a scripted reply: loop logic)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import git

from agent.settings.config import Config
from agent.workflows.runs import run_task
from inference.backends.backend import CUT, Message
from inference.backends.endpoint import EndpointBackend

BLOCK = '    with patch("builtins.open", mock_open(read_data="a b")):\n        assert count("f") == 2\n'
ARGUMENT_PIECES = ['{"path": "wordcount.py", "content": "import pytest\\n'] + [
    json.dumps(BLOCK)[1:-1] for _ in range(400)
]


class LoopingServer:
    """Streams one native `write_file` call whose content never stops repeating; counts requests."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "t"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def do_POST(self) -> None:
                owner.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write_file"}}
                deltas = [{"role": "assistant", "tool_calls": [head]}] + [
                    {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} for piece in ARGUMENT_PIECES
                ]
                try:
                    for delta in deltas:
                        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
                        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    end = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
                    end["choices"] = [{"index": 0, "delta": {}, "finish_reason": "length"}]
                    self.wfile.write(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client left: it cut the reply

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_the_backend_cuts_a_native_call_whose_arguments_loop():
    from agent.strategies.repetition import new_guard

    server = LoopingServer()
    try:
        tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]
        completion = EndpointBackend(server.url).complete(
            [Message(role="user", content="write wordcount.py")], tools, on_call_text=new_guard()
        )
    finally:
        server.close()
    assert completion.finish_reason == CUT
    assert len(completion.tool_calls[0].arguments) < len("".join(ARGUMENT_PIECES)) / 4  # cut early, not at the end


def test_a_native_run_is_told_its_looping_call_was_cut(tmp_path: Path):
    """Through the `run` workflow on the native protocol: each looping reply is cut (noted in the transcript)
    and dropped, so the runaway file is never written."""
    repo = git.Repo.init(tmp_path)
    (tmp_path / "README.md").write_text("words\n")
    repo.index.add(["README.md"])
    repo.index.commit("init", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))
    server = LoopingServer()
    try:
        config = Config(endpoint=server.url, protocol="native", max_steps=2)
        result = run_task(tmp_path, "Write wordcount.py with tests.", config)
    finally:
        server.close()
    assert len(server.requests) == 2 and all(r.get("tools") for r in server.requests)  # native: `tools` sent
    notes = [json.loads(line).get("text", "") for line in Path(result.transcript).read_text().splitlines()]
    assert sum("fell into repeating itself and was cut" in note for note in notes) == 2, notes
    assert not (tmp_path / "wordcount.py").exists() and result.run.status == "step_limit"
