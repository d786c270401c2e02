"""Each rendered engine command accepts a chat request with `tools`: the command starts a stand-in that keeps the
engine's real rule (vLLM answers 400 to `tools` without `--enable-auto-tool-choice --tool-call-parser`, SGLang
needs `--tool-call-parser`, llama-server `--jinja`), and the request goes through it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from inference.engines import python_engines
from inference.engines.capabilities import known_engine
from inference.net import free_port
from inference.profiles import BUILTIN_PROFILES
from inference.render import render

STANDIN = Path(__file__).parents[1] / "data" / "standin_engine.py"
TOOLS_REQUEST = {
    "model": "m",
    "messages": [{"role": "user", "content": "list the files"}],
    "tools": [{"type": "function", "function": {"name": "list_files", "parameters": {"type": "object"}}}],
}
PARSER_FLAGS = {"--tool-call-parser": 1, "--enable-auto-tool-choice": 0, "--jinja": 0}  # flag: values it takes


def rendered(name: str, port: int) -> tuple[str, list[str]]:
    """(engine, its arguments after the launcher) as `agent serve` renders them."""
    profile = BUILTIN_PROFILES[name]
    if profile.engine == "llama-server":
        caps = known_engine(profile.engines[0]).capabilities()
        return "llama-server", render(profile, caps, {m: Path(m) for m in profile.models()}, "127.0.0.1", port)
    argv = python_engines.render(profile, "127.0.0.1", port)
    return profile.engine, argv[2:] if profile.engine == "vllm" else argv[3:]  # `vllm serve` / `python -m X`


def without_parsers(args: list[str]) -> list[str]:
    out, skip = [], 0
    for arg in args:
        if skip:
            skip -= 1
        elif arg in PARSER_FLAGS:
            skip = PARSER_FLAGS[arg]
        else:
            out.append(arg)
    return out


def post_tools(engine: str, args: list[str], port: int) -> httpx.Response:
    proc = subprocess.Popen([sys.executable, str(STANDIN), engine, *args])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=TOOLS_REQUEST, timeout=10)
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.mark.parametrize(
    "name",
    [
        "gemma4-31b-dflash-vllm",
        "gemma4-31b-dflash-vllm-fp8",
        "gemma4-31b-dflash-sglang",
        "gemma4-31b",
        "gemma4-31b-dflash",
        "gemma4-31b-mtp",
    ],
)
def test_a_request_with_tools_goes_through_each_rendered_command(name):
    port = free_port()
    engine, args = rendered(name, port)
    answer = post_tools(engine, args, port)
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "list_files"
    refused = post_tools(engine, without_parsers(args), port)  # the stand-in can fail: the same command, no parser
    assert refused.status_code in (400, 500) and "tool" in refused.text


def test_the_vllm_plan_shows_the_tool_parser_and_pinned_images():
    argv = python_engines.render(BUILTIN_PROFILES["gemma4-31b-dflash-vllm"], "127.0.0.1", 8000)
    assert argv[argv.index("--tool-call-parser") + 1] == "gemma4" and "--enable-auto-tool-choice" in argv
    assert argv[argv.index("--reasoning-parser") + 1] == "gemma4"
    assert argv[argv.index("--attention-backend") + 1] == "triton_attn"
    assert '"attention_backend": "flash_attn"' in argv[argv.index("--speculative-config") + 1]
    fp8 = python_engines.render(BUILTIN_PROFILES["gemma4-31b-dflash-vllm-fp8"], "127.0.0.1", 8000)
    assert fp8[fp8.index("--quantization") + 1] == "fp8" and fp8[fp8.index("--kv-cache-dtype") + 1] == "fp8"
    assert "RedHatAI/gemma-4-31B-it-speculator.dflash" in fp8[fp8.index("--speculative-config") + 1]
    assert all(not image.endswith(":latest") for image in python_engines.IMAGES.values())
