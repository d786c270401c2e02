"""Figures from any engine's Prometheus `/metrics`, in one vocabulary: prompt tokens (and how many came from the
prompt cache), generated tokens, drafted and accepted draft tokens.

llama-server serves `llamacpp:*` (with `--metrics`, which our profiles pass), vLLM `vllm:*` (always), SGLang
`sglang:*` (with `--enable-metrics`, which our SGLang profiles pass). The counters are cumulative and cover the
whole server, so a run's figures are the difference of two snapshots (`Figures.minus`); requests from other
clients between the two are in it too. The names were read from each engine's source: llama.cpp
`tools/server/server-task.cpp`, vLLM 0.33.0 `vllm/v1/metrics/loggers.py` and `vllm/v1/spec_decode/metrics.py`,
SGLang 0.5.23 `sglang/srt/observability/metrics_collector.py`.
"""

from __future__ import annotations

from typing import Literal

import httpx
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from inference.backends.backend import Timings

Engine = Literal["llama-server", "vllm", "sglang"]
PREFIXES: dict[str, Engine] = {"llamacpp:": "llama-server", "vllm:": "vllm", "sglang:": "sglang"}


class Figures(BaseModel):
    """Cumulative counts (a snapshot) or their difference (a run); None where the engine does not report it."""

    engine: Engine
    prompt_tokens: float | None = None  # every prompt token, cached ones included
    cached_prompt_tokens: float | None = None  # prompt tokens served from the prompt (prefix) cache
    generated_tokens: float | None = None
    drafted_tokens: float | None = None
    accepted_tokens: float | None = None
    verify_steps: float | None = None  # target passes that checked a draft
    requests: float | None = None  # finished requests (SGLang; used to derive acceptance)
    draft_window: float | None = None  # SGLang: tokens per verify step (the drafted ones + the last accepted)

    @property
    def cache_hit_rate(self) -> float | None:
        if self.prompt_tokens and self.cached_prompt_tokens is not None:
            return self.cached_prompt_tokens / self.prompt_tokens
        return None

    @property
    def acceptance(self) -> float | None:
        if self.drafted_tokens and self.accepted_tokens is not None:
            return self.accepted_tokens / self.drafted_tokens
        return None

    def minus(self, before: Figures) -> Figures:
        """What happened between `before` and this snapshot. SGLang counts no drafted or accepted tokens: each
        request's first token comes from the prompt and each verify step yields its accepted tokens plus one, so
        accepted = generated - verify steps - requests, and drafted = verify steps x (window - 1)."""
        fields = (
            "prompt_tokens cached_prompt_tokens generated_tokens drafted_tokens accepted_tokens verify_steps requests"
        )
        delta = {f: _minus(getattr(self, f), getattr(before, f)) for f in fields.split()}
        result = Figures(engine=self.engine, draft_window=self.draft_window, **delta)
        steps, generated, requests = result.verify_steps, result.generated_tokens, result.requests
        if result.drafted_tokens is None and steps and self.draft_window:
            result.drafted_tokens = steps * (self.draft_window - 1)
        if result.accepted_tokens is None and steps and generated is not None and requests is not None:
            result.accepted_tokens = max(0.0, generated - steps - requests)
        return result


def _minus(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def parse(text: str) -> Figures | None:
    """The figures of one `/metrics` answer; None when it is no engine we know. Counters are summed over their
    label sets (engines, cache sources, streaming or not); gauges take their largest value (one per rank)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if family.type == "counter":
                values[sample.name] = values.get(sample.name, 0.0) + sample.value
            else:
                values[sample.name] = max(values.get(sample.name, sample.value), sample.value)
    engine = next((e for p, e in PREFIXES.items() if any(name.startswith(p) for name in values)), None)
    if engine is None:
        return None
    get = values.get
    if engine == "llama-server":  # its prompt counter leaves the cached tokens out
        processed, cached = get("llamacpp:prompt_tokens_total"), get("llamacpp:prompt_tokens_cached_total")
        return Figures(
            engine=engine,
            prompt_tokens=None if processed is None or cached is None else processed + cached,
            cached_prompt_tokens=cached,
            generated_tokens=get("llamacpp:tokens_predicted_total"),
            drafted_tokens=get("llamacpp:spec_decode_num_draft_tokens_total"),
            accepted_tokens=get("llamacpp:spec_decode_num_accepted_tokens_total"),
            verify_steps=get("llamacpp:spec_decode_num_drafts_total"),
        )
    if engine == "vllm":
        cached = get("vllm:prompt_tokens_cached_total", get("vllm:prefix_cache_hits_total"))
        return Figures(
            engine=engine,
            prompt_tokens=get("vllm:prompt_tokens_total"),
            cached_prompt_tokens=cached,
            generated_tokens=get("vllm:generation_tokens_total"),
            drafted_tokens=get("vllm:spec_decode_num_draft_tokens_total"),
            accepted_tokens=get("vllm:spec_decode_num_accepted_tokens_total"),
            verify_steps=get("vllm:spec_decode_num_drafts_total"),
        )
    prompt = get("sglang:prompt_tokens_total")
    return Figures(
        engine=engine,
        prompt_tokens=prompt,
        # counted per cache source, and only once a request had a hit: none yet is 0 when prompts were counted
        cached_prompt_tokens=get("sglang:cached_tokens_total", None if prompt is None else 0.0),
        generated_tokens=get("sglang:generation_tokens_total"),
        verify_steps=get("sglang:spec_verify_calls_total"),
        requests=get("sglang:num_requests_total"),
        draft_window=get("sglang:spec_num_draft_tokens"),
    )


def read(http: httpx.Client, path: str = "/metrics") -> Figures | None:
    """A snapshot from a running server (its base URL in `http`); None when it serves no metrics we know."""
    try:
        response = http.get(path)
        return parse(response.text) if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def with_figures(timings: Timings, run: Figures) -> Timings:
    """The engine's per-request timings, completed from a snapshot difference where they lack a figure (a
    server that sends no llama-server `timings`): drafted/accepted tokens and prompt-cache hits."""
    update: dict[str, int] = {}
    if timings.draft_n is None and run.drafted_tokens:
        update["draft_n"] = int(run.drafted_tokens)
        update["draft_accepted"] = int(run.accepted_tokens or 0)
    if not timings.cached_prompt_tokens and run.cached_prompt_tokens:
        update["cached_prompt_tokens"] = min(int(run.cached_prompt_tokens), timings.prompt_tokens)
    return timings.model_copy(update=update) if update else timings
