"""`EndpointBackend`: any OpenAI-compatible server (our llama-server, vLLM, SGLang, llama.cpp RPC).

Streams through the official `openai` client and reads llama-server's extra `timings` (prompt-cache reuse,
drafted and accepted tokens) from the final chunk when the server sends them.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai

from inference.backend import (
    BackendError,
    Completion,
    ContextOverflow,
    Message,
    OnText,
    Sampling,
    Timings,
    ToolCallRequest,
)


class EndpointBackend:
    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None, timeout: float = 600.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout  # the longest silence accepted from the engine (connects fail after 10 s)
        self.client = openai.OpenAI(base_url=self.base_url, api_key=api_key or "no-key", max_retries=0,
                                    timeout=httpx.Timeout(timeout, connect=10.0))
        self.model = model or self._first_model()
        self.name = f"endpoint:{self.base_url}"

    def _first_model(self) -> str:
        try:
            models = self.client.models.list().data
        except openai.APIConnectionError as exc:
            raise BackendError(
                f"cannot reach {self.base_url} ({exc}); start the server (for example `agent serve`) "
                "or pass the right --endpoint"
            ) from exc
        except openai.APIStatusError as exc:
            raise BackendError(f"{self.base_url}/models answered {exc.status_code}: {exc.message}") from exc
        if not models:
            raise BackendError(f"{self.base_url} serves no model")
        return models[0].id

    def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling | None = None,
        on_text: OnText | None = None,
    ) -> Completion:
        sampling = sampling or Sampling()
        request: dict[str, Any] = dict(
            model=self.model,
            messages=[m.to_openai() for m in messages],
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            extra_body={"top_k": sampling.top_k, "min_p": sampling.min_p, "cache_prompt": True},
        )
        if sampling.seed is not None:
            request["seed"] = sampling.seed
        if sampling.stop:
            request["stop"] = sampling.stop
        if tools:
            request["tools"] = tools
        try:
            return self._stream(request, on_text)
        except openai.APITimeoutError as exc:
            raise BackendError(f"{self.base_url} sent nothing for {self.timeout:.0f} s: the engine is hung or overloaded; "
                               "check its log, restart it, then resume the run") from exc
        except (openai.APIConnectionError, httpx.TransportError) as exc:  # httpx: the stream broke mid-reply
            raise BackendError(f"lost the connection to {self.base_url} ({type(exc).__name__}: {exc}); the engine "
                               "stopped or crashed: check its log, restart it, then resume the run") from exc
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error", body) if isinstance(body, dict) else {}
            if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
                raise ContextOverflow(f"{error.get('message', exc.message)}; start a new run or raise the context size") from exc
            raise BackendError(f"{self.base_url} answered {exc.status_code}: {exc.message}") from exc

    def _stream(self, request: dict[str, Any], on_text: OnText | None) -> Completion:
        started = time.perf_counter()
        first_at: float | None = None
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish_reason, usage, server_timings, deltas = None, None, None, 0
        for chunk in self.client.chat.completions.create(**request):
            extra = chunk.model_extra or {}
            server_timings = extra.get("timings", server_timings)
            usage = chunk.usage or usage
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content or delta.tool_calls:
                    deltas += 1
                    first_at = first_at or time.perf_counter()
                if delta.content:
                    text.append(delta.content)
                    if on_text:
                        on_text(delta.content)
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function:
                        slot["name"] += call.function.name or ""
                        slot["arguments"] += call.function.arguments or ""
                finish_reason = choice.finish_reason or finish_reason
        ended = time.perf_counter()
        return Completion(
            text="".join(text),
            tool_calls=[ToolCallRequest(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"]) for i, c in sorted(calls.items())],
            finish_reason=finish_reason,
            timings=_timings(server_timings, usage, deltas, started, first_at or ended, ended),
        )


def _timings(server: dict | None, usage: Any, deltas: int, started: float, first_at: float, ended: float) -> Timings:
    """Prefer the server's own measurements (llama-server `timings`); else usage and the wall clock; a server
    that sends no usage while streaming gets its completion tokens estimated as one per streamed delta."""
    if server:
        cached = int(server.get("cache_n", 0))
        return Timings(
            prompt_tokens=int(server.get("prompt_n", 0)) + cached,
            cached_prompt_tokens=cached,
            completion_tokens=int(server.get("predicted_n", 0)),
            prompt_ms=float(server.get("prompt_ms", 0.0)),
            predicted_ms=float(server.get("predicted_ms", 0.0)),
            draft_n=server.get("draft_n"),
            draft_accepted=server.get("draft_n_accepted"),
        )
    details = getattr(usage, "prompt_tokens_details", None)
    return Timings(
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        cached_prompt_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
        completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) if usage else deltas,
        prompt_ms=(first_at - started) * 1000,
        predicted_ms=(ended - first_at) * 1000,
    )
