"""llama-server built from source, started from profiles with the real Qwen pair: speculation is lossless
and drafts, the agent runs against it, failures name their cause, and it binds safely."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from agent.settings.config import Config
from agent.workflows.runs import new_project
from inference.backends.backend import BackendError, Message, Sampling
from inference.backends.endpoint import EndpointBackend
from inference.background import background_status, stop_background
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.server import ManagedServer, ServerError

pytestmark = pytest.mark.model

PROMPT = [
    Message(
        role="user",
        content="Write a Python function that checks whether a string is a palindrome, "
        "with a docstring and three asserts. Code only.",
    )
]
GREEDY = Sampling(temperature=0, max_tokens=160, seed=1)


@pytest.fixture(scope="module")
def baseline(engine, qwen_path):
    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"]) as server:
        yield server


def test_baseline_serves_with_timings(baseline):
    completion = EndpointBackend(baseline.url).complete(PROMPT, sampling=GREEDY)
    assert "def " in completion.text
    t = completion.timings
    assert t.completion_tokens > 20 and t.prompt_tokens > 10 and t.tokens_per_second > 1
    assert t.draft_n is None  # nothing drafted: the key is absent, not 0


def test_agent_turns_reuse_the_generated_tokens_exactly(baseline):
    """Through llama-server's `/completion` with token ids, the next turn reuses the whole last reply; through
    chat completions the re-tokenized reply (`<b`+`ash` where the model made `<`+`bash`) is processed again."""
    from agent.evals.bench_workloads import session_workload

    turns = session_workload().turns
    processed = {}
    for path in ("tokens", "chat"):
        backend = EndpointBackend(baseline.url)
        assert backend.history is not None, "llama-server must be recognised"
        if path == "chat":
            backend.history = None
        messages = list(turns[0])
        first = backend.complete(messages, sampling=Sampling(temperature=0, max_tokens=400, seed=1))
        assert "<bash>" in first.text and first.finish_reason == "stop"
        messages += [first.as_message(), *turns[1]]
        told: list[tuple[int, int]] = []
        second = backend.complete(
            messages,
            sampling=Sampling(temperature=0, max_tokens=8, seed=1),
            on_prompt=lambda n, cached, told=told: told.append((n, cached)),
        )
        if path == "tokens":  # the prompt's size told before it is sent; what the server's slot still holds
            ((size, cached),) = told
            assert size == second.timings.prompt_tokens and abs(cached - second.timings.cached_prompt_tokens) <= 1
        else:
            assert told == [], "a chat request's tokens are the server's to count: nothing is guessed"
        new_tokens = second.timings.prompt_tokens - first.timings.prompt_tokens - first.timings.completion_tokens
        processed[path] = second.timings.processed_prompt_tokens - new_tokens
        processed[path + " text"] = first.text
    assert processed["tokens text"] == processed["chat text"], "both paths render the same prompt"
    assert processed["tokens"] <= 1, "only the end-of-turn token may be evaluated again"
    assert processed["chat"] > 10, "re-tokenized history splits differently (else this test proves nothing)"


def greedy_with_logprobs(url: str) -> tuple[str, list[dict]]:
    body = {
        "messages": [m.to_openai() for m in PROMPT],
        "temperature": 0,
        "max_tokens": GREEDY.max_tokens,
        "seed": 1,
        "logprobs": True,
        "top_logprobs": 2,
    }
    reply = httpx.post(f"{url}/chat/completions", json=body, timeout=600).json()["choices"][0]
    return reply["message"]["content"], reply["logprobs"]["content"]


def first_divergence(reference: str, tokens: list[dict], other: str) -> tuple[int, int] | None:
    """(token index, char offset) of the reference token where `other` first differs; None if identical."""
    common = next((i for i, (a, b) in enumerate(zip(reference, other)) if a != b), min(len(reference), len(other)))
    if reference == other:
        return None
    offset = 0
    for index, token in enumerate(tokens):
        if offset + len(token["token"]) > common:
            return index, offset
        offset += len(token["token"])
    return len(tokens), offset


def test_draft_model_speculation_drafts_and_is_lossless(engine, baseline):
    """Greedy output under speculation equals the baseline's, except where the target itself is at a
    floating-point tie: a batched verify may then pick the other of two near-equal tokens (seen on CPU)."""
    reference, tokens = greedy_with_logprobs(baseline.url)
    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu-draft"]) as server:
        speculative = EndpointBackend(server.url).complete(PROMPT, sampling=GREEDY)
    t = speculative.timings
    assert t.draft_n and t.draft_n > 0 and t.draft_accepted and 0 < t.draft_accepted <= t.draft_n
    print(f"\nbaseline vs draft-model: accepted {t.draft_accepted}/{t.draft_n}, {t.tokens_per_second:.1f} tok/s")
    divergence = first_divergence(reference, tokens, speculative.text)
    if divergence is None:
        return
    index, offset = divergence
    assert index < len(tokens), "speculative output is a strict prefix/extension of the baseline"
    best, second = tokens[index]["top_logprobs"][:2]
    print(
        f"diverged at token {index}: {best['token']!r} {best['logprob']:.3f} vs {second['token']!r} {second['logprob']:.3f}"
    )
    assert best["logprob"] - second["logprob"] < 0.05, "speculation changed a token that was not a near-tie"
    assert speculative.text[offset:].startswith(second["token"])


def test_agent_completes_a_task_against_a_profile_server(engine, tmp_path):
    result = new_project(
        tmp_path / "p",
        "A Python module greet.py with a function greet(name) that returns 'Hello, ' + name + '!', with a pytest test.",
        Config(profile="qwen-cpu", max_steps=10),
    )
    namespace: dict = {}
    exec((tmp_path / "p" / "greet.py").read_text(), namespace)
    assert namespace["greet"]("Ada") == "Hello, Ada!"
    assert result.run.stats.cache_reuse > 0.5


def test_a_reply_cut_by_on_text_stops_the_server_generating(engine, tmp_path):
    """llama-server's /completion stream (token-exact history): cut by `on_text`, the connection is closed, the
    server stops generating (its slot is free for the next request) and the next turn reuses the prompt cache."""
    from inference.backends.backend import CUT

    pieces: list[str] = []
    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], log_dir=tmp_path) as server:
        backend = EndpointBackend(server.url)
        messages = [Message(role="user", content="Count from 1 to 200, one number per line.")]
        cut = backend.complete(
            messages,
            sampling=Sampling(temperature=0, max_tokens=600),
            on_text=lambda delta: pieces.append(delta) or len(pieces) >= 6,
        )
        assert cut.finish_reason == CUT and cut.text == "".join(pieces)
        started = time.monotonic()
        again = backend.complete(messages, sampling=Sampling(temperature=0, max_tokens=8))
        assert again.text and time.monotonic() - started < 60, "the cut request no longer holds the slot"
        assert again.timings.cached_prompt_tokens > 0


def test_bad_model_file_is_reported_from_the_log(engine, tmp_path):
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"GGUF" + os.urandom(4096))
    with pytest.raises(ProfileError, match="broken.gguf is not a readable GGUF file"):  # the plan reads the header
        ManagedServer(
            engine, BUILTIN_PROFILES["qwen-cpu"], model_paths={"qwen2.5-coder-1.5b": bogus}, log_dir=tmp_path
        ).start(timeout=60)
    # past the plan (no memory check), llama-server's own failure is read from its log
    server = ManagedServer(
        engine,
        BUILTIN_PROFILES["qwen-cpu"],
        model_paths={"qwen2.5-coder-1.5b": bogus},
        log_dir=tmp_path,
        check_memory=False,
    )
    with pytest.raises(ServerError) as error:
        server.start(timeout=60)
    message = str(error.value)
    assert "exited with code" in message and "could not be loaded" in message and str(server.log_path) in message
    assert not server.alive()


def test_public_host_needs_an_api_key_and_the_key_is_enforced(engine, tmp_path):
    with pytest.raises(ProfileError, match="without an API key"):
        ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], host="0.0.0.0")
    with ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], api_key="s3cret", log_dir=tmp_path) as server:
        with pytest.raises(BackendError, match="401"):
            EndpointBackend(server.url, api_key="wrong").complete(PROMPT, sampling=Sampling(max_tokens=4))
        assert EndpointBackend(server.url, api_key="s3cret").complete(PROMPT, sampling=Sampling(max_tokens=4)).text
        assert "s3cret" not in server.log_path.read_text() and "s3cret" not in " ".join(server.argv())


def test_background_server_status_and_stop(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    server = ManagedServer(engine, BUILTIN_PROFILES["qwen-cpu"], log_dir=tmp_path).start(detach=True)
    state, alive = background_status()
    assert alive and state.url == server.url and state.pid == server.process.pid
    stop_background()
    server.process.wait(timeout=20)
    assert background_status() == (None, False)


def test_sigterm_to_agent_serve_stops_its_server(engine, qwen_path):
    """`kill` of a foreground `agent serve` must not leave llama-server running on its own."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    agent = subprocess.Popen(
        [str(Path(sys.executable).parent / "agent"), "serve", "--profile", "qwen-cpu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = agent.stdout.readline().strip()  # printed once the server answers /health
        assert url.startswith("http://127.0.0.1:"), url
        children = subprocess.run(["pgrep", "-P", str(agent.pid)], capture_output=True, text=True).stdout.split()
        assert len(children) == 1
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(30) == 128 + signal.SIGTERM
        with pytest.raises(httpx.HTTPError):
            httpx.get(url.removesuffix("/v1") + "/health", timeout=2)
        with pytest.raises(ProcessLookupError):
            os.kill(int(children[0]), 0)
    finally:
        agent.kill()


def test_serve_stop_kills_only_the_process_its_state_file_recorded(tmp_path, monkeypatch):
    """The state file names a PID; by the time of `--stop` that PID may be another process (reused, or the file
    was edited): only the process recorded, with its start time, is stopped."""
    import json
    import subprocess

    import psutil
    from typer.testing import CliRunner

    from agent.cli import app
    from inference.background import state_file

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    state_file().parent.mkdir(parents=True)
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)  # not our server
    ours = subprocess.Popen(["sleep", "60"], start_new_session=True)  # stands in for a recorded server
    try:
        base = {"url": "http://127.0.0.1:9", "profile": "p", "log": "x"}
        for state in [
            {**base, "pid": bystander.pid},  # a file without start times (or written by hand)
            {**base, "pid": bystander.pid, "started": {str(bystander.pid): 12.0}},  # a PID reused since
            {**base, "pid": bystander.pid, "workers": [bystander.pid]},
        ]:
            state_file().write_text(json.dumps(state))
            assert background_status()[1] is False
            result = CliRunner().invoke(app, ["serve", "--stop"])
            assert result.exit_code == 0 and "no background server" in result.output, result.output
            time.sleep(0.3)
            assert bystander.poll() is None, "a process that is not the recorded server was killed"
            assert not state_file().exists()

        state_file().write_text(
            json.dumps({**base, "pid": ours.pid, "started": {str(ours.pid): psutil.Process(ours.pid).create_time()}})
        )
        assert background_status()[1] is True
        assert "stopped http://127.0.0.1:9 (p)" in CliRunner().invoke(app, ["serve", "--stop"]).output
        assert ours.wait(timeout=20) is not None
    finally:
        for process in (bystander, ours):
            process.kill()
            process.wait()
