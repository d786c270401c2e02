"""The embedded backend on the real Qwen2.5-Coder-1.5B model: streaming, timings, and KV-cache reuse."""

from __future__ import annotations

import pytest

from inference.backends.backend import BackendError, Message, Sampling

pytestmark = pytest.mark.model


def test_streams_real_code_and_reports_timings(embedded):
    streamed: list[str] = []
    messages = [
        Message(role="system", content="You are a coding assistant. Answer with code only."),
        Message(role="user", content="Write a Python function add(a, b) that returns a + b."),
    ]
    completion = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=60), on_text=streamed.append)
    assert "def add(a, b)" in completion.text
    assert "".join(streamed) == completion.text and len(streamed) > 3
    t = completion.timings
    assert 0 < t.completion_tokens <= 60 and t.prompt_tokens > 20
    assert t.tokens_per_second > 1 and t.predicted_ms > 0


def test_second_turn_reuses_the_cached_prefix(embedded):
    messages = [
        Message(role="system", content="You are a terse assistant."),
        Message(role="user", content="Name one prime number greater than 10."),
    ]
    first = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=20))
    messages += [first.as_message(), Message(role="user", content="And one more?")]
    told: list[tuple[int, int]] = []
    second = embedded.complete(
        messages, sampling=Sampling(temperature=0, max_tokens=20), on_prompt=lambda n, cached: told.append((n, cached))
    )
    t = second.timings
    assert told == [(t.prompt_tokens, t.cached_prompt_tokens)], "the prompt's size, told before it is read"
    # everything up to the new user turn (system, first question, the model's own reply) comes from cache
    assert t.cached_prompt_tokens >= first.timings.prompt_tokens + first.timings.completion_tokens - 2
    assert t.processed_prompt_tokens < 20


def test_context_overflow_is_a_clear_error(embedded):
    huge = Message(role="user", content="word " * 9000)
    with pytest.raises(BackendError, match="context holds 8192"):
        embedded.complete([huge], sampling=Sampling(max_tokens=8))


def test_missing_model_file_names_the_fix(tmp_path):
    from inference.backends.embedded import EmbeddedBackend

    with pytest.raises(BackendError, match="agent models pull"):
        EmbeddedBackend(tmp_path / "absent.gguf")


def test_agent_turns_reuse_the_generated_tokens_exactly(embedded):
    """The reply to our agent prompt spells `<bash>` as `<` + `bash`; re-tokenized it would be `<b` + `ash`
    and the cache would end there. The backend keeps the generated tokens, so the whole reply is reused."""
    from agent.evals.bench_workloads import session_workload

    turns = session_workload().turns
    messages = list(turns[0])
    first = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=400, seed=1))
    assert "<bash>" in first.text
    messages += [first.as_message(), *turns[1]]
    second = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=8, seed=1))
    reused = second.timings.cached_prompt_tokens
    assert reused >= first.timings.prompt_tokens + first.timings.completion_tokens - 2
    assert second.timings.processed_prompt_tokens < 200  # the observation and the template's framing


def test_a_reply_cut_by_on_text_stops_there_and_the_next_turn_still_reuses_the_cache(embedded):
    """`on_text` returning True ends the reply (the agent cuts replies that loop); generation stops, the
    completion says so, and the engine's state stays usable."""
    from inference.backends.backend import CUT

    pieces: list[str] = []

    def cut_after_five(delta: str) -> bool:
        pieces.append(delta)
        return len(pieces) >= 5

    messages = [
        Message(role="system", content="You are a coding assistant."),
        Message(role="user", content="Write a Python function that sorts a list with bubble sort."),
    ]
    cut = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=200), on_text=cut_after_five)
    assert cut.finish_reason == CUT and cut.text == "".join(pieces) and len(pieces) == 5
    assert cut.timings.completion_tokens <= 8
    after = embedded.complete(messages, sampling=Sampling(temperature=0, max_tokens=10))
    assert after.text.startswith(cut.text) and after.timings.cached_prompt_tokens >= after.timings.prompt_tokens - 2


def test_on_an_amx_cpu_the_model_loads_without_extra_buffer_types_and_answers(qwen_path, monkeypatch):
    """pip compiles llama-cpp-python for the CPU it runs on; with AMX its kernels killed the process on the
    first reply (exit 139 on a Sapphire Rapids VM). Here the AMX check says yes whatever this CPU is: the model
    loads with `use_extra_bufts` off and answers, and llama-cpp-python's defaults are as before afterwards."""
    import llama_cpp.llama_cpp as lib

    import inference.backends.embedded
    from inference.backends.embedded import EmbeddedBackend

    monkeypatch.setattr(inference.backends.embedded, "cpu_has_amx", lambda: True)
    backend = EmbeddedBackend(qwen_path, n_ctx=1024)
    try:
        assert backend.llm.model_params.use_extra_bufts is False
        messages = [Message(role="user", content="Write a Python function add(a, b) that returns a + b.")]
        assert "def add" in backend.complete(messages, sampling=Sampling(temperature=0, max_tokens=40)).text
    finally:
        backend.close()
    assert lib.llama_model_default_params().use_extra_bufts is True
