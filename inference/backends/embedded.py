"""`EmbeddedBackend`: llama-cpp-python in-process, the zero-setup default.

The prompt is rendered with the model's own chat template and handed over as tokens, so we can measure how
many of them the KV cache already holds: llama-cpp-python keeps the longest common prefix of the previous
call, and the agent keeps its conversation append-only, so each turn only processes the new tokens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from inference.backends.backend import (
    CUT,
    BackendError,
    Completion,
    ContextOverflow,
    Message,
    OnPrompt,
    OnText,
    Sampling,
    Timings,
)
from inference.backends.token_history import TokenHistory, common_prefix
from inference.hardware import cpu_has_amx


class EmbeddedBackend:
    def __init__(self, model_path: Path, *, n_ctx: int = 16384, n_threads: int | None = None, verbose: bool = False):
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BackendError(f"llama-cpp-python is not installed ({exc}); run `pip install -e .` first") from exc
        if not Path(model_path).is_file():
            raise BackendError(f"model file {model_path} does not exist; fetch it with `agent models pull`")
        try:
            with extra_buffer_types(enabled=not cpu_has_amx()):
                self.llm = Llama(
                    model_path=str(model_path),
                    n_ctx=n_ctx,
                    n_threads=n_threads or os.cpu_count(),
                    n_batch=512,
                    verbose=verbose,
                )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"llama-cpp-python could not load {model_path}: {exc}") from exc
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise BackendError(f"{model_path} has no chat template in its metadata; use an instruct GGUF")
        vocab = self.llm._model
        self.formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(self.llm.token_eos()),
            bos_token=vocab.token_get_text(self.llm.token_bos()),
        )
        self.name = f"embedded:{Path(model_path).name}"
        self.n_ctx = n_ctx
        self.history = TokenHistory(self._tokenize, lambda ids: self.llm.detokenize(ids).decode("utf-8"))

    def close(self) -> None:
        """Free the model now (llama-cpp-python's own finaliser fails noisily at interpreter exit)."""
        self.llm.close()

    def render(self, messages: list[Message]) -> str:
        return self.formatter(messages=cast(Any, [m.to_openai() for m in messages])).prompt

    def _tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def cached_prefix(self, tokens: list[int]) -> int:
        """How many leading tokens of `tokens` are already in the KV cache."""
        return common_prefix(self.llm.input_ids[: self.llm.n_tokens], tokens)

    def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling | None = None,
        on_text: OnText | None = None,
        on_prompt: OnPrompt | None = None,
        on_call_text: OnText | None = None,  # native tool calls only, which this backend does not speak
    ) -> Completion:
        if tools:
            raise BackendError("the embedded backend speaks the text tool-call protocol only; do not send `tools`")
        sampling = sampling or Sampling()
        prompt_text = self.render(messages)
        tokens = self.history.tokens_for(prompt_text)
        if len(tokens) + 256 >= self.n_ctx:
            raise ContextOverflow(
                f"the conversation is {len(tokens)} tokens and the context holds {self.n_ctx}; "
                "raise n_ctx (config `n_ctx`) or start a new run"
            )
        cached = min(self.cached_prefix(tokens), len(tokens) - 1)  # the last token is always evaluated again
        if on_prompt:
            on_prompt(len(tokens), cached)
        generated = 0

        def count_token(_ids, _logits) -> bool:
            nonlocal generated
            generated += 1
            return False

        from llama_cpp import StoppingCriteriaList

        started = time.perf_counter()
        first_token_at: float | None = None
        parts: list[str] = []
        finish_reason = None
        stream = cast(
            "Generator[dict[str, Any], None, None]",
            self.llm.create_completion(
                tokens,
                max_tokens=sampling.max_tokens,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k,
                min_p=sampling.min_p,
                seed=sampling.seed,
                stop=sampling.stop or [],
                stream=True,
                stopping_criteria=StoppingCriteriaList([count_token]),
            ),
        )  # stream=True: a generator of chunks
        for chunk in stream:
            choice = chunk["choices"][0]
            if first_token_at is None:
                first_token_at = time.perf_counter()
            if choice["text"]:
                parts.append(choice["text"])
                if on_text and on_text(choice["text"]):
                    stream.close()  # stops generating
                    finish_reason = CUT
                    break
            finish_reason = choice.get("finish_reason") or finish_reason
        ended = time.perf_counter()
        self.history.remember(
            prompt_text, tokens, self.llm.input_ids[len(tokens) : self.llm.n_tokens].tolist(), "".join(parts)
        )
        first_token_at = first_token_at or ended
        return Completion(
            text="".join(parts),
            finish_reason=finish_reason,
            timings=Timings(
                prompt_tokens=len(tokens),
                cached_prompt_tokens=cached,
                completion_tokens=generated,
                prompt_ms=(first_token_at - started) * 1000,
                predicted_ms=(ended - first_token_at) * 1000,
            ),
        )


@contextmanager
def extra_buffer_types(enabled: bool) -> Iterator[None]:
    """Models loaded meanwhile use ggml's extra CPU buffer types (weight repacking, AMX) only when `enabled`.
    Why: pip compiles llama-cpp-python for this CPU, and on one with AMX its AMX kernels crash the process on
    the first reply (a general protection fault, inference/patches/amx-tile-config.patch); `Llama()` has no
    argument for llama.cpp's `use_extra_bufts`, so its default model parameters are changed while it loads."""
    import llama_cpp.llama_cpp as lib

    defaults = lib.llama_model_default_params
    if enabled:
        yield
        return

    def without_extra_buffer_types() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = without_extra_buffer_types
    try:
        yield
    finally:
        lib.llama_model_default_params = defaults
