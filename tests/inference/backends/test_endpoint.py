"""EndpointBackend against a real OpenAI-compatible server over HTTP (llama-cpp-python's server running the
real 1.5B model): streaming, token counts without usage, cuts. The agent loop through this backend is proven
against llama-server (tests/inference/test_server.py); a second model run of it here would only repeat that.
Errors from dead endpoints name the fix."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from inference.backends.backend import BackendError, Message, Sampling
from inference.backends.endpoint import EndpointBackend
from inference.net import free_port

pytestmark = pytest.mark.model

# llama-cpp-python's server, run with the same guard the embedded backend uses: on an AMX CPU its kernels kill
# the process on the first reply (CI on a Sapphire Rapids VM lost the connection mid-stream), so extra buffer
# types are off there.
SERVER_WITHOUT_AMX_CRASH = """
import runpy
from inference.backends.embedded import extra_buffer_types
from inference.hardware import cpu_has_amx
with extra_buffer_types(enabled=not cpu_has_amx()):
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def server(qwen_path, tmp_path_factory):
    port = free_port()
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVER_WITHOUT_AMX_CRASH,
            "--model",
            str(qwen_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
            "--model_alias",
            "qwen-1.5b",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"server exited: see {log.name}"
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    yield url
    proc.terminate()
    proc.wait(10)


def test_streams_and_counts_tokens(server):
    backend = EndpointBackend(server)
    assert backend.model == "qwen-1.5b"
    pieces: list[str] = []
    completion = backend.complete(
        [Message(role="user", content="Write a Python function add(a, b). Code only.")],
        sampling=Sampling(temperature=0, max_tokens=60),
        on_text=pieces.append,
    )
    assert "def add" in completion.text and "".join(pieces) == completion.text
    # this server sends no usage while streaming: tokens are estimated from the streamed deltas
    assert completion.timings.completion_tokens == len(pieces)


def test_dead_endpoint_names_the_cause_and_the_fix():
    with pytest.raises(BackendError, match=r"cannot reach http://127.0.0.1:\d+/v1 .*start the server"):
        EndpointBackend(f"http://127.0.0.1:{free_port()}/v1")


def test_llama_server_timings_are_read_with_speculative_stats():
    from inference.backends.endpoint import _timings

    # the final-chunk `timings` of a real llama-server reply (draft keys appear only when drafting happened)
    server = {
        "cache_n": 44,
        "prompt_n": 13,
        "prompt_ms": 154.3,
        "predicted_n": 17,
        "predicted_ms": 442.4,
        "predicted_per_second": 38.4,
        "draft_n": 12,
        "draft_n_accepted": 10,
    }
    t = _timings(server, None, 3, 0.0, 0.1, 0.5)
    assert (t.prompt_tokens, t.cached_prompt_tokens, t.completion_tokens) == (57, 44, 17)
    assert (t.draft_n, t.draft_accepted) == (12, 10)
    assert t.tokens_per_second == pytest.approx(17 / 0.4424)
    assert _timings({**server, "draft_n": None, "draft_n_accepted": None}, None, 3, 0, 0, 1).draft_n is None


def test_a_streamed_chat_reply_cut_by_on_text_ends_there(server):
    from inference.backends.backend import CUT

    pieces: list[str] = []
    backend = EndpointBackend(server)
    completion = backend.complete(
        [Message(role="user", content="Count from 1 to 50, one number per line.")],
        sampling=Sampling(temperature=0, max_tokens=300),
        on_text=lambda delta: pieces.append(delta) or len(pieces) >= 4,
    )
    assert completion.finish_reason == CUT and completion.text == "".join(pieces) and len(pieces) == 4
    assert backend.complete([Message(role="user", content="Say hi.")], sampling=Sampling(max_tokens=5)).text
