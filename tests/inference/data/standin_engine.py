"""A stand-in for an inference engine, started with the engine's real rendered arguments: it answers `/health`
and `/v1/chat/completions` the way the engine does for a request with `tools`, from its real flag rules:

- vllm: 400 unless both `--enable-auto-tool-choice` and `--tool-call-parser` are given (vLLM's message:
  '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set');
- sglang: 400 unless `--tool-call-parser` is given (without one SGLang leaves the call as plain text, which an
  agent cannot run; the stand-in refuses instead, so the test can fail);
- llama-server: 500 unless `--jinja` is given (tools/server/server-common.cpp: "tools param requires --jinja flag").

Usage: python standin_engine.py ENGINE ARGS...  (ARGS as the engine would get them; --host/--port read from them)
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENGINE, ARGS = sys.argv[1], sys.argv[2:]
RULES = {
    "vllm": (
        ["--enable-auto-tool-choice", "--tool-call-parser"],
        400,
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    ),
    "sglang": (["--tool-call-parser"], 400, "no --tool-call-parser: tool calls would come back as plain text"),
    "llama-server": (["--jinja"], 500, "tools param requires --jinja flag"),
}


def value(flag: str, default: str) -> str:
    return ARGS[ARGS.index(flag) + 1] if flag in ARGS else default


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.reply(200, {"status": "ok"})

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        needed, status, message = RULES[ENGINE]
        if request.get("tools") and not all(flag in ARGS for flag in needed):
            self.reply(status, {"error": {"message": message, "code": status}})
            return
        name = request["tools"][0]["function"]["name"] if request.get("tools") else None
        message_out = {"role": "assistant", "content": None if name else "hello"}
        if name:
            message_out["tool_calls"] = [
                {"id": "call_0", "type": "function", "function": {"name": name, "arguments": "{}"}}
            ]
        self.reply(200, {"choices": [{"index": 0, "message": message_out, "finish_reason": "tool_calls"}]})


ThreadingHTTPServer((value("--host", "127.0.0.1"), int(value("--port", "8000"))), Handler).serve_forever()
