"""One set of figures from each engine's /metrics: exposition text of llama-server, vLLM and SGLang (see each
file's header for where it comes from) parsed with prometheus_client, two snapshots differenced, and the
figures completing a reply's timings: through EndpointBackend against a stand-in for vLLM's HTTP surface (no
GPU here to run vLLM), and against a real llama-server (needs the model: slow)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import httpx
import pytest

from inference.backends.backend import Message, Sampling, Timings
from inference.backends.metrics import Figures, parse, read, with_figures

DATA = Path(__file__).parents[1] / "data" / "metrics"


def snapshot(name: str) -> Figures:
    figures = parse((DATA / f"{name}.prom").read_text())
    assert figures is not None, name
    return figures


@pytest.mark.parametrize("name", ["llama-server", "vllm", "sglang"])  # not `engine`: that fixture builds one
def test_each_engine_gives_the_same_figures_for_the_same_turn(name):
    """Each pair of samples is one server before and after a 1000-token prompt (960 of it cached) and a 300-token
    reply: every engine's names map to the same prompt, cache and generation figures."""
    run = snapshot(f"{name}-after").minus(snapshot(f"{name}-before"))
    assert run.engine == name
    assert (run.prompt_tokens, run.cached_prompt_tokens, run.generated_tokens) == (1000, 960, 300)
    assert run.cache_hit_rate == pytest.approx(0.96)


def test_drafted_and_accepted_tokens_per_engine():
    vllm = snapshot("vllm-after").minus(snapshot("vllm-before"))
    assert (vllm.drafted_tokens, vllm.accepted_tokens, vllm.verify_steps) == (900, 240, 60)  # its own counters
    llama = snapshot("llama-server-after").minus(snapshot("llama-server-before"))
    assert (llama.drafted_tokens, llama.accepted_tokens, llama.verify_steps) == (640, 410, 80)
    # SGLang counts verify steps, not tokens: 60 steps of a 16-token block draft 15 tokens each; 300 tokens came
    # from 60 steps' bonus tokens, 1 request's first token, and 239 accepted drafts
    sglang = snapshot("sglang-after").minus(snapshot("sglang-before"))
    assert (sglang.drafted_tokens, sglang.accepted_tokens, sglang.requests) == (900, 239, 1)
    assert sglang.acceptance == pytest.approx(239 / 900)


def test_the_engines_published_examples_parse():
    sglang = snapshot("sglang-docs")  # no speculative decoding on that server: no drafting figures
    assert (sglang.engine, sglang.prompt_tokens, sglang.generated_tokens) == ("sglang", 8128902, 7557572)
    assert sglang.drafted_tokens is None and sglang.accepted_tokens is None
    vllm = snapshot("vllm-docs")  # a histogram only: the engine is known, its figures are not
    assert vllm.engine == "vllm" and vllm.prompt_tokens is None and vllm.minus(vllm).prompt_tokens is None


def test_metrics_of_no_known_engine_are_none():
    assert parse("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n") is None
    assert parse("") is None


def test_figures_fill_only_what_the_reply_lacks():
    run = snapshot("vllm-after").minus(snapshot("vllm-before"))
    bare = Timings(prompt_tokens=1000, completion_tokens=300)  # what an OpenAI stream's usage gives
    filled = with_figures(bare, run)
    assert (filled.draft_n, filled.draft_accepted, filled.cached_prompt_tokens) == (900, 240, 960)
    own = Timings(prompt_tokens=1000, cached_prompt_tokens=500, completion_tokens=300, draft_n=10, draft_accepted=5)
    assert with_figures(own, run) == own  # the engine's per-request figures win
    idle = Figures(engine="vllm", drafted_tokens=0, accepted_tokens=0)
    assert with_figures(bare, idle).draft_n is None  # nothing drafted stays "no drafting", not 0 of 0


def test_a_server_without_metrics_reads_as_none():
    assert read(httpx.Client(base_url="http://127.0.0.1:9", timeout=1)) is None


@pytest.mark.slow
@pytest.mark.model
def test_real_llama_server_metrics_match_its_own_timings(engine, qwen_path, tmp_path):
    """The delta of llama-server's /metrics around one reply equals what the reply's timings say."""
    from inference.backends.endpoint import EndpointBackend
    from inference.profiles import BUILTIN_PROFILES
    from inference.server import ManagedServer

    profile = BUILTIN_PROFILES["qwen-cpu-ngram"]  # renders --metrics; n-gram drafts on a repetitive reply
    with ManagedServer(engine, profile, log_dir=tmp_path, model_paths={profile.target: qwen_path}) as server:
        backend = EndpointBackend(server.url)
        prompt = "Repeat this line five times: the quick brown fox jumps over the lazy dog."
        backend.complete([Message(role="user", content="Say OK.")], sampling=Sampling(max_tokens=4, temperature=0))
        before = read(backend.http)
        completion = backend.complete(
            [Message(role="user", content=prompt)], sampling=Sampling(max_tokens=120, temperature=0)
        )
        after = read(backend.http)
    assert before is not None and after is not None and before.engine == "llama-server"
    run, t = after.minus(before), completion.timings
    assert run.generated_tokens == t.completion_tokens
    assert run.prompt_tokens == t.prompt_tokens and run.cached_prompt_tokens == t.cached_prompt_tokens
    assert run.drafted_tokens == (t.draft_n or 0) and run.accepted_tokens == (t.draft_accepted or 0)


class _VllmStandIn(BaseHTTPRequestHandler):
    """vLLM's HTTP surface for one streamed reply: /v1/models, /metrics (the samples: before the reply, then
    after it), and a chat stream whose usage says 1000 prompt and 300 generated tokens, with no `timings`."""

    replied = False

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode())
        elif self.path == "/metrics":
            name = "vllm-after" if type(self).replied else "vllm-before"
            self._send(200, (DATA / f"{name}.prom").read_bytes(), "text/plain; version=0.0.4")
        else:
            self._send(404, b"{}")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        chunks = [
            dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": "hello"}}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            dict(base, choices=[], usage={"prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300}),
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        type(self).replied = True
        self._send(200, body.encode(), "text/event-stream")


def test_endpoint_backend_fills_a_vllm_replys_figures_from_its_metrics():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _VllmStandIn)
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        from inference.backends.endpoint import EndpointBackend

        backend = EndpointBackend(f"http://127.0.0.1:{server.server_port}/v1")
        assert backend.history is None and backend.metrics  # not llama-server: figures come from /metrics
        t = backend.complete([Message(role="user", content="hi")], sampling=Sampling(max_tokens=300)).timings
    finally:
        server.shutdown()
    assert (t.prompt_tokens, t.completion_tokens) == (1000, 300)  # from the stream's usage
    assert (t.cached_prompt_tokens, t.draft_n, t.draft_accepted) == (960, 900, 240)  # from /metrics
